-- External Account Binding keys (RFC 8555 §7.3.4). An administrator
-- creates a key (weir eab create); a new-account request whose
-- externalAccountBinding is MACed with it binds it, once: CreateAccount
-- sets bound_account in the same transaction that inserts the account,
-- compare-and-set on bound_account IS NULL AND revoked_at IS NULL. Keys
-- are never deleted; revoking one keeps its row.
CREATE TABLE eab_keys (
    id            TEXT    PRIMARY KEY,
    -- Names a group of keys (a team); the rate limiter's "eab:LABEL"
    -- overrides apply to the accounts bound with any key of the label.
    label         TEXT    NOT NULL,
    hmac_key      BLOB    NOT NULL,
    created_at    INTEGER NOT NULL,
    bound_account INTEGER REFERENCES accounts (id), -- NULL until bound
    bound_at      INTEGER,                         -- NULL until bound
    revoked_at    INTEGER                          -- NULL unless revoked
) STRICT, WITHOUT ROWID;

-- weir eab list: newest first, optionally one label's keys.
CREATE INDEX eab_keys_created ON eab_keys (created_at);
CREATE INDEX eab_keys_label ON eab_keys (label, created_at);
