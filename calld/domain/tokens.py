"""Spoken words as tokens: what the evidence check, the transcript assessment and the call's page compare.

Lower case, without punctuation or fillers; number words as digits ("twenty five" 25, "twelfth" 12th, "a dozen" 12; a
lone "o" is no zero); "dont" as "don't", "p m" as "pm", "o clock" as "oclock", "seven's" as "7 s", "19h30" as "19:30",
SHORT spellings in full ("tmrw"), a g dropped in writing said ("nothin'"), "one" after "the" and a word no number ("the
late one", but "the last one"), "day after tomorrow" as "overmorrow", "24 by 7" as "24/7"; a dash between two numbers or
two days a run ("9-6" is 9 to 6); a no of ease ("no problem") one "ok". Pure: no clock, no files; each token keeps its
place in the text.
"""

from __future__ import annotations

import contextlib
import functools
import re
from collections.abc import Sequence

from attrs import frozen
from text_to_num import alpha2digit, text2num

NT_STEMS = frozenset({"do", "does", "did", "ca", "wo", "is", "are", "was", "were", "could", "would", "should",
                      "have", "has", "had"})  # "dont", "cant"
FILLERS = ("um", "uh", "er", "erm", "ah", "oh", "hmm", "mm", "well", "like", "so", "basically", "eh")
EASE = ("problem", "problems", "trouble", "worries", "worry", "bother", "issue", "drama", "dramas", "sweat", "shortage", "wahala")  # "no problem", "no wahala", "not a problem": a yes
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
ORDINAL = ("st", "nd", "rd", "th")
SHORT = {"tmr": "tomorrow", "tmrw": "tomorrow", "tmw": "tomorrow", "tomoz": "tomorrow", "morra": "tomorrow",
         "tomorow": "tomorrow", "tonite": "tonight"}  # texted and dialect spellings
_TOKEN = re.compile(r"mm-hmm|uh-huh|\d{1,2}[:.h]\d{2}(?!\d)|\d+/\d+|\d+(?:st|nd|rd|th)?(?![a-z\d])|\d+[a-z](?![a-z\d])|\d+|[ap]\.\s?m\b\.?|[a-z]+(?:'[a-z]+)*")


@frozen
class Tok:
    word: str
    start: int
    end: int


@functools.lru_cache(maxsize=2048)  # a check reads each turn many times; calls concluding together share the loop
def tokens(text: str) -> tuple[Tok, ...]:
    """The words of `text`, normalised, with their places; fillers dropped; "seven's" is "7 s", "9 a m" "9 am"."""
    raw: list[Tok] = []
    lowered = re.sub(r"\bo clock\b", "o'clock", text.lower().replace("\u2019", "'"))  # speech-to-text's
    for m in _TOKEN.finditer(lowered):  # a g dropped in writing is said: "nothin'" is "nothing"
        word = m.group() + "g" if m.group().endswith("in") and lowered[m.end():m.end() + 1] == "'" else m.group()
        t, base = Tok(_normal(word), m.start(), m.end()), _normal(word).removesuffix("'s")
        if t.word == "m" and len(raw) > 1 and raw[-1].word in ("a", "p") and (raw[-2].word[0].isdigit() or number([raw[-2].word])):
            raw[-1] = Tok(raw[-1].word + "m", raw[-1].start, t.end)
            continue
        raw += [*_dash(text, raw[-1], t)] if raw else []
        raw += [Tok(base, t.start, t.end - 2), Tok("s", t.end - 2, t.end)] if base != t.word and (
            base == "oclock" or number([base]) is not None) else [t]
        raw += [Tok("th", t.end, t.end)] * (m.group()[0].isdigit() and m.group()[-2:] in ORDINAL)  # "12th"
    out, i = list[Tok](), 0
    while i < len(raw):
        if raw[i].word == "one" and i > 1 and raw[i - 2].word in ("the", "this", "that") and raw[i - 1].word.isalpha() and \
                raw[i - 1].word not in ("last", "only") and number([raw[i - 1].word]) is None:  # "the late one": no number
            out.append(raw[i])
            i += 1
            continue
        # "twenty five" before "twenty"; "seven thirty" stays two numbers, as "nine-thirty six" is 9 30 6 (a word
        # joined to a number before it by a dash goes on only by dashes: "five-forty-five" is 5 45)
        hyphened = i > 0 and text[raw[i - 1].end:raw[i].start] == "-" and number([raw[i - 1].word]) is not None
        for n in (3, 2, 1):
            group = raw[i:i + n]
            joined = all(text[a.end:b.start] == "-" or not hyphened and text[a.end:b.start].strip() in ("", "-")
                         for a, b in zip(group, group[1:]))  # not "five, seven"
            if len(group) == n and joined and all(t.word.isalpha() and t.word[-1] != "s" for t in group) and (value := number(words_of(group))) is not None:
                out += [Tok(value.rstrip("stndrh"), group[0].start, group[-1].end)] + [Tok("th", group[-1].end, group[-1].end)] * (
                    not value.isdigit())  # "twelfth" is "12th"
                i += n
                break
        else:
            out += _dozens(out, raw[i])
            i += 1
    return tuple(_unfilled(_joined(out)))


