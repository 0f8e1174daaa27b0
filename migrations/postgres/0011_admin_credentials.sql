-- The administrators' named credentials, as in sqlite (see there).
CREATE TABLE admin_credentials (
    name       text COLLATE "C" PRIMARY KEY,
    role       text COLLATE "C" NOT NULL,
    sha256     text COLLATE "C" NOT NULL UNIQUE,
    created_at bigint NOT NULL,
    created_by text COLLATE "C" NOT NULL
);
