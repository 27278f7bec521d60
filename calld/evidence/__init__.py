"""Evidence: does the business's own speech hold a record? One public entry point, check_record
(calld/evidence/check.py, its rules at the top)."""

from calld.evidence.check import Accepted, Quote, Refused, Verdict, check_record

__all__ = ["Accepted", "Quote", "Refused", "Verdict", "check_record"]
