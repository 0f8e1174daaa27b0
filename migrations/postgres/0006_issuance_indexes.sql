-- The same narrowing as sqlite 0009: indexes that every issuance writes,
-- limited to the rows their queries read.
--
-- authzs_pending served CountPendingAuthzs, which nothing calls: the
-- pending-authorizations limit counts in the rate limiter's own store.
DROP INDEX authzs_pending;

-- FindValidAuthz reads valid authorizations only.
DROP INDEX authzs_reuse;
CREATE INDEX authzs_valid ON authzs (account_id, ident_type, ident_value, wildcard, expires)
    WHERE status = 'valid';

-- certificates_name_set: no query reads it (the limit on certificates per
-- set of names counts in the rate limiter's store).
DROP INDEX certificates_name_set;

-- Claiming validations to resume reads processing challenges only.
DROP INDEX challenges_status;
CREATE INDEX challenges_processing ON challenges (updated_at, id) WHERE status = 'processing';
