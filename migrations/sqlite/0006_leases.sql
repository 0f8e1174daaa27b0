-- Leases (acme/lease.go). A validation job, a challenge in processing, is
-- leased to the process that claimed it (lease_owner, Config.Owner) until
-- lease_until (Unix ns); both are NULL while it is free. Any process may
-- claim a processing challenge whose lease is free or ended, which is how
-- a job whose process died is taken over.
ALTER TABLE challenges ADD COLUMN lease_owner TEXT;
ALTER TABLE challenges ADD COLUMN lease_until INTEGER;

-- Named leases of background work that one process at a time does (the
-- CRL schedule, the sweeps): held by owner until until (Unix ns).
CREATE TABLE leases (
    name  TEXT    PRIMARY KEY,
    owner TEXT    NOT NULL,
    until INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
