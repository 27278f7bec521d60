"""Branded identifiers: `str` subclasses validated once, at construction.

Two phone numbers cannot be swapped for a user id by accident, and code past the
boundary never validates again. pydantic accepts them through
`__get_pydantic_core_schema__`; cattrs through the hook in `calld.runtime.journal`.
"""

from __future__ import annotations

import re
import secrets
from typing import Any, ClassVar, Self

from pydantic_core import core_schema


class Brand(str):
    """A validated string. Subclasses set `_pattern` and `_what` (said in errors)."""

    _pattern: ClassVar[re.Pattern[str]]
    _what: ClassVar[str]
    _hint: ClassVar[str] = ""

    def __new__(cls, value: object) -> Self:
        if isinstance(value, cls):
            return value
        if not isinstance(value, str):
            raise ValueError(f"{cls._what} must be a string, got {type(value).__name__}")
        text = cls._normalize(value)
        if not cls._pattern.fullmatch(text):
            shown = value if len(value) <= 40 else value[:37] + "..."
            near = cls._near(text)
            maybe = f"; did you mean {near!r}?" if near is not None and cls._pattern.fullmatch(near) else ""
            raise ValueError(f"{shown!r} is not {cls._what}{cls._hint}{maybe}")
        return super().__new__(cls, text)

    @classmethod
    def _normalize(cls, value: str) -> str:
        return value

    @classmethod
    def _near(cls, text: str) -> str | None:
        """A valid value the text was likely meant as, said back as a suggestion (never taken silently)."""
        return None

    @classmethod
    def __get_pydantic_core_schema__(cls, _source: Any, _handler: Any) -> core_schema.CoreSchema:
        return core_schema.no_info_after_validator_function(
            cls,
            core_schema.str_schema(),
            serialization=core_schema.plain_serializer_function_ser_schema(str),
        )


class E164(Brand):
    """A phone number in E.164 form: '+', a country code, at most 15 digits."""

    # ASCII digits only: \d also takes other scripts' digits ("+1555555014\u0664"), which the opt-out
    # list, the limits and the own-number check would compare as another number, and dial.
    _pattern = re.compile(r"\+[1-9][0-9]{6,14}")
    _what = "an E.164 phone number"
    _hint = " (write it as + then country code and number, digits only, e.g. +14155550123)"

    @classmethod
    def _normalize(cls, value: str) -> str:
        # People paste "+1 (415) 555-0123"; spaces, dashes, dots and brackets carry no meaning.
        return re.sub(r"[\s\-().]", "", value)

    def masked(self) -> str:
        """The number with all but its last two digits hidden, for redacted reports."""
        return self[:2] + "*" * (len(self) - 4) + self[-2:]


DEFAULT_REGION = "US"  # CALLD_REGION: where a number typed without + is dialled from
def _nanp_regions() -> frozenset[str]:
    import phonenumbers

    return frozenset(phonenumbers.COUNTRY_CODE_TO_REGION_CODE[1])


_TYPED = re.compile(r"[0-9\s\-().]+")  # a national number as people type it: ASCII digits and separators


