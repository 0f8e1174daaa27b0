-- Incident mode: a certificate whose ARI window was moved into the past so
-- that its client renews now; its replacement is exempt from the account
-- limits (docs/rate-limits.md).
ALTER TABLE certificates ADD COLUMN renew_now INTEGER NOT NULL DEFAULT 0;
