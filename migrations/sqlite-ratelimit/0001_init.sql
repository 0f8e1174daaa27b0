-- weir rate-limit state (storage/sqlite.RateLimitSource), in a database
-- file of its own, apart from the ACME data.
--
-- Times are INTEGER microseconds since the Unix epoch, as in package
-- ratelimit. Nothing here is precious: losing a row only gives an account
-- back some of its allowance.
--
-- One table holds both kinds of bucket, keyed by the bucket's storage key
-- (see storageKey: "acct-42:order-creation" for "order-creation:acct-42"),
-- so that all the buckets of one account share a B-tree page or two:
--
--   - a GCRA bucket is one row with member '' and ts its theoretical
--     arrival time; expires is NULL. The bucket is full, and the row may be
--     deleted, once ts is not after now.
--   - an exact-count bucket is one row per member (never '': ratelimit
--     rejects an empty member) with ts the member's timestamp as package
--     ratelimit defines it (issue time, or expiry for a limit without a
--     window), and expires the instant it stops counting: ts + the limit's
--     window when it was written (saturating; a ts of 0 never expires).
CREATE TABLE buckets (
    key     TEXT    NOT NULL,
    member  TEXT    NOT NULL,
    ts      INTEGER NOT NULL,
    expires INTEGER,
    PRIMARY KEY (key, member)
) STRICT, WITHOUT ROWID;

-- The sweeper deletes members that no longer count by a range scan of this
-- index. A member's row is written once, so the index costs little: new
-- entries land on its right-most page.
--
-- GCRA rows are deliberately not indexed: every spend moves a bucket's ts,
-- so an index would cost two more B-tree pages written per batch (about a
-- third of a new-order batch's time). The sweeper scans the table in key
-- order for them instead, a bounded number of rows per transaction.
CREATE INDEX buckets_by_expiry ON buckets (expires) WHERE expires IS NOT NULL;
