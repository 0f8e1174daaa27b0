-- The administrators' overview and certificate search without full scans
-- (issue 24). Both are derived from the rows they describe and written in
-- the transactions that write those rows, so they are exact after any
-- crash; this migration fills them from the rows already stored.
--
-- object_counts: accounts and orders per stored status, every certificate
-- ('certificates', '') and the revoked ones ('revoked', ''), kept by the
-- triggers below.
CREATE TABLE object_counts (
    kind   TEXT    NOT NULL, -- accounts, orders, certificates, revoked
    status TEXT    NOT NULL, -- the status of an account or order; '' otherwise
    n      INTEGER NOT NULL,
    PRIMARY KEY (kind, status)
) STRICT, WITHOUT ROWID;

-- The certificates not revoked, by the hour and by the second of their
-- not_after (Unix seconds, whole in X.509): the expired ones at now are the
-- hours before the current one and the seconds of the current hour up to
-- now, so counting them reads a few thousand small rows, whatever the
-- number of certificates.
CREATE TABLE cert_expiry_hours (
    hour INTEGER PRIMARY KEY, -- not_after / 3600 s
    n    INTEGER NOT NULL
) STRICT;
CREATE TABLE cert_expiry_seconds (
    second INTEGER PRIMARY KEY, -- not_after / 1 s
    n      INTEGER NOT NULL
) STRICT;

-- Certificates by the hour of issued_at (Unix hours), for the overview's
-- issuance chart: 48 rows instead of every certificate of two days.
CREATE TABLE cert_issued_hours (
    hour INTEGER PRIMARY KEY, -- issued_at / 3600 s
    n    INTEGER NOT NULL
) STRICT;

CREATE TRIGGER accounts_counted AFTER INSERT ON accounts BEGIN
    INSERT INTO object_counts (kind, status, n) VALUES ('accounts', NEW.status, 1)
        ON CONFLICT (kind, status) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER accounts_recounted AFTER UPDATE OF status ON accounts WHEN OLD.status IS NOT NEW.status BEGIN
    UPDATE object_counts SET n = n - 1 WHERE kind = 'accounts' AND status = OLD.status;
    INSERT INTO object_counts (kind, status, n) VALUES ('accounts', NEW.status, 1)
        ON CONFLICT (kind, status) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER accounts_uncounted AFTER DELETE ON accounts BEGIN
    UPDATE object_counts SET n = n - 1 WHERE kind = 'accounts' AND status = OLD.status;
END;

CREATE TRIGGER orders_counted AFTER INSERT ON orders BEGIN
    INSERT INTO object_counts (kind, status, n) VALUES ('orders', NEW.status, 1)
        ON CONFLICT (kind, status) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER orders_recounted AFTER UPDATE OF status ON orders WHEN OLD.status IS NOT NEW.status BEGIN
    UPDATE object_counts SET n = n - 1 WHERE kind = 'orders' AND status = OLD.status;
    INSERT INTO object_counts (kind, status, n) VALUES ('orders', NEW.status, 1)
        ON CONFLICT (kind, status) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER orders_uncounted AFTER DELETE ON orders BEGIN
    UPDATE object_counts SET n = n - 1 WHERE kind = 'orders' AND status = OLD.status;
END;

