-- The issuer-migration view, as sqlite 0022 (see there): the live
-- certificates of an issuer read from certificates_crl_shard alone.
DROP INDEX certificates_crl_shard;
CREATE INDEX certificates_crl_shard ON certificates (issuer, crl_shard, not_after) INCLUDE (revoked_at, renewal_end, serial);
