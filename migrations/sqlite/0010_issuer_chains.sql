-- A certificate's chain_pem held the leaf as PEM, then the issuer chain:
-- about 2.3 KB a row, so a 4 KiB page held one certificate and every
-- issuance added a page (half of it unused) to the certificates table.
-- The leaf is der already, and the issuer chain is the same for every
-- certificate an intermediate signs. New certificates store it once, here,
-- and name it in issuer_chain; their chain_pem is NULL and is rebuilt on
-- read as the PEM of der followed by the named chain, byte for byte what
-- was served at issuance. A certificate whose chain_pem is not of that
-- form (and every row written before this migration) keeps chain_pem and
-- has no issuer_chain.
CREATE TABLE issuer_chains (
    id  INTEGER PRIMARY KEY,
    pem BLOB    NOT NULL UNIQUE -- the PEM certificates after the leaf
) STRICT;

ALTER TABLE certificates ADD COLUMN issuer_chain INTEGER REFERENCES issuer_chains (id);