def _dozens(before: list[Tok], t: Tok) -> list[Tok]:
    """ "a dozen" is 12, "two dozen" 24, "half a dozen" 6: the number takes the place of the words before it."""
    if t.word not in ("dozen", "dozens") or not before or not (before[-1].word == "a" or before[-1].word.isdigit()):
        return [t]
    half = before[-1].word == "a" and len(before) > 1 and before[-2].word == "half"
    first = before[-2 if half else -1]
    value = 6 if half else 12 * (1 if before[-1].word == "a" else int(before[-1].word))
    del before[-2 if half else -1:]
    return [Tok(str(value), first.start, t.end)]


def _dash(text: str, a: Tok, b: Tok) -> tuple[Tok, ...]:
    """A dash between two numbers or two days is a run: "9-6", "Mon-Fri" say "9 to 6", "mon to fri"."""
    pair = all(x[0] != "0" and (":" in x or x.isdigit() and int(x) <= 24) for x in (a.word, b.word)) or \
        (weekday(a.word) is not None and weekday(b.word) is not None)  # not "2025-06-13", nor a phone number
    return (Tok("to", a.end, b.start),) if pair and text[a.end:b.start].strip() in ("-", "\u2013") else ()


def _joined(toks: list[Tok]) -> list[Tok]:
    """Phrases said as one word: "day after tomorrow" as "overmorrow" (as RELATIVE's are), "24 by 7" as "24/7"."""
    words, out, i = [t.word for t in toks], list[Tok](), 0
    while i < len(toks):
        if words[i:i + 3] in (["day", "after", "tomorrow"], ["24", "by", "7"]):
            out.append(Tok("overmorrow" if words[i] == "day" else "24/7", toks[i].start, toks[i + 2].end))
            i += 3
        else:
            out.append(toks[i])
            i += 1
    return out


def _unfilled(toks: list[Tok]) -> list[Tok]:
    """Tokens without FILLERS; a no of EASE ("no problem", "not a problem", "never any trouble") is one "ok": a yes."""
    words, drop = [t.word for t in toks], set[int]()
    for i, w in enumerate(words):
        k = i + 1 + (at(words, i + 1) in ("a", "any", "to"))
        if w in ("no", "not", "never", "nothing", "nae", "nuh") and at(words, k) in EASE and i not in drop:  # "nae bother"
            toks[i], drop = Tok("ok", toks[i].start, toks[k].end), drop | set(range(i + 1, k + 1))
    return [t for i, t in enumerate(toks) if i not in drop and t.word not in FILLERS]


def _normal(word: str) -> str:
    if word.endswith("nt") and word[:-2] in NT_STEMS:  # "dont", as speech-to-text writes it, is "don't"
        return word[:-2] + "n't"
    if word[0] in "ap" and "." in word:
        return word[0] + "m"
    if (m := re.fullmatch(r"(\d{1,2})[:.h](\d{2})", word)) is not None:  # "19h30" as written in French and Afrikaans
        return f"{m[1] if m[1].startswith('0') else int(m[1])}:{m[2]}"  # "07:00" keeps its 24-hour zero
    if word in SHORT:
        return SHORT[word]
    return re.sub(r"(?<=\d)(?:st|nd|rd|th)$", "", word).replace("o'clock", "oclock").replace("midday", "noon")


def number(words: Sequence[str]) -> str | None:
    if words == ["o"]:  # "four o' them", "yes o": "of" or a particle, never a zero alone ("oh" is a filler)
        return None
    with contextlib.suppress(ValueError):
        return str(text2num(" ".join(words), "en"))
    ordinal = alpha2digit(" ".join(words), "en")  # "twelfth", "twenty first"; not "first", "a second"
    return ordinal if re.fullmatch(r"\d+(?:st|nd|rd|th)", ordinal) else None


def at(words: Sequence[str], i: int) -> str:
    return words[i] if 0 <= i < len(words) else ""


def words_of(toks: Sequence[Tok]) -> list[str]:
    return [t.word for t in toks]


@functools.lru_cache(maxsize=4096)  # asked of every word of every turn a check reads, several times a check
def weekday(word: str) -> str | None:
    word = word.removesuffix("'s")  # "Friday's fine"; "Satdy", "Satdee": a day's first three letters and its end, said short
    return next((d for d in WEEKDAYS if word in (d, d + "s") or (len(word.rstrip("s")) >= 3 and d.startswith(word.rstrip("s")))
                 or re.fullmatch(d[:3] + r"[a-z]{0,3}d(?:y|ee|ai)s?", word)), None)
