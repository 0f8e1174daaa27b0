-- The CRL reads only the serial, revocation time and reason of the
-- revoked, unexpired certificates; the index now carries them (INCLUDE),
-- so the CRL is an index-only scan that never reads a row's DER. Still
-- partial, so issuing never maintains it.
DROP INDEX certificates_revoked;
CREATE INDEX certificates_revoked ON certificates (not_after) INCLUDE (serial, revoked_at, reason) WHERE revoked_at IS NOT NULL;
