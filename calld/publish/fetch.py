"""calld-ctl's side of `fetch`: download a published call through the links the daemon signed.

The client needs no bucket keys: the daemon signs a short-lived GET link per object. Each
file is checked against the SHA-256 recorded when it was published; a file that does not
match is removed and reported, never left looking whole.
"""

from __future__ import annotations

import hashlib
from pathlib import Path, PurePosixPath
from typing import Any

import httpx
import trio


class FetchError(RuntimeError):
    pass


def _target(dest: Path, name: str) -> Path:
    # Names come from the daemon; still, a name must never reach outside the destination.
    rel = PurePosixPath(name)
    if rel.is_absolute() or ".." in rel.parts or not rel.parts:
        raise FetchError(f"refusing object name {name!r}: it points outside the destination")
    return dest.joinpath(*rel.parts)


async def download(objects: list[dict[str, Any]], dest: Path, *, client: httpx.AsyncClient | None = None) -> list[Path]:
    """Download every object into `dest` (names keep their folders, e.g. audio/inbound.wav)."""
    own = client is None
    client = client or httpx.AsyncClient(timeout=httpx.Timeout(30.0))
    written: list[Path] = []
    try:
        for obj in objects:
            path = _target(dest, obj["name"])
            try:
                resp = await client.get(obj["url"])
            except httpx.HTTPError as exc:
                raise FetchError(f"{obj['key']}: the store could not be reached ({type(exc).__name__}: {exc})") from None
            if resp.status_code != 200:
                raise FetchError(f"{obj['key']}: the store answered HTTP {resp.status_code} (the object may have expired or been deleted)")
            data = resp.content
            if hashlib.sha256(data).hexdigest() != obj["sha256"]:
                raise FetchError(f"{obj['key']}: its SHA-256 differs from the one recorded at publishing; not saved")
            await trio.Path(path.parent).mkdir(parents=True, exist_ok=True)
            await trio.Path(path).write_bytes(data)
            written.append(path)
    finally:
        if own:
            await client.aclose()
    return written
