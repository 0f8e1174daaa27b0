-- The renewal planner refreshes from what changed since its last refresh
-- rather than from every promised window (acme/plandelta.go): the
-- certificates issued since (the index certificates_issued), and the
-- windows taken out since, which this table records: a revocation, or a
-- window moved into the past (incident mode), writes the window it takes
-- out in the same transaction (acme.PlanRemoval), if it ended after the
-- change. Rows older than acme.PlanRemovalsKept are deleted as new ones
-- are written; a replica that has not refreshed for that long rebuilds.
CREATE TABLE plan_removals (
    id            INTEGER PRIMARY KEY,
    at            INTEGER NOT NULL, -- when the window was taken out
    issued_at     INTEGER NOT NULL, -- of its certificate
    serial        TEXT    NOT NULL,
    account_id    INTEGER NOT NULL,
    renewal_start INTEGER NOT NULL, -- the window taken out
    renewal_end   INTEGER NOT NULL
) STRICT;
CREATE INDEX plan_removals_at ON plan_removals (at);

-- A full rebuild reads the windows of the certificates issued before its
-- cut (what was issued since is the refresh's): issued_at joins the
-- covering index it reads, so that it still never visits a row.
DROP INDEX certificates_renewal;
CREATE INDEX certificates_renewal ON certificates (renewal_end, serial, account_id, renewal_start, issued_at, revoked_at) WHERE revoked_at IS NULL;
