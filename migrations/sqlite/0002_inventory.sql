-- Indexes for the administrators' inventory (weir certs list, the
-- dashboard's issuance chart): certificates by issue time and by account
-- in issue order, authorizations of an account by creation time.
CREATE INDEX certificates_issued ON certificates (issued_at);
CREATE INDEX certificates_account_issued ON certificates (account_id, issued_at);
CREATE INDEX authzs_account_created ON authzs (account_id, created_at);
