-- Credential names are compared without regard to case, as in sqlite (see
-- there, 0018): name_lower, unique; NULL for a name that an older one
-- equals but for case.
ALTER TABLE admin_credentials ADD COLUMN name_lower text COLLATE "C";
UPDATE admin_credentials SET name_lower = lower(name)
WHERE NOT EXISTS (
    SELECT 1 FROM admin_credentials AS older
    WHERE lower(older.name) = lower(admin_credentials.name)
      AND (older.created_at < admin_credentials.created_at
           OR (older.created_at = admin_credentials.created_at AND older.name < admin_credentials.name)));
CREATE UNIQUE INDEX admin_credentials_name_lower ON admin_credentials (name_lower);
