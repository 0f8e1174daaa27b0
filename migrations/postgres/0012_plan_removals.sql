-- The windows taken out of the renewal plan, as in sqlite (see there).
CREATE TABLE plan_removals (
    id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at            bigint NOT NULL,
    issued_at     bigint NOT NULL,
    serial        text COLLATE "C" NOT NULL,
    account_id    bigint NOT NULL,
    renewal_start bigint NOT NULL,
    renewal_end   bigint NOT NULL
);
CREATE INDEX plan_removals_at ON plan_removals (at, id);

-- A full rebuild reads the windows of the certificates issued before its
-- cut: issued_at joins the index it reads, so that it stays an
-- index-only scan.
DROP INDEX certificates_renewal;
CREATE INDEX certificates_renewal ON certificates (renewal_end, serial) INCLUDE (account_id, renewal_start, issued_at) WHERE revoked_at IS NULL;
