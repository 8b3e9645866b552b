"""R32: does a last message say at least eight words of substance?

Sentences that only announce completion ("Done.", "All set", "Task
complete", "Finished!", "Thanks") and refusals that give no reason ("I
cannot do that.") are removed first; the words left are counted.

Decisions where the contract is silent: a sentence announces completion
when every word in it belongs to a small vocabulary of sign-offs (so "The
task is complete, thank you!" goes, "The report is complete" stays). A
refusal gives its reason when it says why ("because", "since", "due to",
"as", a colon, ...). A word is a run of letters or digits, so punctuation,
emoji and markdown do not count.
"""

from __future__ import annotations

import re

REQUIRED_WORDS = 8
_CURLY_APOSTROPHE = "\u2019"

_SENTENCE_END = re.compile(r"(?<=[.!?…])\s+|\n+")
_WORD = re.compile(r"[^\W_]+(?:['\u2019][^\W_]+)*")

_SIGN_OFF_TEXT = """
    done all set task tasks complete completed completion finished finish finishing
    thanks thank you ty cheers ok okay great good perfect everything is are has have
    been was were i i'm im i've ive we we're we've it it's its that that's this the a
    now here there go you're all's successfully success job work let me know if need
    needs anything else hope helps more further questions feel free to ask happy help
    and so yes well
"""
_SIGN_OFF_WORDS = frozenset(_SIGN_OFF_TEXT.split())

_REFUSAL = re.compile(
    r"\b(?:i\s+(?:cannot|can ?not|can't|can\u2019t|won't|won\u2019t|will not|am unable|am not able)"
    r"|i'm\s+(?:unable|not able)|i\u2019m\s+(?:unable|not able)|unable to|not able to"
    r"|i\s+(?:must|have to)\s+(?:decline|refuse)|i\s+(?:decline|refuse))\b",
    re.IGNORECASE,
)
_REASON = re.compile(
    r"\b(?:because|since|due to|as|given|without|so|otherwise|unless|until|but|which|"
    r"requires?|missing|lacks?|denied|rejects?|forbidden|permission)\b|[:;\u2014\u2013(]",
    re.IGNORECASE,
)


def _words(text: str) -> list[str]:
    return [word.lower().replace(_CURLY_APOSTROPHE, "'") for word in _WORD.findall(text)]


def _is_sign_off(words: list[str]) -> bool:
    return all(word in _SIGN_OFF_WORDS for word in words)


def _is_bare_refusal(sentence: str) -> bool:
    return bool(_REFUSAL.search(sentence)) and not _REASON.search(sentence)


def substantive_words(message: str) -> list[str]:
    """The words of ``message`` left once sign-offs and reasonless refusals are removed."""
    kept: list[str] = []
    for sentence in _SENTENCE_END.split(message):
        words = _words(sentence)
        if not words or _is_sign_off(words) or _is_bare_refusal(sentence):
            continue
        kept.extend(words)
    return kept


def has_substance(message: str | None) -> bool:
    """R32: at least eight words of substance."""
    return message is not None and len(substantive_words(message)) >= REQUIRED_WORDS
