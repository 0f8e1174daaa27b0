-- The administrators' named credentials (acme.AdminCredential), shared by
-- every process of the store: a name, a role (read or operate), the
-- SHA-256 of the token (hex; never the token), when and by whom it was
-- added. A revocation deletes the row.
CREATE TABLE admin_credentials (
    name       TEXT    PRIMARY KEY,
    role       TEXT    NOT NULL,
    sha256     TEXT    NOT NULL UNIQUE,
    created_at INTEGER NOT NULL,
    created_by TEXT    NOT NULL
) STRICT, WITHOUT ROWID;
