-- The issuer-migration view (acme.IssuerCounter, sqlrow.IssuerCountSQL)
-- counts each issuer's live certificates, the earliest and latest expiry,
-- the ones whose renewal window ended, and looks each one's replacement up
-- by its serial, at every view. certificates_crl_shard already orders an
-- issuer's certificates by shard and expiry, so the unexpired ones of each
-- shard are one range of it; with revoked_at, renewal_end and serial in
-- it too, the view reads that range alone and no row (no DER), a
-- revocation or a moved window rewriting its entry. No new index: an
-- issuance still writes as many index entries as before.
DROP INDEX certificates_crl_shard;
CREATE INDEX certificates_crl_shard ON certificates (issuer, crl_shard, not_after, revoked_at, renewal_end, serial);
