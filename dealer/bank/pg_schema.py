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
    (
        3,
        """
        -- bank format 3: an imported batch's deals packed in one row (dealer.bank.batches); the packed value is
        -- random bytes mostly (cards, salts): stored out of line without trying to compress it
        CREATE TABLE batches (
            idx BIGINT PRIMARY KEY,
            first_deal BIGINT NOT NULL,
            deals BIGINT NOT NULL,
            packed BYTEA NOT NULL
        );
        ALTER TABLE batches ALTER COLUMN packed SET STORAGE EXTERNAL;
        -- a ledger entry (an import's list of files) kept in its row, compressed, unless it fills a page, and its
        -- kind and 32-byte hash always in the row (else a long entry pushes its hash out first): a small bank's
        -- few entries then take no TOAST pages
        ALTER TABLE ledger ALTER COLUMN body SET STORAGE MAIN;
        ALTER TABLE ledger ALTER COLUMN kind SET STORAGE PLAIN;
        ALTER TABLE ledger ALTER COLUMN hash SET STORAGE PLAIN;
        """,
    ),
)

LATEST = MIGRATIONS[-1][0]
