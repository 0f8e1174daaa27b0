-- The CRL reads only the serial, revocation time and reason of the
-- revoked, unexpired certificates. certificates_revoked indexed not_after
-- alone, so each listed certificate read its whole row (DER included);
-- this index covers the query (EXPLAIN QUERY PLAN: USING COVERING INDEX),
-- and is still partial, so issuing never maintains it.
DROP INDEX certificates_revoked;
CREATE INDEX certificates_revoked ON certificates (not_after, serial, revoked_at, reason) WHERE revoked_at IS NOT NULL;

-- The renewal planner rebuilds its aggregates from the unrevoked
-- certificates' windows, in pages ordered by (renewal_end, serial): this
-- index covers that read, so it never visits a row (revoked_at, always
-- NULL here, is in it because SQLite covers a query only with every
-- column its WHERE names). It replaces the unread index on renewal_start,
-- so an issuance still writes one index here; a revocation takes the
-- certificate out of it.
DROP INDEX certificates_renewal;
CREATE INDEX certificates_renewal ON certificates (renewal_end, serial, account_id, renewal_start, revoked_at) WHERE revoked_at IS NULL;
