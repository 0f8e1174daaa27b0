-- The CRL shards that unexpired certificates name, as in sqlite 0019 (see
-- there).
CREATE INDEX certificates_crl_shard ON certificates (issuer, crl_shard, not_after);
