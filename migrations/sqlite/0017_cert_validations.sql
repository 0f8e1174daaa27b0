-- How each name of a certificate was validated (acme.NameValidation:
-- the name, the method, the authorization, when, and whether it was
-- reused), written with the certificate in the transaction that stores
-- it: a JSON array in the order of names. NULL for the certificates
-- issued before this migration, whose validations are unknown.
ALTER TABLE certificates ADD COLUMN validations TEXT;
