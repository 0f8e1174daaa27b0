-- Several issuers (ca.issuers): each certificate names the issuer that
-- signed it, by its configured ID. Every row written before this migration
-- was signed by the one intermediate weir had, which is the issuer called
-- 'default' (ca.intermediate).
ALTER TABLE certificates ADD COLUMN issuer TEXT NOT NULL DEFAULT 'default';
-- The CRL shard (ca.crl-shards) whose URL the certificate names as its CRL
-- distribution point, fixed at issuance: 0, the issuer's one CRL, for
-- every certificate issued without shards.
ALTER TABLE certificates ADD COLUMN crl_shard INTEGER NOT NULL DEFAULT 0;

-- ListRevoked reads each CRL's entries (serial, revocation time, reason)
-- and now their issuer and shard from this index alone; one shard's
-- entries are one range of it (ListRevokedShard).
DROP INDEX certificates_revoked;
CREATE INDEX certificates_revoked ON certificates (issuer, crl_shard, not_after, serial, revoked_at, reason) WHERE revoked_at IS NOT NULL;

-- The number of the last CRL made for each issuer (and CRL shard), by any
-- replica (acme.CRLNumberer): incremented in one statement, so CRL numbers
-- grow across the replicas sharing the store.
CREATE TABLE crl_numbers (
    issuer TEXT    NOT NULL,
    shard  INTEGER NOT NULL,
    number INTEGER NOT NULL,
    PRIMARY KEY (issuer, shard)
) STRICT, WITHOUT ROWID;
