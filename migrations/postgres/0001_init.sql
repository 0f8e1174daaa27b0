-- weir's PostgreSQL schema: the ACME objects, as SQLite migrations 0001 to
-- 0005 leave them, in one step.
--
-- Times are bigint Unix nanoseconds (UTC), as in the SQLite schema: exact
-- to the nanosecond (timestamptz keeps microseconds), and the same
-- conversions on both backends. 0 (or NULL where noted) is the zero time.
-- JSON columns are text holding encoding/json of the Go model types, byte
-- for byte (jsonb would refuse a "\u0000" a problem detail may carry).
-- Every text column uses the "C" collation: ordering, keyset cursors and
-- ILIKE compare bytes (ASCII case folding only), as SQLite does, whatever
-- the database's locale. Nothing issued is ever deleted.

CREATE TABLE accounts (
    id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    key_thumbprint text COLLATE "C" NOT NULL UNIQUE,
    jwk            bytea,
    contact        text COLLATE "C" NOT NULL DEFAULT '[]', -- JSON array of URLs
    status         text COLLATE "C" NOT NULL,
    created_at     bigint NOT NULL,
    created_ip     text COLLATE "C" NOT NULL DEFAULT '',
    -- The External Account Binding key the account was created with; ''
    -- if none.
    eab_key_id     text COLLATE "C" NOT NULL DEFAULT ''
);

-- seq is the order's position in creation order, used for pagination; id
-- is the externally visible identifier.
CREATE TABLE orders (
    seq         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id          text COLLATE "C" NOT NULL UNIQUE,
    account_id  bigint NOT NULL REFERENCES accounts (id),
    status      text COLLATE "C" NOT NULL,
    identifiers text COLLATE "C" NOT NULL, -- JSON array of {type, value}
    authz_ids   text COLLATE "C" NOT NULL, -- JSON array of authorization ids
    not_before  bigint NOT NULL DEFAULT 0,
    not_after   bigint NOT NULL DEFAULT 0,
    expires     bigint NOT NULL,
    error       text COLLATE "C",          -- JSON problem document, NULL if none
    cert_serial text COLLATE "C" NOT NULL DEFAULT '',
    created_at  bigint NOT NULL,
    -- The ARI certificate identifier (RFC 9773) the order replaces; '' if
    -- none.
    replaces    text COLLATE "C" NOT NULL DEFAULT '',
    -- The certificate profile the order asked for.
    profile     text COLLATE "C" NOT NULL DEFAULT ''
);

CREATE INDEX orders_account ON orders (account_id, seq);
-- A certificate is replaced at most once (RFC 9773 §5: alreadyReplaced):
-- one order that replaces it may become valid.
CREATE UNIQUE INDEX orders_replaces_valid ON orders (replaces) WHERE replaces <> '' AND status = 'valid';
CREATE INDEX orders_replaces ON orders (replaces) WHERE replaces <> '';

CREATE TABLE authzs (
    id          text COLLATE "C" PRIMARY KEY,
    account_id  bigint NOT NULL REFERENCES accounts (id),
    ident_type  text COLLATE "C" NOT NULL,
    ident_value text COLLATE "C" NOT NULL,
    wildcard    boolean NOT NULL,
    status      text COLLATE "C" NOT NULL,
    expires     bigint NOT NULL,
    created_at  bigint NOT NULL
);

-- FindValidAuthz: equality on everything but expires, then the latest expiry.
CREATE INDEX authzs_reuse ON authzs (account_id, ident_type, ident_value, wildcard, status, expires);
-- CountPendingAuthzs.
CREATE INDEX authzs_pending ON authzs (account_id, status, expires);
-- The administrators' inventory (RecentNames).
CREATE INDEX authzs_account_created ON authzs (account_id, created_at);

-- position keeps the challenges of an authorization in creation order.
CREATE TABLE challenges (
    id         text COLLATE "C" PRIMARY KEY,
    authz_id   text COLLATE "C" NOT NULL REFERENCES authzs (id),
    position   integer NOT NULL,
    type       text COLLATE "C" NOT NULL,
    token      text COLLATE "C" NOT NULL,
    status     text COLLATE "C" NOT NULL,
    validated  bigint NOT NULL DEFAULT 0,
    error      text COLLATE "C",            -- JSON problem document, NULL if none
    updated_at bigint NOT NULL,
    UNIQUE (authz_id, position)
);

-- ListChallenges (resuming validations).
CREATE INDEX challenges_status ON challenges (status, updated_at);

CREATE TABLE certificates (
    serial        text COLLATE "C" PRIMARY KEY,
    account_id    bigint NOT NULL REFERENCES accounts (id),
    order_id      text COLLATE "C" NOT NULL REFERENCES orders (id),
    der           bytea,
    chain_pem     bytea,
    names         text COLLATE "C" NOT NULL, -- JSON array of identifier values
    name_set      text COLLATE "C" NOT NULL, -- the same values joined by ","
    not_before    bigint NOT NULL,
    not_after     bigint NOT NULL,
    issued_at     bigint NOT NULL,
    revoked_at    bigint,                    -- NULL unless revoked
    reason        integer NOT NULL DEFAULT 0,
    -- The profile the certificate was issued under.
    profile       text COLLATE "C" NOT NULL DEFAULT '',
    -- The ARI renewal window (RFC 9773), assigned at issuance and moved by
    -- incident mode.
    renewal_start bigint NOT NULL DEFAULT 0,
    renewal_end   bigint NOT NULL DEFAULT 0,
    -- Incident mode moved the window into the past so that the client
    -- renews now; the replacement is exempt from the account limits.
    renew_now     boolean NOT NULL DEFAULT false
);

CREATE INDEX certificates_account ON certificates (account_id);
-- Rate limits on certificates per exact set of names.
CREATE INDEX certificates_name_set ON certificates (name_set, issued_at);
-- ListRevoked (CRL generation): revoked and not yet expired. Partial, so
-- issuing (which inserts unrevoked rows) never has to maintain it.
CREATE INDEX certificates_revoked ON certificates (not_after) WHERE revoked_at IS NOT NULL;
-- The administrators' inventory: certificates by issue time and by account
-- in issue order.
CREATE INDEX certificates_issued ON certificates (issued_at);
CREATE INDEX certificates_account_issued ON certificates (account_id, issued_at);
-- The renewal scheduler counts windows per interval.
CREATE INDEX certificates_renewal ON certificates (renewal_start);

-- External Account Binding keys (RFC 8555 §7.3.4). A new-account request
-- whose externalAccountBinding is MACed with a key binds it, once:
-- CreateAccount sets bound_account in the transaction that inserts the
-- account, compare-and-set on bound_account IS NULL AND revoked_at IS
-- NULL. Keys are never deleted; revoking one keeps its row.
CREATE TABLE eab_keys (
    id            text COLLATE "C" PRIMARY KEY,
    -- Names a group of keys (a team); the rate limiter's "eab:LABEL"
    -- overrides apply to the accounts bound with any key of the label.
    label         text COLLATE "C" NOT NULL,
    hmac_key      bytea NOT NULL,
    created_at    bigint NOT NULL,
    bound_account bigint REFERENCES accounts (id), -- NULL until bound
    bound_at      bigint,                         -- NULL until bound
    revoked_at    bigint                          -- NULL unless revoked
);

-- weir eab list: newest first, optionally one label's keys.
CREATE INDEX eab_keys_created ON eab_keys (created_at);
CREATE INDEX eab_keys_label ON eab_keys (label, created_at);
