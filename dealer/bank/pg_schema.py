"""The PostgreSQL bank's schema as plain versioned SQL: migration N takes a database from version N-1 to N.

Applied in order, each in its own transaction with its row in ``schema_version``, under a session advisory lock so
that two services starting at once do not race. Tables and columns mirror the SQLite bank's (same names, same
column order, BYTEA for BLOB, BIGINT for INTEGER), so the repository's engine-neutral SQL runs on both and
``dealer bank migrate`` copies rows verbatim. The bank's own format version (``meta.schema``) is separate: it is
the version of what is stored, which both engines share.
"""

from __future__ import annotations

MIGRATIONS: tuple[tuple[int, str], ...] = (
    (
        1,
        """
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE ledger (
            idx BIGINT PRIMARY KEY,
            kind TEXT NOT NULL,
            body BYTEA NOT NULL,
            hash BYTEA NOT NULL
        );
        CREATE INDEX ledger_kind ON ledger(kind);
        CREATE TABLE deals (
            deal_id BIGINT PRIMARY KEY,
            ledger_index BIGINT NOT NULL,
            canonical BYTEA NOT NULL UNIQUE,
            salt BYTEA NOT NULL,
            commitment BYTEA NOT NULL,
            source TEXT NOT NULL,
            dealing_order BYTEA,
            created TEXT NOT NULL,
            state TEXT NOT NULL,
            session TEXT
        );
        CREATE INDEX deals_out_of_bank ON deals(deal_id) WHERE state <> 'bank';
        CREATE TABLE draws (
            label TEXT PRIMARY KEY,
            state TEXT NOT NULL,
            commit_index BIGINT NOT NULL,
            secret BYTEA NOT NULL,
            public_value TEXT,
            drawn TEXT
        );
        """,
    ),
    (
        2,
        """
        -- the ledger is append-only: no row of it is ever updated or deleted through SQL
        CREATE FUNCTION ledger_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            RAISE EXCEPTION 'the bank ledger is append-only (% refused)', TG_OP;
        END $$;
        CREATE TRIGGER ledger_append_only BEFORE UPDATE OR DELETE ON ledger
            FOR EACH ROW EXECUTE FUNCTION ledger_append_only();
        """,
    ),
)

LATEST = MIGRATIONS[-1][0]
