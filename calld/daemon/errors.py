"""What the daemon refuses with, shared by the service and the control app (no import cycle)."""

from __future__ import annotations

from calld.ops.errors import OperationalError


class DaemonError(OperationalError):
    pass


class Draining(RuntimeError):
    def __init__(self) -> None:
        super().__init__("calld is shutting down and takes no new calls; try again once it has restarted")


class AtCapacity(RuntimeError):
    def __init__(self, limit: int) -> None:
        super().__init__(
            f"calld is already on {limit} calls, its limit (CALLD_MAX_CALLS); nothing was placed. "
            "Try again when one has finished."
        )


class DiskFull(RuntimeError):
    def __init__(self, space: str) -> None:
        super().__init__(
            f"calld's disk is full ({space}): a call could not write its artifacts, so nothing was placed. "
            "Free space there (calld-ctl prune), or ask another daemon."
        )


class AmbiguousCall(LookupError):
    def __init__(self, ident: str, candidates: list[str]) -> None:
        super().__init__(f"{ident!r} names {len(candidates)} calls: {', '.join(candidates)}; show one by its run id")
        self.candidates = candidates
