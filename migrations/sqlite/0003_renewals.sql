-- Renewals and enrollment: the profile an order asked for and its
-- certificate was issued under, the External Account Binding key an
-- account was created with, and each certificate's ARI renewal window
-- (RFC 9773), assigned at issuance and moved by incident mode.
ALTER TABLE orders ADD COLUMN profile TEXT NOT NULL DEFAULT '';
ALTER TABLE accounts ADD COLUMN eab_key_id TEXT NOT NULL DEFAULT '';
ALTER TABLE certificates ADD COLUMN profile TEXT NOT NULL DEFAULT '';
ALTER TABLE certificates ADD COLUMN renewal_start INTEGER NOT NULL DEFAULT 0;
ALTER TABLE certificates ADD COLUMN renewal_end INTEGER NOT NULL DEFAULT 0;

-- A certificate is replaced at most once (RFC 9773 §5: alreadyReplaced):
-- one order that replaces it may become valid.
CREATE UNIQUE INDEX orders_replaces_valid ON orders (replaces) WHERE replaces != '' AND status = 'valid';
CREATE INDEX orders_replaces ON orders (replaces) WHERE replaces != '';
-- The renewal scheduler counts windows per interval.
CREATE INDEX certificates_renewal ON certificates (renewal_start);
