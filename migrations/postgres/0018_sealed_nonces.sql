-- Sealed nonces (storage/postgres.Nonces): a nonce is issued without a
-- write, as 16 random bytes, its issue time and an HMAC under the key of
-- nonce_keys, which every replica reads; redeeming one inserts its random
-- bytes into nonces_redeemed, where a second redemption conflicts. The
-- key's gen is random, so a key made again is never taken for the old one.
--
-- Both tables are UNLOGGED, and so are emptied together by a crash of the
-- server or a promotion of a standby: the redeemed nonces are forgotten
-- only with the key that could verify them. A redemption inserts only
-- while its key's gen is stored; a replica whose key is gone finds so when
-- its redemption is refused, refuses that nonce, and reads or makes the
-- new key.
--
-- The nonces table of 0002 stays while replicas of the earlier release
-- may still issue nonces into it; redemptions of its nonces still delete
-- them, and the sweep still empties it.
CREATE UNLOGGED TABLE nonce_keys (
    id  integer PRIMARY KEY CHECK (id = 1),
    gen bigint NOT NULL,
    key bytea NOT NULL
);

-- expires is the nonce's issue time plus the lifetime and a margin for the
-- replicas' clocks; the sweep deletes the rows past it.
CREATE UNLOGGED TABLE nonces_redeemed (
    id      bytea PRIMARY KEY,
    expires timestamptz NOT NULL
);
CREATE INDEX nonces_redeemed_expires ON nonces_redeemed (expires);
