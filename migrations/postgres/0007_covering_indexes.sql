-- The CRL reads only the serial, revocation time and reason of the
-- revoked, unexpired certificates; the index now carries them (INCLUDE),
-- so the CRL is an index-only scan that never reads a row's DER. Still
-- partial, so issuing never maintains it.
DROP INDEX certificates_revoked;
CREATE INDEX certificates_revoked ON certificates (not_after) INCLUDE (serial, revoked_at, reason) WHERE revoked_at IS NOT NULL;

-- The renewal planner rebuilds its aggregates from the unrevoked
-- certificates' windows, in pages ordered by (renewal_end, serial): an
-- index-only scan of this index. It replaces the unread index on
-- renewal_start.
DROP INDEX certificates_renewal;
CREATE INDEX certificates_renewal ON certificates (renewal_end, serial) INCLUDE (account_id, renewal_start) WHERE revoked_at IS NULL;
