-- The CRL shards that unexpired certificates name (acme.CRLShardLister):
-- weir keeps making and serving the CRL of every such shard at start,
-- whatever ca.crl-shards says now, so that lowering it drops no revoked
-- certificate from the CRLs. The question is answered from this index
-- alone, about two seeks per shard an issuer ever used (the distinct
-- shards, then each one's last expiry), however many certificates there
-- are (sqlrow.CRLShardsInUseSQL).
CREATE INDEX certificates_crl_shard ON certificates (issuer, crl_shard, not_after);
