-- Anti-replay nonces (RFC 8555 §7.2) shared by every replica: a nonce
-- issued by one is redeemed, at most once, on any (DELETE … RETURNING).
-- expires is the server's clock, so replicas' clocks do not matter.
--
-- UNLOGGED: nonces live minutes and are not worth a WAL write each. After
-- a crash of the server, or on a promoted standby, the table is empty: the
-- outstanding nonces are refused as badNonce, which clients retry with
-- the fresh nonce the refusal carries. A nonce can never redeem twice.
CREATE UNLOGGED TABLE nonces (
    value   text COLLATE "C" PRIMARY KEY,
    expires timestamptz NOT NULL
);

-- The sweep of expired nonces.
CREATE INDEX nonces_expires ON nonces (expires);
