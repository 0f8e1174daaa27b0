-- The administrators' overview and certificate search without full scans,
-- as sqlite 0012 (issue 24): counts kept by triggers in the transactions
-- that write the rows they count, and cert_search, each certificate's
-- names forward and reversed (sqlrow.SearchKeys), written by a trigger
-- too, so that COPY (weir migrate-storage) keeps them as well. This
-- migration fills them from the rows already stored.
--
-- A count is split over up to 16 rows (shard): a transaction adds to the
-- row of a random shard, so that concurrent transactions of several
-- replicas seldom wait for one row's lock. Reads sum the shards
-- (sqlrow.CountsSQL).
CREATE TABLE object_counts (
    kind   text COLLATE "C" NOT NULL, -- accounts, orders, certificates, revoked
    status text COLLATE "C" NOT NULL, -- the status of an account or order; '' otherwise
    shard  smallint NOT NULL,
    n      bigint NOT NULL,
    PRIMARY KEY (kind, status, shard)
);

-- The certificates not revoked, by the hour and by the second of their
-- not_after (Unix seconds; whole in X.509).
CREATE TABLE cert_expiry_hours (
    hour  bigint NOT NULL,
    shard smallint NOT NULL,
    n     bigint NOT NULL,
    PRIMARY KEY (hour, shard)
);
CREATE TABLE cert_expiry_seconds (
    second bigint NOT NULL,
    shard  smallint NOT NULL,
    n      bigint NOT NULL,
    PRIMARY KEY (second, shard)
);

-- Certificates by the hour of issued_at, for the overview's issuance
-- chart.
CREATE TABLE cert_issued_hours (
    hour  bigint NOT NULL,
    shard smallint NOT NULL,
    n     bigint NOT NULL,
    PRIMARY KEY (hour, shard)
);

CREATE TABLE cert_search (
    key    text COLLATE "C" NOT NULL,
    serial text COLLATE "C" NOT NULL, -- of certificates, written with it
    PRIMARY KEY (key, serial)
);

CREATE FUNCTION weir_count(k text, s text, d bigint) RETURNS void LANGUAGE sql AS $$
    INSERT INTO object_counts (kind, status, shard, n) VALUES (k, s, floor(random() * 16)::smallint, d)
        ON CONFLICT (kind, status, shard) DO UPDATE SET n = object_counts.n + EXCLUDED.n;
$$;

-- d is +1 for a certificate that joins the unrevoked ones, -1 for one that
-- leaves them.
CREATE FUNCTION weir_count_expiry(not_after bigint, d bigint) RETURNS void LANGUAGE sql AS $$
    INSERT INTO cert_expiry_hours (hour, shard, n) VALUES (not_after / 3600000000000, floor(random() * 16)::smallint, d)
        ON CONFLICT (hour, shard) DO UPDATE SET n = cert_expiry_hours.n + EXCLUDED.n;
    INSERT INTO cert_expiry_seconds (second, shard, n) VALUES (not_after / 1000000000, floor(random() * 16)::smallint, d)
        ON CONFLICT (second, shard) DO UPDATE SET n = cert_expiry_seconds.n + EXCLUDED.n;
$$;

CREATE FUNCTION weir_count_issued(issued_at bigint, d bigint) RETURNS void LANGUAGE sql AS $$
    INSERT INTO cert_issued_hours (hour, shard, n) VALUES (issued_at / 3600000000000, floor(random() * 16)::smallint, d)
        ON CONFLICT (hour, shard) DO UPDATE SET n = cert_issued_hours.n + EXCLUDED.n;
$$;

CREATE FUNCTION weir_status_counted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        PERFORM weir_count(TG_TABLE_NAME, OLD.status, -1);
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        PERFORM weir_count(TG_TABLE_NAME, NEW.status, 1);
    END IF;
    RETURN NULL;
END $$;

CREATE TRIGGER accounts_counted AFTER INSERT OR DELETE ON accounts
    FOR EACH ROW EXECUTE FUNCTION weir_status_counted();
CREATE TRIGGER accounts_recounted AFTER UPDATE OF status ON accounts
    FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status) EXECUTE FUNCTION weir_status_counted();
CREATE TRIGGER orders_counted AFTER INSERT OR DELETE ON orders
    FOR EACH ROW EXECUTE FUNCTION weir_status_counted();
CREATE TRIGGER orders_recounted AFTER UPDATE OF status ON orders
    FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status) EXECUTE FUNCTION weir_status_counted();

