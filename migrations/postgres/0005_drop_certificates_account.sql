-- certificates_account (account_id) is a prefix of certificates_account_issued
-- (account_id, issued_at), which serves every query by account as well:
-- issuing no longer maintains both.
DROP INDEX certificates_account;
