-- The CRL reads only the serial, revocation time and reason of the
-- revoked, unexpired certificates. certificates_revoked indexed not_after
-- alone, so each listed certificate read its whole row (DER included);
-- this index covers the query (EXPLAIN QUERY PLAN: USING COVERING INDEX),
-- and is still partial, so issuing never maintains it.
DROP INDEX certificates_revoked;
CREATE INDEX certificates_revoked ON certificates (not_after, serial, revoked_at, reason) WHERE revoked_at IS NOT NULL;
