"""Where a ledger lives: a SQLite file or a PostgreSQL server, and how to name the server
without its password (every message and log line that names it goes through `redact`)."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

POSTGRES_SCHEMES = ("postgresql", "postgres")


def postgres_url_problem(url: str) -> str | None:
    """None for a URL the PostgreSQL engine can take; otherwise what to fix (never echoing a password)."""
    parts = urlsplit(url)
    if parts.scheme not in POSTGRES_SCHEMES:
        return (f"{redact(url)!r} is not a PostgreSQL URL; write postgresql://USER:PASSWORD@HOST:PORT/DATABASE "
                "(or leave it empty for the SQLite ledger in the state directory)")
    if not parts.path.strip("/") and "dbname" not in dict(parse_qsl(parts.query)):
        return f"{redact(url)!r} names no database; add it after the host, e.g. postgresql://calld@localhost/calld"
    try:
        parts.port  # noqa: B018 - a port that is not a number raises here
    except ValueError:
        return f"{redact(url)!r} has a port that is not a number"
    return None


def redact(url: str) -> str:
    """The URL with any password (in the authority or as ?password=) replaced by ***."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "<an unreadable URL>"
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, _, hostport = netloc.rpartition("@")
        user, sep, _password = userinfo.partition(":")
        netloc = f"{user}{':***' if sep else ''}@{hostport}"
    query = parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        query = urlencode([(k, "***" if k.lower() == "password" else v) for k, v in pairs], safe="*/")
    # urlunsplit drops an empty authority's // for schemes it does not know (postgresql:///calld would
    # print as postgresql:/calld, which libpq does not read): keep what the URL had.
    slashes = "//" if netloc or url[len(parts.scheme) + 1:].startswith("//") else ""
    rest = urlunsplit(("", "", parts.path, query, parts.fragment))
    return f"{parts.scheme}:{slashes}{netloc}{rest}" if parts.scheme else f"{slashes}{netloc}{rest}"


def is_postgres(target: Path | str) -> bool:
    return isinstance(target, str) and urlsplit(target).scheme in POSTGRES_SCHEMES
