-- weir initial schema.
--
-- Times are INTEGER Unix nanoseconds (UTC); 0 (or NULL where noted) means
-- the zero time. JSON columns hold encoding/json of the Go model types.
-- Nothing issued is ever deleted.

CREATE TABLE accounts (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    key_thumbprint TEXT    NOT NULL UNIQUE,
    jwk            BLOB,
    contact        TEXT    NOT NULL DEFAULT '[]', -- JSON array of URLs
    status         TEXT    NOT NULL,
    created_at     INTEGER NOT NULL,
    created_ip     TEXT    NOT NULL DEFAULT ''
) STRICT;

-- seq is the order's position in creation order, used for pagination. It is
-- an explicit INTEGER PRIMARY KEY (not the implicit rowid) so that VACUUM
-- never renumbers it; id is the externally visible identifier.
CREATE TABLE orders (
    seq         INTEGER PRIMARY KEY AUTOINCREMENT,
    id          TEXT    NOT NULL UNIQUE,
    account_id  INTEGER NOT NULL REFERENCES accounts (id),
    status      TEXT    NOT NULL,
    identifiers TEXT    NOT NULL, -- JSON array of {type, value}
    authz_ids   TEXT    NOT NULL, -- JSON array of authorization ids
    not_before  INTEGER NOT NULL DEFAULT 0,
    not_after   INTEGER NOT NULL DEFAULT 0,
    expires     INTEGER NOT NULL,
    error       TEXT,             -- JSON problem document, NULL if none
    cert_serial TEXT    NOT NULL DEFAULT '',
    created_at  INTEGER NOT NULL,
    replaces    TEXT    NOT NULL DEFAULT ''
) STRICT;

CREATE INDEX orders_account ON orders (account_id, seq);

CREATE TABLE authzs (
    id          TEXT    PRIMARY KEY,
    account_id  INTEGER NOT NULL REFERENCES accounts (id),
    ident_type  TEXT    NOT NULL,
    ident_value TEXT    NOT NULL,
    wildcard    INTEGER NOT NULL,
    status      TEXT    NOT NULL,
    expires     INTEGER NOT NULL,
    created_at  INTEGER NOT NULL
) STRICT, WITHOUT ROWID;

-- FindValidAuthz: equality on everything but expires, then the latest expiry.
CREATE INDEX authzs_reuse ON authzs (account_id, ident_type, ident_value, wildcard, status, expires);
-- CountPendingAuthzs.
CREATE INDEX authzs_pending ON authzs (account_id, status, expires);

-- position keeps the challenges of an authorization in creation order.
CREATE TABLE challenges (
    id         TEXT    PRIMARY KEY,
    authz_id   TEXT    NOT NULL REFERENCES authzs (id),
    position   INTEGER NOT NULL,
    type       TEXT    NOT NULL,
    token      TEXT    NOT NULL,
    status     TEXT    NOT NULL,
    validated  INTEGER NOT NULL DEFAULT 0,
    error      TEXT,              -- JSON problem document, NULL if none
    updated_at INTEGER NOT NULL,
    UNIQUE (authz_id, position)
) STRICT, WITHOUT ROWID;

-- ListChallenges (resuming validations).
CREATE INDEX challenges_status ON challenges (status, updated_at);

CREATE TABLE certificates (
    serial     TEXT    PRIMARY KEY,
    account_id INTEGER NOT NULL REFERENCES accounts (id),
    order_id   TEXT    NOT NULL REFERENCES orders (id),
    der        BLOB,
    chain_pem  BLOB,
    names      TEXT    NOT NULL, -- JSON array of identifier values
    name_set   TEXT    NOT NULL, -- the same values joined by ","
    not_before INTEGER NOT NULL,
    not_after  INTEGER NOT NULL,
    issued_at  INTEGER NOT NULL,
    revoked_at INTEGER,          -- NULL unless revoked
    reason     INTEGER NOT NULL DEFAULT 0
) STRICT;

CREATE INDEX certificates_account ON certificates (account_id);
-- Rate limits on certificates per exact set of names.
CREATE INDEX certificates_name_set ON certificates (name_set, issued_at);
-- ListRevoked (CRL generation): revoked and not yet expired. Partial, so
-- issuing (which inserts unrevoked rows) never has to maintain it.
CREATE INDEX certificates_revoked ON certificates (not_after) WHERE revoked_at IS NOT NULL;
