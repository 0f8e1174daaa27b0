-- Finalization leases (acme/lease.go). An order moves to processing with
-- the CSR it was finalized with (csr, DER) and leased to the replica that
-- finalizes it (lease_owner, Config.Owner) until lease_until (Unix ns);
-- when that replica dies mid-issuance, any replica claims the order once
-- the lease ends (FOR UPDATE SKIP LOCKED) and issues from the stored CSR.
-- Both lease columns are NULL once the order leaves processing.
ALTER TABLE orders ADD COLUMN csr bytea;
ALTER TABLE orders ADD COLUMN lease_owner text COLLATE "C";
ALTER TABLE orders ADD COLUMN lease_until bigint;

CREATE INDEX orders_processing ON orders (seq) WHERE status = 'processing';
