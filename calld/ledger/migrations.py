"""The ledger's schema, versioned per engine. Append a step, never edit one that has shipped.

SQLite counts its steps in PRAGMA user_version (1..7 shipped before PostgreSQL existed);
PostgreSQL in its schema_version table. PostgreSQL's step 1 creates the schema SQLite has after
its step 7; from then on each SQLite step N >= 8 has the PostgreSQL step N - 6 beside it, so both
engines end with the same tables and columns (tests/test_ledger.py checks).

Portability: times the code compares as numbers (leases, claims, texting) are REAL in SQLite and
double precision in PostgreSQL (its REAL has 4 bytes: a lease would be off by minutes).
"""

from __future__ import annotations

MIGRATIONS: tuple[str, ...] = (
    # 1: users' numbers
    """
    CREATE TABLE dids (
        user_id TEXT NOT NULL UNIQUE,
        did TEXT UNIQUE,
        status TEXT NOT NULL CHECK (status IN ('ordering', 'active', 'failed')),
        order_id TEXT,
        customer_reference TEXT NOT NULL,
        failure TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
    );
    """,
    # 2: call requests, keyed on the request id
    """
    CREATE TABLE requests (
        request_id TEXT PRIMARY KEY,
        run_id TEXT NOT NULL UNIQUE,
        user_id TEXT NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN ('ask', 'book')),
        params TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('placing', 'in_flight', 'done')),
        call_control_id TEXT,
        result TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
    );
    CREATE INDEX requests_by_created ON requests (created_at);
    """,
    # 3: who is placing a user's number order right now (a lease, so a crash does not wedge it)
    """
    ALTER TABLE dids ADD COLUMN order_holder TEXT;
    ALTER TABLE dids ADD COLUMN order_held_until REAL;
    """,
    # 4: texting calld (calld.messaging.store): linked handles, inbound events, opt-outs, pending confirmations
    """
    CREATE TABLE message_links (
        handle TEXT PRIMARY KEY,
        user_id TEXT NOT NULL,
        name TEXT NOT NULL,
        created_at TEXT NOT NULL
    );
    CREATE TABLE message_events (
        event_id TEXT PRIMARY KEY,
        message_id TEXT NOT NULL,
        handle TEXT NOT NULL,
        chat_id TEXT NOT NULL,
        outcome TEXT NOT NULL DEFAULT 'received',
        request_id TEXT,
        received_at REAL NOT NULL
    );
    CREATE INDEX message_events_by_handle ON message_events (handle, received_at);
    CREATE TABLE message_optouts (
        handle TEXT PRIMARY KEY,
        at TEXT NOT NULL
    );
    CREATE TABLE message_pending (
        handle TEXT PRIMARY KEY,
        chat_id TEXT NOT NULL,
        message_id TEXT NOT NULL,
        intent TEXT NOT NULL,
        expires_at REAL NOT NULL
    );
    """,
    # 5: publishing a finished call's artifacts (calld.publish): what is unpublished, and where
    # the published objects are once the run directory may be gone
    """
    CREATE TABLE publications (
        run_id TEXT PRIMARY KEY,
        call_control_id TEXT,
        user_id TEXT NOT NULL,
        run_dir TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('pending', 'published')),
        bucket TEXT,
        key_prefix TEXT,
        objects TEXT,
        local TEXT NOT NULL DEFAULT 'kept' CHECK (local IN ('kept', 'audio_deleted', 'deleted')),
        attempts INTEGER NOT NULL DEFAULT 0,
        last_error TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
    );
    CREATE INDEX publications_by_status ON publications (status, created_at);
    CREATE INDEX publications_by_call ON publications (call_control_id);
    """,
    # 6: policy (calld.policy): numbers that asked not to be called, the dial log the rate limits
    # count, and requests queued for later. Times are UTC ISO 8601 text (they sort as text).
    """
    CREATE TABLE opt_outs (
        number TEXT PRIMARY KEY,
        said_at TEXT NOT NULL,
        quote TEXT NOT NULL,
        user_id TEXT NOT NULL,
        run_id TEXT NOT NULL
    );
    CREATE TABLE dial_log (
        request_id TEXT PRIMARY KEY,
        number TEXT NOT NULL,
        user_id TEXT NOT NULL,
        dialled_at TEXT NOT NULL
    );
    CREATE INDEX dial_log_by_number ON dial_log (number, dialled_at);
    CREATE INDEX dial_log_by_user ON dial_log (user_id, dialled_at);
    CREATE TABLE schedule (
        request_id TEXT PRIMARY KEY,
        user_id TEXT NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN ('ask', 'book')),
        params TEXT NOT NULL,
        due_at TEXT NOT NULL,
        mode TEXT NOT NULL CHECK (mode IN ('when_open', 'at')),
        status TEXT NOT NULL CHECK (status IN ('queued', 'dialled', 'cancelled', 'refused')),
        reason TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
    );
    CREATE INDEX schedule_by_due ON schedule (status, due_at);
    """,
    # 7: texting calld: the request a text asked for (its intent), so a follow-up that names no number
    # ("what about Sunday?", "call them again") finds the sender's last request and its result
    """
    ALTER TABLE message_events ADD COLUMN intent TEXT;
    """,
    # 8: a daemon per core (docs/scaling.md): the daemon that owns a request, the daemons' leases
    # (crash recovery takes over a dead daemon's calls), the schedule's claims (a due row is placed
    # by one daemon), the daemon that publishes a run. SQLite cannot change a CHECK in place, so
    # the schedule is copied into a new table.
    """
    ALTER TABLE requests ADD COLUMN instance TEXT NOT NULL DEFAULT '';
    CREATE INDEX requests_by_status ON requests (status, instance);
    CREATE TABLE daemons (
        instance TEXT PRIMARY KEY,
        lease_until REAL NOT NULL,
        started_at TEXT NOT NULL
    );
    CREATE TABLE schedule_v8 (
        request_id TEXT PRIMARY KEY,
        user_id TEXT NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN ('ask', 'book')),
        params TEXT NOT NULL,
        due_at TEXT NOT NULL,
        mode TEXT NOT NULL CHECK (mode IN ('when_open', 'at')),
        status TEXT NOT NULL CHECK (status IN ('queued', 'claimed', 'dialled', 'cancelled', 'refused')),
        reason TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        claimed_by TEXT,
        claimed_until REAL
    );
    INSERT INTO schedule_v8 (request_id, user_id, kind, params, due_at, mode, status, reason, created_at, updated_at)
        SELECT request_id, user_id, kind, params, due_at, mode, status, reason, created_at, updated_at FROM schedule;
    DROP TABLE schedule;
    ALTER TABLE schedule_v8 RENAME TO schedule;
    CREATE INDEX schedule_by_due ON schedule (status, due_at);
    ALTER TABLE publications ADD COLUMN owner TEXT NOT NULL DEFAULT '';
    """,
    # 9: which daemon holds an instance's lease (host and state dir), so a second daemon given the
    # same CALLD_INSTANCE is refused at start instead of taking the first one's calls for its own
    """
    ALTER TABLE daemons ADD COLUMN holder TEXT NOT NULL DEFAULT '';
    """,
    # 10: keys every daemon on one ledger must share (the redaction key, calld.ops.redaction), made
    # once by whichever daemon starts first
    """
    CREATE TABLE shared_keys (
        name TEXT PRIMARY KEY,
        value TEXT NOT NULL,
        created_at TEXT NOT NULL
    );
    """,
    # 11: a booking's --time as calld read it, in the restaurant's zone (ISO 8601 with its offset), kept
    # when the request is placed or queued: history and show name the day ("Fri 11 Dec 7pm"), and a
    # queued "tomorrow" stays the day it meant. NULL for asks, and for rows written before.
    """
    ALTER TABLE requests ADD COLUMN booking_at TEXT;
    ALTER TABLE schedule ADD COLUMN booking_at TEXT;
    """,
)

