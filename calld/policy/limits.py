"""Rate limits: how often one number may be called (by anyone) and one user may call.

Counts come from the ledger's dial log (one row per call placed); these checks are
pure. There is no automatic redial of a busy line, no answer or voicemail, ever: a
call that did not get through is a result, and another attempt is a new request that
meets these limits again.
"""

from __future__ import annotations

from calld.policy.refusal import Refusal


def _count(n: int, noun: str) -> str:
    """'1 call', '2 calls': these lines are also texted to people, where a bracketed plural reads as a form."""
    return f"{n} {noun}{'' if n == 1 else 's'}"


def check_number_rate(number: str, calls_last_day: int, limit: int) -> Refusal | None:
    if calls_last_day < limit:
        return None
    return Refusal(
        "rate_limit",
        f"{number} has already been called {_count(calls_last_day, 'time')} in the last 24 hours, the limit "
        f"(CALLD_CALLS_PER_NUMBER_PER_DAY={limit}, across all users); try again tomorrow",
        f"That number has already been called {_count(calls_last_day, 'time')} in the last 24 hours, as often as I call "
        "one business; please try again tomorrow.",
    )


def check_number_busy(number: str, calls_on_line: int, limit: int) -> Refusal | None:
    """A business is not rung while calld is already on the line with it (another user's call, say):
    two of our calls at once would tie up its phone and it would hear the same robot twice."""
    if calls_on_line < limit:
        return None
    return Refusal(
        "rate_limit",
        f"calld is on the line with {number} right now ({_count(calls_on_line, 'call')}; CALLD_CALLS_PER_NUMBER_AT_ONCE={limit}, "
        "across all users); try again once that call has ended",
        "I'm on the phone with that business right now for someone else; please try again in a few minutes.",
    )


def check_user_rate(user: str, calls_last_hour: int, limit: int) -> Refusal | None:
    if calls_last_hour < limit:
        return None
    return Refusal(
        "rate_limit",
        f"user {user!r} has placed {_count(calls_last_hour, 'call')} in the last hour, the limit "
        f"(CALLD_CALLS_PER_USER_PER_HOUR={limit}); try again later",
        f"Your account has placed {_count(calls_last_hour, 'call')} in the last hour, as many as it may; please try again later.",
    )