-- d is +1 for a certificate that joins the unrevoked ones, -1 for one that
-- leaves them (the WHERE of each INSERT … SELECT also lets SQLite parse
-- its upsert).
CREATE TRIGGER certificates_counted AFTER INSERT ON certificates BEGIN
    INSERT INTO object_counts (kind, status, n) VALUES ('certificates', '', 1)
        ON CONFLICT (kind, status) DO UPDATE SET n = n + 1;
    INSERT INTO cert_issued_hours (hour, n) VALUES (NEW.issued_at / 3600000000000, 1)
        ON CONFLICT (hour) DO UPDATE SET n = n + 1;
    INSERT INTO object_counts (kind, status, n) SELECT 'revoked', '', 1 WHERE NEW.revoked_at IS NOT NULL
        ON CONFLICT (kind, status) DO UPDATE SET n = n + 1;
    INSERT INTO cert_expiry_hours (hour, n) SELECT NEW.not_after / 3600000000000, 1 WHERE NEW.revoked_at IS NULL
        ON CONFLICT (hour) DO UPDATE SET n = n + 1;
    INSERT INTO cert_expiry_seconds (second, n) SELECT NEW.not_after / 1000000000, 1 WHERE NEW.revoked_at IS NULL
        ON CONFLICT (second) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER certificates_recounted AFTER UPDATE OF revoked_at ON certificates
    WHEN (OLD.revoked_at IS NULL) != (NEW.revoked_at IS NULL) BEGIN
    INSERT INTO object_counts (kind, status, n) SELECT 'revoked', '', IIF(NEW.revoked_at IS NULL, -1, 1) WHERE 1
        ON CONFLICT (kind, status) DO UPDATE SET n = n + excluded.n;
    INSERT INTO cert_expiry_hours (hour, n) SELECT NEW.not_after / 3600000000000, IIF(NEW.revoked_at IS NULL, 1, -1) WHERE 1
        ON CONFLICT (hour) DO UPDATE SET n = n + excluded.n;
    INSERT INTO cert_expiry_seconds (second, n) SELECT NEW.not_after / 1000000000, IIF(NEW.revoked_at IS NULL, 1, -1) WHERE 1
        ON CONFLICT (second) DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER certificates_uncounted AFTER DELETE ON certificates BEGIN
    UPDATE object_counts SET n = n - 1 WHERE kind = 'certificates' AND status = '';
    UPDATE cert_issued_hours SET n = n - 1 WHERE hour = OLD.issued_at / 3600000000000;
    UPDATE object_counts SET n = n - 1 WHERE kind = 'revoked' AND status = '' AND OLD.revoked_at IS NOT NULL;
    UPDATE cert_expiry_hours SET n = n - 1 WHERE hour = OLD.not_after / 3600000000000 AND OLD.revoked_at IS NULL;
    UPDATE cert_expiry_seconds SET n = n - 1 WHERE second = OLD.not_after / 1000000000 AND OLD.revoked_at IS NULL;
END;

INSERT INTO object_counts (kind, status, n) SELECT 'accounts', status, count(*) FROM accounts GROUP BY status;
INSERT INTO object_counts (kind, status, n) SELECT 'orders', status, count(*) FROM orders GROUP BY status;
INSERT INTO object_counts (kind, status, n) SELECT 'certificates', '', count(*) FROM certificates;
INSERT INTO object_counts (kind, status, n) SELECT 'revoked', '', count(*) FROM certificates WHERE revoked_at IS NOT NULL;
INSERT INTO cert_expiry_hours (hour, n) SELECT not_after / 3600000000000 AS h, count(*) FROM certificates
    WHERE revoked_at IS NULL GROUP BY h;
INSERT INTO cert_issued_hours (hour, n) SELECT issued_at / 3600000000000 AS h, count(*) FROM certificates GROUP BY h;
INSERT INTO cert_expiry_seconds (second, n) SELECT not_after / 1000000000 AS s, count(*) FROM certificates
    WHERE revoked_at IS NULL GROUP BY s;

-- Certificate search (sqlrow.SearchKeys): each name of a certificate
-- twice, as '>' and the name and as '<' and the name reversed, so that a
-- text that begins a name and one that ends a name are each one range of
-- the primary key, and a text that matches nothing reads no row. The
-- store writes a certificate's keys with it (FinalizeOrder, Import).
CREATE TABLE cert_search (
    key    TEXT NOT NULL,
    serial TEXT NOT NULL, -- of certificates, written with it
    PRIMARY KEY (key, serial)
) STRICT, WITHOUT ROWID;

INSERT OR IGNORE INTO cert_search (key, serial)
    SELECT '>' || lower(j.value), c.serial FROM certificates c, json_each(c.names) j;
WITH RECURSIVE rev (serial, rest, acc) AS (
    SELECT c.serial, lower(j.value), '' FROM certificates c, json_each(c.names) j
    UNION ALL
    SELECT serial, substr(rest, 2), substr(rest, 1, 1) || acc FROM rev WHERE rest != ''
)
INSERT OR IGNORE INTO cert_search (key, serial) SELECT '<' || acc, serial FROM rev WHERE rest = '';