POSTGRES_MIGRATIONS: tuple[str, ...] = (
    # 1: SQLite's 1..7
    """
    CREATE TABLE dids (
        user_id text NOT NULL UNIQUE,
        did text UNIQUE,
        status text NOT NULL CHECK (status IN ('ordering', 'active', 'failed')),
        order_id text,
        customer_reference text NOT NULL,
        failure text,
        created_at text NOT NULL,
        updated_at text NOT NULL,
        order_holder text,
        order_held_until double precision
    );
    CREATE TABLE requests (
        request_id text PRIMARY KEY,
        run_id text NOT NULL UNIQUE,
        user_id text NOT NULL,
        kind text NOT NULL CHECK (kind IN ('ask', 'book')),
        params text NOT NULL,
        status text NOT NULL CHECK (status IN ('placing', 'in_flight', 'done')),
        call_control_id text,
        result text,
        created_at text NOT NULL,
        updated_at text NOT NULL
    );
    CREATE INDEX requests_by_created ON requests (created_at);
    CREATE TABLE message_links (
        handle text PRIMARY KEY,
        user_id text NOT NULL,
        name text NOT NULL,
        created_at text NOT NULL
    );
    CREATE TABLE message_events (
        event_id text PRIMARY KEY,
        message_id text NOT NULL,
        handle text NOT NULL,
        chat_id text NOT NULL,
        outcome text NOT NULL DEFAULT 'received',
        request_id text,
        received_at double precision NOT NULL,
        intent text
    );
    CREATE INDEX message_events_by_handle ON message_events (handle, received_at);
    CREATE TABLE message_optouts (
        handle text PRIMARY KEY,
        at text NOT NULL
    );
    CREATE TABLE message_pending (
        handle text PRIMARY KEY,
        chat_id text NOT NULL,
        message_id text NOT NULL,
        intent text NOT NULL,
        expires_at double precision NOT NULL
    );
    CREATE TABLE publications (
        run_id text PRIMARY KEY,
        call_control_id text,
        user_id text NOT NULL,
        run_dir text NOT NULL,
        status text NOT NULL CHECK (status IN ('pending', 'published')),
        bucket text,
        key_prefix text,
        objects text,
        local text NOT NULL DEFAULT 'kept' CHECK (local IN ('kept', 'audio_deleted', 'deleted')),
        attempts integer NOT NULL DEFAULT 0,
        last_error text,
        created_at text NOT NULL,
        updated_at text NOT NULL
    );
    CREATE INDEX publications_by_status ON publications (status, created_at);
    CREATE INDEX publications_by_call ON publications (call_control_id);
    CREATE TABLE opt_outs (
        number text PRIMARY KEY,
        said_at text NOT NULL,
        quote text NOT NULL,
        user_id text NOT NULL,
        run_id text NOT NULL
    );
    CREATE TABLE dial_log (
        request_id text PRIMARY KEY,
        number text NOT NULL,
        user_id text NOT NULL,
        dialled_at text NOT NULL
    );
    CREATE INDEX dial_log_by_number ON dial_log (number, dialled_at);
    CREATE INDEX dial_log_by_user ON dial_log (user_id, dialled_at);
    CREATE TABLE schedule (
        request_id text PRIMARY KEY,
        user_id text NOT NULL,
        kind text NOT NULL CHECK (kind IN ('ask', 'book')),
        params text NOT NULL,
        due_at text NOT NULL,
        mode text NOT NULL CHECK (mode IN ('when_open', 'at')),
        status text NOT NULL CHECK (status IN ('queued', 'dialled', 'cancelled', 'refused')),
        reason text,
        created_at text NOT NULL,
        updated_at text NOT NULL
    );
    CREATE INDEX schedule_by_due ON schedule (status, due_at);
    """,
    # 2: SQLite's 8
    """
    ALTER TABLE requests ADD COLUMN instance text NOT NULL DEFAULT '';
    CREATE INDEX requests_by_status ON requests (status, instance);
    CREATE TABLE daemons (
        instance text PRIMARY KEY,
        lease_until double precision NOT NULL,
        started_at text NOT NULL
    );
    ALTER TABLE schedule DROP CONSTRAINT schedule_status_check;
    ALTER TABLE schedule ADD CONSTRAINT schedule_status_check
        CHECK (status IN ('queued', 'claimed', 'dialled', 'cancelled', 'refused'));
    ALTER TABLE schedule ADD COLUMN claimed_by text;
    ALTER TABLE schedule ADD COLUMN claimed_until double precision;
    ALTER TABLE publications ADD COLUMN owner text NOT NULL DEFAULT '';
    """,
    # 3: SQLite's 9
    """
    ALTER TABLE daemons ADD COLUMN holder text NOT NULL DEFAULT '';
    """,
    # 4: SQLite's 10
    """
    CREATE TABLE shared_keys (
        name text PRIMARY KEY,
        value text NOT NULL,
        created_at text NOT NULL
    );
    """,
    # 5: SQLite's 11
    """
    ALTER TABLE requests ADD COLUMN booking_at text;
    ALTER TABLE schedule ADD COLUMN booking_at text;
    """,
)
