-- Credential names are compared without regard to case: "ADMIN" is not a
-- name of its own beside "admin". name_lower is the name in lower case,
-- unique, so that no store holds two names equal but for case. A store
-- that already holds such names keeps every row: the oldest of each group
-- (ties by name, byte order) gets its name_lower, the others NULL, which
-- the unique index allows more than once. The admin listener leaves those
-- out (web/admin, CredentialSet.Refresh, by the same rule) and names them
-- in its log; the operator revokes them by name.
ALTER TABLE admin_credentials ADD COLUMN name_lower TEXT;
UPDATE admin_credentials SET name_lower = lower(name)
WHERE NOT EXISTS (
    SELECT 1 FROM admin_credentials AS older
    WHERE lower(older.name) = lower(admin_credentials.name)
      AND (older.created_at < admin_credentials.created_at
           OR (older.created_at = admin_credentials.created_at AND older.name < admin_credentials.name)));
CREATE UNIQUE INDEX admin_credentials_name_lower ON admin_credentials (name_lower);
