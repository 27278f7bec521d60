"""The ledger: users' numbers, every request and its result, opt-outs, the dial log, the schedule,
publications, texting, and the daemons sharing it. One interface (Ledger), two engines: a SQLite
file (the default, one daemon, nothing to install) or a PostgreSQL server (CALLD_LEDGER_URL), which
several daemons share. See ledger.py for the methods, statements.py for the statements they share,
engine.py for how each engine keeps them atomic.
"""

from calld.ledger.engine import IntegrityViolation, LedgerUnavailable, Tx
from calld.ledger.ledger import TABLES, DialView, Ledger, Target, columns, open_ledger
from calld.ledger.migrations import MIGRATIONS, POSTGRES_MIGRATIONS
from calld.ledger.rows import (
    _DID_COLUMNS,
    _KINDS,
    _OPT_OUT_COLUMNS,
    _PUBLICATION_COLUMNS,
    _REQUEST_COLUMNS,
    _SCHEDULE_COLUMNS,
    _STUB_POOL,
    Claim,
    DaemonRow,
    DidRow,
    DidStatus,
    Finished,
    Fresh,
    InFlight,
    LastRequestRow,
    LedgerError,
    MessageLinkRow,
    OptOutRow,
    PendingRow,
    PublicationRow,
    RequestConflict,
    RequestKind,
    RequestRow,
    RequestStatus,
    ScheduledRow,
    UnknownRequest,
    UnknownUser,
    _did,
    _differs,
    _now,
    _opt_out,
    _publication,
    _request,
    _same,
    _scheduled,
    _utc,
    canonical_json,
    customer_reference,
)
from calld.ledger.target import is_postgres, postgres_url_problem, redact

__all__ = [
    "MIGRATIONS", "POSTGRES_MIGRATIONS", "TABLES", "Claim", "DaemonRow", "DialView", "DidRow", "DidStatus",
    "Finished", "Fresh", "InFlight", "IntegrityViolation", "LastRequestRow", "Ledger", "LedgerError",
    "LedgerUnavailable", "MessageLinkRow", "OptOutRow", "PendingRow", "PublicationRow", "RequestConflict",
    "RequestKind", "RequestRow", "RequestStatus", "ScheduledRow", "Target", "Tx", "UnknownRequest", "UnknownUser",
    "canonical_json", "columns", "customer_reference", "is_postgres", "open_ledger", "postgres_url_problem", "redact",
    "_DID_COLUMNS", "_KINDS", "_OPT_OUT_COLUMNS", "_PUBLICATION_COLUMNS", "_REQUEST_COLUMNS", "_SCHEDULE_COLUMNS",
    "_STUB_POOL", "_did", "_differs", "_now", "_opt_out", "_publication", "_request", "_same", "_scheduled", "_utc",
]
