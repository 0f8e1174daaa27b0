-- How each name of a certificate was validated, as in sqlite (see there):
-- a JSON array, NULL for the certificates issued before it.
ALTER TABLE certificates ADD COLUMN validations text;
