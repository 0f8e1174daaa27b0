-- Leases (acme/lease.go). A validation job, a challenge in processing, is
-- leased to the replica that claimed it (lease_owner, Config.Owner) until
-- lease_until (Unix ns); both are NULL while it is free. Any replica may
-- claim a processing challenge whose lease is free or ended (FOR UPDATE
-- SKIP LOCKED, so concurrent claims take different rows), which is how a
-- job whose replica died is taken over. The claim finds processing
-- challenges by challenges_status.
ALTER TABLE challenges ADD COLUMN lease_owner text COLLATE "C";
ALTER TABLE challenges ADD COLUMN lease_until bigint;

-- Named leases of background work that one replica at a time does (the
-- CRL schedule, the sweeps): held by owner until until (Unix ns), taken by
-- INSERT … ON CONFLICT DO UPDATE … WHERE the lease ended or is the
-- owner's.
CREATE TABLE leases (
    name  text COLLATE "C" PRIMARY KEY,
    owner text COLLATE "C" NOT NULL,
    until bigint NOT NULL
);