CREATE FUNCTION weir_certificate_counted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        PERFORM weir_count('certificates', '', 1);
        PERFORM weir_count_issued(NEW.issued_at, 1);
        IF NEW.revoked_at IS NOT NULL THEN
            PERFORM weir_count('revoked', '', 1);
        ELSE
            PERFORM weir_count_expiry(NEW.not_after, 1);
        END IF;
        INSERT INTO cert_search (key, serial)
            SELECT k, NEW.serial FROM json_array_elements_text(NEW.names::json) AS n (v),
                LATERAL (VALUES ('>' || lower(v)), ('<' || reverse(lower(v)))) AS x (k)
            ON CONFLICT DO NOTHING;
    ELSIF TG_OP = 'UPDATE' THEN
        IF OLD.revoked_at IS NULL AND NEW.revoked_at IS NOT NULL THEN
            PERFORM weir_count('revoked', '', 1);
            PERFORM weir_count_expiry(NEW.not_after, -1);
        ELSIF OLD.revoked_at IS NOT NULL AND NEW.revoked_at IS NULL THEN
            PERFORM weir_count('revoked', '', -1);
            PERFORM weir_count_expiry(NEW.not_after, 1);
        END IF;
    ELSE
        PERFORM weir_count('certificates', '', -1);
        PERFORM weir_count_issued(OLD.issued_at, -1);
        IF OLD.revoked_at IS NOT NULL THEN
            PERFORM weir_count('revoked', '', -1);
        ELSE
            PERFORM weir_count_expiry(OLD.not_after, -1);
        END IF;
        DELETE FROM cert_search WHERE serial = OLD.serial;
    END IF;
    RETURN NULL;
END $$;

CREATE TRIGGER certificates_counted AFTER INSERT OR DELETE ON certificates
    FOR EACH ROW EXECUTE FUNCTION weir_certificate_counted();
CREATE TRIGGER certificates_recounted AFTER UPDATE OF revoked_at ON certificates
    FOR EACH ROW WHEN ((OLD.revoked_at IS NULL) <> (NEW.revoked_at IS NULL)) EXECUTE FUNCTION weir_certificate_counted();

-- TRUNCATE (an import run again with force) fires no row trigger: it
-- empties what is derived from the tables emptied.
CREATE FUNCTION weir_counts_truncated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_TABLE_NAME = 'certificates' THEN
        DELETE FROM object_counts WHERE kind IN ('certificates', 'revoked');
        DELETE FROM cert_expiry_hours;
        DELETE FROM cert_issued_hours;
        DELETE FROM cert_expiry_seconds;
        DELETE FROM cert_search;
    ELSE
        DELETE FROM object_counts WHERE kind = TG_TABLE_NAME;
    END IF;
    RETURN NULL;
END $$;

CREATE TRIGGER accounts_truncated AFTER TRUNCATE ON accounts FOR EACH STATEMENT EXECUTE FUNCTION weir_counts_truncated();
CREATE TRIGGER orders_truncated AFTER TRUNCATE ON orders FOR EACH STATEMENT EXECUTE FUNCTION weir_counts_truncated();
CREATE TRIGGER certificates_truncated AFTER TRUNCATE ON certificates FOR EACH STATEMENT EXECUTE FUNCTION weir_counts_truncated();

INSERT INTO object_counts (kind, status, shard, n) SELECT 'accounts', status, 0, count(*) FROM accounts GROUP BY status;
INSERT INTO object_counts (kind, status, shard, n) SELECT 'orders', status, 0, count(*) FROM orders GROUP BY status;
INSERT INTO object_counts (kind, status, shard, n) SELECT 'certificates', '', 0, count(*) FROM certificates;
INSERT INTO object_counts (kind, status, shard, n) SELECT 'revoked', '', 0, count(*) FROM certificates WHERE revoked_at IS NOT NULL;
INSERT INTO cert_expiry_hours (hour, shard, n) SELECT not_after / 3600000000000, 0, count(*) FROM certificates
    WHERE revoked_at IS NULL GROUP BY 1;
INSERT INTO cert_expiry_seconds (second, shard, n) SELECT not_after / 1000000000, 0, count(*) FROM certificates
    WHERE revoked_at IS NULL GROUP BY 1;
INSERT INTO cert_issued_hours (hour, shard, n) SELECT issued_at / 3600000000000, 0, count(*) FROM certificates GROUP BY 1;
INSERT INTO cert_search (key, serial)
    SELECT k, c.serial FROM certificates c, json_array_elements_text(c.names::json) AS n (v),
        LATERAL (VALUES ('>' || lower(v)), ('<' || reverse(lower(v)))) AS x (k)
    ON CONFLICT DO NOTHING;
