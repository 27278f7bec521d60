"""Private files: every directory calld writes is 0700 and every file 0600, whatever the umask.

Transcripts and phone numbers live here; another local user must not read them. Modes are set
explicitly (not left to the umask), and JSON artifacts are written whole or not at all: a temp
file beside the target, then a rename, so a crash never leaves a half file that looks whole.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import IO, Any

DIR_MODE = 0o700
FILE_MODE = 0o600


def private_dir(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True, mode=DIR_MODE)
    os.chmod(path, DIR_MODE)
    return path


def open_private(path: Path, mode: str = "w", **kwargs: Any) -> IO[Any]:
    """open() whose file, if it creates one, is 0600; an existing file is brought to 0600."""
    flags = os.O_CREAT | os.O_CLOEXEC | (os.O_RDWR if "+" in mode else os.O_WRONLY)
    if "a" in mode:
        flags |= os.O_APPEND
    elif "w" in mode:
        flags |= os.O_TRUNC
    fd = os.open(path, flags, FILE_MODE)
    try:
        os.fchmod(fd, FILE_MODE)
        return os.fdopen(fd, mode, **kwargs)
    except BaseException:
        os.close(fd)
        raise


def write_atomic(path: Path, data: bytes) -> None:
    """`data` at `path`, complete or not there at all (temp file + rename). No fsync: the
    crash this guards against is the process's, whose written pages the kernel keeps."""
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    try:
        with open_private(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
