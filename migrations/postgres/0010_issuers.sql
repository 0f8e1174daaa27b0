-- Several issuers, as sqlite 0014 (see there).
ALTER TABLE certificates ADD COLUMN issuer text COLLATE "C" NOT NULL DEFAULT 'default';
ALTER TABLE certificates ADD COLUMN crl_shard integer NOT NULL DEFAULT 0;

DROP INDEX certificates_revoked;
CREATE INDEX certificates_revoked ON certificates (issuer, crl_shard, not_after) INCLUDE (serial, revoked_at, reason) WHERE revoked_at IS NOT NULL;

CREATE TABLE crl_numbers (
    issuer text COLLATE "C" NOT NULL,
    shard  integer NOT NULL,
    number bigint NOT NULL,
    PRIMARY KEY (issuer, shard)
);
