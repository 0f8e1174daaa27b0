-- Every index an issuance writes costs a page in each commit of the group
-- (write-ahead log frame, then checkpoint). Three of them indexed rows that
-- no query reads:
--
-- authzs_pending (account_id, status, expires) served CountPendingAuthzs,
-- which nothing calls: the pending-authorizations limit counts in the rate
-- limiter's own store.
DROP INDEX authzs_pending;

-- FindValidAuthz reads valid authorizations only. Pending ones (most rows
-- while an order is in flight) stay out of the index, and an authorization
-- enters it once, when it becomes valid.
DROP INDEX authzs_reuse;
CREATE INDEX authzs_valid ON authzs (account_id, ident_type, ident_value, wildcard, expires)
    WHERE status = 'valid';

-- certificates_name_set (name_set, issued_at) was made for a limit on
-- certificates per set of names, which counts in the rate limiter's store
-- instead. No query reads it: the inventory's search matches name_set with a
-- leading wildcard, and RecentNames reads an account's certificates by
-- certificates_account_issued.
DROP INDEX certificates_name_set;

-- Claiming validations to resume reads processing challenges only; the
-- challenges an order never uses stay pending forever.
DROP INDEX challenges_status;
CREATE INDEX challenges_processing ON challenges (updated_at, id) WHERE status = 'processing';
