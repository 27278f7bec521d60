"""calld-ctl's side of `fetch`: download a published call through the links the daemon signed.

The client needs no bucket keys: the daemon signs a short-lived GET link per object. Each
file is checked against the SHA-256 recorded when it was published; a file that does not
match is removed and reported, never left looking whole.

Where it writes: a fresh folder it creates (or an existing empty one), 0700, with every file
0600 and every subfolder 0700 whatever the umask, like the daemon's own copies. Every path is
opened relative to the folder's descriptor with O_NOFOLLOW, and files with O_EXCL: a symlink
planted in the target (a `result.json` pointing elsewhere, an `audio/` folder pointing
elsewhere) is refused, never written through.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path, PurePosixPath
from typing import Any

import httpx
import trio

from calld.ops.private import DIR_MODE, FILE_MODE

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


class FetchError(RuntimeError):
    pass


class TargetRefused(FetchError):
    """The destination is not a fresh folder: nothing was downloaded or written."""


def _parts(name: str) -> tuple[str, ...]:
    # Names come from the daemon; still, a name must never reach outside the destination.
    rel = PurePosixPath(name)
    if rel.is_absolute() or ".." in rel.parts or not rel.parts:
        raise FetchError(f"refusing object name {name!r}: it points outside the destination")
    return rel.parts


def open_fresh_folder(dest: Path) -> int:
    """A descriptor on `dest`, made 0700: created here, or an existing empty real folder.
    Refused: a symlink, a file, a folder that holds anything."""
    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
        os.mkdir(dest, DIR_MODE)
    except FileExistsError:
        pass
    except OSError as exc:
        raise TargetRefused(f"cannot create {dest}: {exc.strerror}") from None
    try:
        fd = os.open(dest, _DIR_FLAGS)
    except OSError as exc:
        what = "it is a symlink (fetch never follows one)" if os.path.islink(dest) else exc.strerror
        raise TargetRefused(f"refusing to write into {dest}: {what}; name a new folder") from None
    try:
        if os.listdir(fd):
            raise TargetRefused(f"refusing to write into {dest}: it already holds files; name a new or empty folder")
        os.fchmod(fd, DIR_MODE)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _write_private(root: int, parts: tuple[str, ...], data: bytes, shown: str) -> None:
    """`data` in a new 0600 file at root/parts, through 0700 folders; nothing followed, nothing replaced."""
    fds: list[int] = []
    try:
        at = root
        for part in parts[:-1]:
            try:
                os.mkdir(part, DIR_MODE, dir_fd=at)
            except FileExistsError:
                pass
            at = os.open(part, _DIR_FLAGS, dir_fd=at)
            fds.append(at)
            os.fchmod(at, DIR_MODE)
        fd = os.open(parts[-1], _FILE_FLAGS, FILE_MODE, dir_fd=at)
        with os.fdopen(fd, "wb") as f:
            os.fchmod(f.fileno(), FILE_MODE)
            f.write(data)
    except FileExistsError:
        raise FetchError(f"refusing to write {shown}: something is already there; nothing was replaced") from None
    except OSError as exc:
        raise FetchError(f"refusing to write {shown}: {exc.strerror} (fetch never follows a symlink)") from None
    finally:
        for fd in fds:
            os.close(fd)


async def download(objects: list[dict[str, Any]], dest: Path, *, client: httpx.AsyncClient | None = None) -> list[Path]:
    """Download every object into the fresh folder `dest` (names keep their folders, e.g. audio/inbound.wav)."""
    names = [_parts(obj["name"]) for obj in objects]
    root = open_fresh_folder(dest)
    own = client is None
    client = client or httpx.AsyncClient(timeout=httpx.Timeout(30.0))
    written: list[Path] = []
    try:
        for obj, parts in zip(objects, names, strict=True):
            try:
                resp = await client.get(obj["url"])
            except httpx.HTTPError as exc:
                raise FetchError(f"{obj['key']}: the store could not be reached ({type(exc).__name__}: {exc})") from None
            if resp.status_code != 200:
                raise FetchError(f"{obj['key']}: the store answered HTTP {resp.status_code} (the object may have expired or been deleted)")
            data = resp.content
            if hashlib.sha256(data).hexdigest() != obj["sha256"]:
                raise FetchError(f"{obj['key']}: its SHA-256 differs from the one recorded at publishing; not saved")
            path = dest.joinpath(*parts)
            await trio.to_thread.run_sync(_write_private, root, parts, data, str(path))
            written.append(path)
    finally:
        os.close(root)
        if own:
            await client.aclose()
    return written
