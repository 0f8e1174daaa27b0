-- The count triggers of 0008 without their SQL-language helpers. A
-- LANGUAGE sql function that is not inlined is parsed and planned again
-- at every call, and PERFORM calls it as a query: each order written and
-- each certificate issued parsed and planned up to five statements in
-- PostgreSQL, about a quarter of its CPU per issuance (a perf profile
-- under weir-load). In PL/pgSQL the statements are prepared once per
-- session and their plans kept, and the frequent paths run fewer of
-- them: an order's status change one, an issuance one. What the triggers
-- count is unchanged, and every transaction still locks the counts' rows
-- table by table in one order.
CREATE OR REPLACE FUNCTION weir_status_counted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'UPDATE' THEN
        -- One statement for both rows, the old status's first as in 0008;
        -- they differ (the trigger's WHEN), so neither is hit twice.
        INSERT INTO object_counts (kind, status, shard, n)
            VALUES (TG_TABLE_NAME, OLD.status, floor(random() * 16)::smallint, -1),
                   (TG_TABLE_NAME, NEW.status, floor(random() * 16)::smallint, 1)
            ON CONFLICT (kind, status, shard) DO UPDATE SET n = object_counts.n + EXCLUDED.n;
    ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO object_counts (kind, status, shard, n) VALUES (TG_TABLE_NAME, OLD.status, floor(random() * 16)::smallint, -1)
            ON CONFLICT (kind, status, shard) DO UPDATE SET n = object_counts.n + EXCLUDED.n;
    ELSE
        INSERT INTO object_counts (kind, status, shard, n) VALUES (TG_TABLE_NAME, NEW.status, floor(random() * 16)::smallint, 1)
            ON CONFLICT (kind, status, shard) DO UPDATE SET n = object_counts.n + EXCLUDED.n;
    END IF;
    RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION weir_certificate_counted() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    -- +1 when the certificate joins the unrevoked ones, -1 when it leaves
    -- them, 0 when it stays where it was (the INSERT or DELETE of a
    -- revoked one).
    d_live bigint := 0;
    -- +1 when it joins the revoked ones, -1 when it leaves them.
    d_revoked bigint := 0;
    d_row bigint := 0; -- +1 INSERT, -1 DELETE
    v_issued bigint;   -- the row's issued_at and not_after
    v_expiry bigint;
BEGIN
    IF TG_OP = 'INSERT' AND NEW.revoked_at IS NULL THEN
        -- An issuance, the path every certificate takes: the counts and
        -- the search keys in one statement, not five.
        WITH c AS (
            INSERT INTO object_counts (kind, status, shard, n) VALUES ('certificates', '', floor(random() * 16)::smallint, 1)
                ON CONFLICT (kind, status, shard) DO UPDATE SET n = object_counts.n + EXCLUDED.n
        ), i AS (
            INSERT INTO cert_issued_hours (hour, shard, n) VALUES (NEW.issued_at / 3600000000000, floor(random() * 16)::smallint, 1)
                ON CONFLICT (hour, shard) DO UPDATE SET n = cert_issued_hours.n + EXCLUDED.n
        ), eh AS (
            INSERT INTO cert_expiry_hours (hour, shard, n) VALUES (NEW.not_after / 3600000000000, floor(random() * 16)::smallint, 1)
                ON CONFLICT (hour, shard) DO UPDATE SET n = cert_expiry_hours.n + EXCLUDED.n
        ), es AS (
            INSERT INTO cert_expiry_seconds (second, shard, n) VALUES (NEW.not_after / 1000000000, floor(random() * 16)::smallint, 1)
                ON CONFLICT (second, shard) DO UPDATE SET n = cert_expiry_seconds.n + EXCLUDED.n
        )
        INSERT INTO cert_search (key, serial)
            SELECT k, NEW.serial FROM json_array_elements_text(NEW.names::json) AS n (v),
                LATERAL (VALUES ('>' || lower(v)), ('<' || reverse(lower(v)))) AS x (k)
            ON CONFLICT DO NOTHING;
        RETURN NULL;
    END IF;
    -- The rest, rarer (a revoked certificate imported, a revocation or its
    -- undoing, a deletion), one statement per count.
    IF TG_OP = 'INSERT' THEN
        v_issued := NEW.issued_at; v_expiry := NEW.not_after;
        d_row := 1;
        d_revoked := 1;
    ELSIF TG_OP = 'UPDATE' THEN
        v_issued := NEW.issued_at; v_expiry := NEW.not_after;
        IF OLD.revoked_at IS NULL AND NEW.revoked_at IS NOT NULL THEN
            d_revoked := 1; d_live := -1;
        ELSIF OLD.revoked_at IS NOT NULL AND NEW.revoked_at IS NULL THEN
            d_revoked := -1; d_live := 1;
        END IF;
    ELSE
        v_issued := OLD.issued_at; v_expiry := OLD.not_after;
        d_row := -1;
        IF OLD.revoked_at IS NOT NULL THEN d_revoked := -1; ELSE d_live := -1; END IF;
    END IF;
    IF d_row <> 0 THEN
        INSERT INTO object_counts (kind, status, shard, n) VALUES ('certificates', '', floor(random() * 16)::smallint, d_row)
            ON CONFLICT (kind, status, shard) DO UPDATE SET n = object_counts.n + EXCLUDED.n;
        INSERT INTO cert_issued_hours (hour, shard, n) VALUES (v_issued / 3600000000000, floor(random() * 16)::smallint, d_row)
            ON CONFLICT (hour, shard) DO UPDATE SET n = cert_issued_hours.n + EXCLUDED.n;
    END IF;
    IF d_revoked <> 0 THEN
        INSERT INTO object_counts (kind, status, shard, n) VALUES ('revoked', '', floor(random() * 16)::smallint, d_revoked)
            ON CONFLICT (kind, status, shard) DO UPDATE SET n = object_counts.n + EXCLUDED.n;
    END IF;
    IF d_live <> 0 THEN
        INSERT INTO cert_expiry_hours (hour, shard, n) VALUES (v_expiry / 3600000000000, floor(random() * 16)::smallint, d_live)
            ON CONFLICT (hour, shard) DO UPDATE SET n = cert_expiry_hours.n + EXCLUDED.n;
        INSERT INTO cert_expiry_seconds (second, shard, n) VALUES (v_expiry / 1000000000, floor(random() * 16)::smallint, d_live)
            ON CONFLICT (second, shard) DO UPDATE SET n = cert_expiry_seconds.n + EXCLUDED.n;
    END IF;
    IF TG_OP = 'INSERT' THEN
        INSERT INTO cert_search (key, serial)
            SELECT k, NEW.serial FROM json_array_elements_text(NEW.names::json) AS n (v),
                LATERAL (VALUES ('>' || lower(v)), ('<' || reverse(lower(v)))) AS x (k)
            ON CONFLICT DO NOTHING;
    ELSIF TG_OP = 'DELETE' THEN
        DELETE FROM cert_search WHERE serial = OLD.serial;
    END IF;
    RETURN NULL;
END $$;
