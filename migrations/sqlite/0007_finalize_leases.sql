-- Finalization leases (acme/lease.go). An order moves to processing with
-- the CSR it was finalized with (csr, DER) and leased to the process that
-- finalizes it (lease_owner, Config.Owner) until lease_until (Unix ns);
-- when that process dies mid-issuance, any process claims the order once
-- the lease ends and issues from the stored CSR. Both lease columns are
-- NULL once the order leaves processing.
ALTER TABLE orders ADD COLUMN csr BLOB;
ALTER TABLE orders ADD COLUMN lease_owner TEXT;
ALTER TABLE orders ADD COLUMN lease_until INTEGER;

CREATE INDEX orders_processing ON orders (seq) WHERE status = 'processing';
