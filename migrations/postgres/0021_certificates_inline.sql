-- A certificate's row kept whole in its page. Its DER and chain make a
-- row of some 2.6 kB, over PostgreSQL's default TOAST target (about
-- 2 kB): every issuance tried to compress the chain (PEM, which pglz
-- rarely shrinks by the quarter it needs), then moved it into the TOAST
-- table, one more heap row and index entry, and every download read it
-- back from there. A target of 8160 bytes (the largest) leaves rows up
-- to a page alone; a larger one (a long chain of RSA issuers) is still
-- toasted as before. Rows already stored stay as they are.
ALTER TABLE certificates SET (toast_tuple_target = 8160);
