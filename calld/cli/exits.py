"""calld-ctl's exit codes (stable; see calld.cli.ctl's header) and its usage error."""

from __future__ import annotations

import signal

EXIT_OK = 0
EXIT_VERIFY_FAILED = 1
EXIT_USAGE = 2
EXIT_DECLINED = 3
EXIT_NO_ANSWER = 4
EXIT_VOICEMAIL = 5
EXIT_FAILED = 6
EXIT_UNREACHABLE = 7
EXIT_LOST = 8
# A reader that leaves early (`| head -1`) ends calld-ctl quietly with 128 + SIGPIPE, what the shell
# reports for any filter whose reader left (cat, ls: they die of the signal; Python ignores it and
# gets EPIPE instead), so a `set -o pipefail` script treats calld-ctl as it treats them. Not 0: the
# output was cut short, and a script must not take it for whole. Not 6: that says a call failed.
EXIT_PIPE_CLOSED = 128 + signal.SIGPIPE
EXIT_UNAVAILABLE = 9  # refused for now, nothing dialled (503: at capacity, draining, the ledger unreachable): ask again


class UsageError(ValueError):
    """Bad input on the command line: calld-ctl says what to fix and exits 2."""
