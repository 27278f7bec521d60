"""Where calld may phone: classified with libphonenumber's data (the `phonenumbers` package).

Refused: emergency numbers and N11 service codes (in the area code or the exchange),
directory assistance (NPA-555-1212), the 976 pay-per-call exchange, premium-rate and shared-cost numbers, any of calld's own numbers, numbers that are not in
service anywhere, and (unless CALLD_ALLOW_NON_NANP) numbers outside the North American
Numbering Plan. The NANP's fiction range (NXX-555-0100 to 0199) is allowed even where the
area code is not assigned: it rings no one, and it is what the stub world and the tests use.
"""

from __future__ import annotations

import functools
from collections.abc import Collection

import phonenumbers
from attrs import frozen
from phonenumbers import PhoneNumberType

from calld.policy.refusal import Refusal

NANP_COUNTRY_CODE = 1


@frozen
class Destination:
    """A parsed number and what the window and the refusals need to know about it."""

    e164: str
    number: phonenumbers.PhoneNumber
    nanp: bool
    fiction: bool

    @property
    def area_code(self) -> str:
        return str(self.number.national_number)[:3]


def parse_destination(e164: str) -> Destination | Refusal:
    try:
        number = phonenumbers.parse(e164, None)
    except phonenumbers.NumberParseException as exc:
        return Refusal("destination", f"{e164} is not a phone number calld can read ({exc}); write it in E.164, e.g. +14155550123")
    nanp = number.country_code == NANP_COUNTRY_CODE
    national = str(number.national_number)
    fiction = nanp and len(national) == 10 and national[3:6] == "555" and 100 <= int(national[6:]) <= 199
    return Destination(e164, number, nanp, fiction)


def _n11(code: str) -> bool:
    return len(code) == 3 and code[0] in "23456789" and code[1:] == "11"


@frozen
class _Reading:
    """What libphonenumber says of a number, for check_destination."""

    dest: Destination
    emergency: bool
    valid: bool
    kind: PhoneNumberType | None


@functools.lru_cache(maxsize=1024)  # a request's number is checked twice as it is admitted (a millisecond each)
def _read(e164: str) -> _Reading | Refusal:
    dest = parse_destination(e164)
    if isinstance(dest, Refusal):
        return dest
    number, national = dest.number, str(dest.number.national_number)
    region = phonenumbers.region_code_for_number(number) or ("US" if dest.nanp else None)
    valid = phonenumbers.is_valid_number(number)
    return _Reading(dest, region is not None and phonenumbers.connects_to_emergency_number(national, region), valid,
                    phonenumbers.number_type(number) if valid else None)


def check_destination(e164: str, *, own_numbers: Collection[str], allow_non_nanp: bool) -> Refusal | None:
    """None when calld may phone `e164`; otherwise the refusal, naming the setting that allows it (if any)."""
    read = _read(e164)
    if isinstance(read, Refusal):
        return read
    dest, national = read.dest, str(read.dest.number.national_number)
    if read.emergency:
        return Refusal("destination", f"{e164} reaches an emergency service; calld never calls emergency numbers")
    if dest.nanp and (_n11(national[:3]) or _n11(national[3:6])):
        code = national[:3] if _n11(national[:3]) else national[3:6]
        return Refusal("destination", f"{e164} uses the N11 service code {code} (like 911 or 411); calld never calls N11 numbers")
    if dest.nanp and national[3:] == "5551212":
        return Refusal("destination", f"{e164} is directory assistance (555-1212), a charged operator service; "
                                      "calld calls businesses, not information services")
    if dest.nanp and national[3:6] == "976":
        return Refusal("destination", f"{e164} is in the 976 exchange, pay-per-call information lines (like 1-900); "
                                      "calld never calls those")
    if e164 in own_numbers:
        return Refusal("destination", f"{e164} is one of calld's own numbers; calld does not call itself")
    if not dest.nanp and not allow_non_nanp:
        return Refusal(
            "destination",
            f"{e164} is outside the North American Numbering Plan (+1); set CALLD_ALLOW_NON_NANP=1 to allow international calls",
            f"I only call numbers in North America (+1), so I can't call {e164}.",
        )
    valid, kind = read.valid, read.kind
    # Premium and shared cost first: a 555-01xx line in a 900 area code is still a 900 number.
    if kind == PhoneNumberType.PREMIUM_RATE:
        return Refusal("destination", f"{e164} is a premium-rate number (the caller pays extra); calld never calls those")
    if kind == PhoneNumberType.SHARED_COST:
        return Refusal("destination", f"{e164} is a shared-cost number (the caller pays part); calld never calls those")
    if dest.fiction:
        return None
    if not valid:
        return Refusal("destination", f"{e164} cannot be a real phone number: its digits fit no numbering plan; check them")
    return None
