-- Tenants (acme.Tenant): named policies that EAB keys, and through them
-- the accounts bound with them, belong to. policy is encoding/json of the
-- acme.Tenant (its name and times are the columns'). A key's tenant is ''
-- for the default tenant (ca.policy alone), so existing keys and their
-- accounts keep today's rules. A tenant is deleted only while no key
-- names it (the store checks, in the deleting transaction).
CREATE TABLE tenants (
    name       TEXT    PRIMARY KEY,
    policy     TEXT    NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
) STRICT, WITHOUT ROWID;

ALTER TABLE eab_keys ADD COLUMN tenant TEXT NOT NULL DEFAULT '';
CREATE INDEX eab_keys_tenant ON eab_keys (tenant) WHERE tenant <> '';
