"""Evidence: does the business's own speech hold a record? One entry point, check_record (check.py, rules at its top)."""

from calld.evidence.check import Accepted, Quote, Refused, Verdict, check_record

__all__ = ["Accepted", "Quote", "Refused", "Verdict", "check_record"]
