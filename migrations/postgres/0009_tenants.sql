-- Tenants, as sqlite 0011 (see there).
CREATE TABLE tenants (
    name       text COLLATE "C" PRIMARY KEY,
    policy     text COLLATE "C" NOT NULL,
    created_at bigint NOT NULL,
    updated_at bigint NOT NULL
);

ALTER TABLE eab_keys ADD COLUMN tenant text COLLATE "C" NOT NULL DEFAULT '';
CREATE INDEX eab_keys_tenant ON eab_keys (tenant) WHERE tenant <> '';
