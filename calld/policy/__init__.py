"""Policy: what is checked before anything is written or dialled.

Each rule is a small pure check that returns None (allowed) or a `Refusal` saying
why, in one line, and which setting (if any) allows it. The rules' state (opt-outs,
dial counts, the schedule) lives in the ledger; `calld.policy.gate` reads it and
runs the rules in order for every entry point (calld-ctl, a text message, the
scheduler when a queued request comes due).
"""

from calld.policy.refusal import Refusal, Refused

__all__ = ["Refusal", "Refused"]
