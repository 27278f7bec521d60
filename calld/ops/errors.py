"""The one kind of error an operator fixes by hand: it prints as one line, never a traceback."""

from __future__ import annotations


class OperationalError(RuntimeError):
    """A start-up or state problem the operator must fix; its message says what and how."""