def typed_number(value: object, region: str = DEFAULT_REGION) -> E164:
    """A phone number as people type it, as the E.164 number that will be dialled: E.164 itself
    ("+1 (415) 555-0123"), or the national format of `region` ("415-555-0123", "(415) 555-0123",
    "1 415 555 0123" in the US), read by libphonenumber. ValueError says what to give instead.

    calld-ctl's --to, the control API's `to` and a text's number all pass here, so one number is
    read one way everywhere."""
    import phonenumbers
    from phonenumbers import ValidationResult

    example = phonenumbers.example_number(region)
    ways = (f"as dialled in {region}"
            + (f", e.g. {phonenumbers.format_number(example, phonenumbers.PhoneNumberFormat.NATIONAL)}," if example else "")
            + " or in E.164, e.g. +14155550123")
    hint = f"give it {ways}"
    if isinstance(value, str) and (letters := list(dict.fromkeys(re.findall(r"[A-Za-z]", value)))):
        # An O for a 0, an extension, a vanity number ("1-800-FLOWERS"): say which letters, not "not E.164".
        shown = value.strip() if len(value.strip()) <= 40 else value.strip()[:37] + "..."
        raise ValueError(f"{shown!r} has {'a letter' if len(letters) == 1 else 'letters'} ({', '.join(letters)}), and calld "
                         f"dials digits only: give the number in digits, {ways}")
    if not isinstance(value, str) or value.strip().startswith("+") or not _TYPED.fullmatch(value.strip()):
        return E164(value)  # E.164, or not a number: its own rules and message
    text = value.strip()
    digits = re.sub(r"\D", "", text)
    # A short code is never a business: say what it is, not that it is too short for a number.
    if phonenumbers.is_emergency_number(digits, region):
        raise ValueError(f"{text!r} is an emergency number in {region}; calld never calls emergency services "
                         "(call it yourself if you need help)")
    if len(digits) == 3 and digits[0] in "23456789" and digits[1:] == "11" and region in _nanp_regions():
        raise ValueError(f"{text!r} is an N11 service code (like 411 or 311), not a business's number; calld never "
                         f"calls those: give the business's whole number, {ways}")
    try:
        number = phonenumbers.parse(text, region)
    except phonenumbers.NumberParseException:
        raise ValueError(f"{text!r} is not a phone number: {hint}") from None
    match phonenumbers.is_possible_number_with_reason(number):
        case ValidationResult.IS_POSSIBLE:
            return E164(phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.E164))
        case ValidationResult.IS_POSSIBLE_LOCAL_ONLY:
            raise ValueError(f"{text!r} has no area code: give the whole number, {ways}")
        case ValidationResult.TOO_SHORT | ValidationResult.INVALID_LENGTH:
            raise ValueError(f"{text!r} is too short for a phone number in {region}: {hint}")
        case ValidationResult.TOO_LONG:
            raise ValueError(f"{text!r} is too long for a phone number in {region}: {hint}")
        case _:
            raise ValueError(f"{text!r} is not a phone number in {region}: {hint}")


def region_problem(region: str) -> str | None:
    """None when `region` is a region libphonenumber knows (ISO 3166 alpha-2, e.g. US, CA, GB)."""
    import phonenumbers

    if region in phonenumbers.SUPPORTED_REGIONS:
        return None
    return f"{region!r} is not a region code libphonenumber knows; give two capital letters, e.g. US, CA or GB"


class UserId(Brand):
    _pattern = re.compile(r"[a-z0-9][a-z0-9_.-]{0,63}")
    _what = "a user id"
    _hint = " (lowercase letters, digits, '.', '_' or '-', starting with a letter or digit, at most 64)"

    @classmethod
    def _near(cls, text: str) -> str | None:
        return text.strip().lower()  # "Alice" is one user with "alice" only if the operator says so


class FirstName(Brand):
    """The name the agent calls on behalf of: letters of any script, spaces, hyphens, apostrophes.

    It is spoken inside a disclosure sentence the app builds (calld.core.plan.disclosure_line),
    so it can hold nothing that reads as a sentence of its own (see calld.domain.words)."""

    _pattern = re.compile(r".{1,40}", re.DOTALL)  # the real rule is words.name_problem, with its reason
    _what = "a first name"
    _hint = " (letters, spaces, hyphens or apostrophes, at most 40)"

    @classmethod
    def _normalize(cls, value: str) -> str:
        from calld.domain.words import control_problem, name_problem, normalize_name

        text = normalize_name(value)
        if (problem := control_problem(value) or name_problem(text)) is not None:
            shown = value if len(value) <= 40 else value[:37] + "..."
            raise ValueError(f"{shown!r} is not {cls._what}: {problem}{cls._hint}")
        return text


class CallControlId(Brand):
    """Telnyx's opaque call id (e.g. 'v3:...'). Never parsed, only carried."""

    _pattern = re.compile(r"[\x21-\x7e]{1,256}")
    _what = "a Telnyx call_control_id"


class StreamId(Brand):
    _pattern = re.compile(r"[\x21-\x7e]{1,256}")
    _what = "a Telnyx stream_id"


class RunId(Brand):
    """calld's own id for one request's call; also the Telnyx client_state."""

    _pattern = re.compile(r"run_[0-9a-f]{20}")
    _what = "a run id"
    _hint = " (run_ followed by 20 hex digits)"

    @classmethod
    def new(cls) -> RunId:
        return cls("run_" + secrets.token_hex(10))


BRANDS: tuple[type[Brand], ...] = (E164, UserId, FirstName, CallControlId, StreamId, RunId)
