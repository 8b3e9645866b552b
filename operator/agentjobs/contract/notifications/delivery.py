"""R51: what one delivery attempt's answer does to its notification's record.

- 2xx: Delivered.
- 5xx, 429, a timeout or a connection/TLS/DNS error: tried again later with
  exponential backoff (``FIRST_DELAY`` or the operator's own first delay, doubling
  up to ``MAX_DELAY``), or
  later still when the receiver sends ``Retry-After``; Failed once
  ``RETRY_WINDOW`` (24 h) has passed since the first attempt. The last try is
  made at the window's end, however long the backoff or Retry-After.
- Any other 4xx: Failed at once (the receiver refused this event for good).
- 1xx and 3xx: Failed at once. Redirects are not followed, since following
  one would call a URL the allow-list never judged.
- Not sent by the operator: retried or Failed as its cause says.

The record carries everything a restarted operator needs to go on
(``firstAttemptAt``, ``nextAttemptAt``, ``attempts``), so retries resume from
the status, never from memory.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from email.utils import parsedate_to_datetime
from http import HTTPStatus

from agentjobs.models.notifications import (
    Answer,
    HttpAnswer,
    NoAnswer,
    NotificationRecord,
    NotSent,
)

FIRST_DELAY = timedelta(seconds=10)
MAX_DELAY = timedelta(hours=1)
RETRY_WINDOW = timedelta(hours=24)
REASON_LIMIT = 200


def backoff(attempts: int, *, first: timedelta = FIRST_DELAY) -> timedelta:
    """The wait after the ``attempts``-th failed attempt: ``first`` (10 s), then doubling, at
    most 1 h (``first`` is the operator's ``--webhook-backoff-seconds``)."""
    exponent = min(max(attempts - 1, 0), 16)
    return min(first * (1 << exponent), MAX_DELAY)


def retry_after(value: str | None, *, now: datetime) -> timedelta | None:
    """``Retry-After`` (seconds or an HTTP date) as a wait; None if absent or unreadable."""
    if value is None:
        return None
    text = value.strip()
    if text.isdigit():
        return timedelta(seconds=min(int(text), int(RETRY_WINDOW.total_seconds())))
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        return None
    return max(when - now, timedelta(0))


def _retryable(answer: Answer) -> bool:
    if isinstance(answer, HttpAnswer):
        return answer.status >= 500 or answer.status == 429
    if isinstance(answer, NotSent):
        return answer.retry
    return True


def describe(answer: Answer) -> str:
    """The record's ``lastError``: short, printable, never the URL."""
    if isinstance(answer, HttpAnswer):
        # R59: the status and a fixed description, never what the receiver sent.
        try:
            text = f"HTTP {answer.status} {HTTPStatus(answer.status).phrase}"
        except ValueError:
            text = f"HTTP {answer.status}"
        if 300 <= answer.status < 400:
            text += " (a redirect, which is not followed: point url at the final address)"
        return text
    if isinstance(answer, NoAnswer):
        return answer.error[:REASON_LIMIT]
    return f"not sent: {answer.error}"[:REASON_LIMIT]


def after_attempt(
    record: NotificationRecord,
    answer: Answer,
    *,
    now: datetime,
    first_delay: timedelta = FIRST_DELAY,
) -> NotificationRecord:
    """The record once ``answer`` came back from the attempt made at ``now``."""
    first = record.first_attempt_at or now
    attempts = record.attempts + 1
    base = {"attempts": attempts, "first_attempt_at": first, "next_attempt_at": None}
    if isinstance(answer, HttpAnswer) and 200 <= answer.status < 300:
        return record.model_copy(
            update={**base, "state": "Delivered", "delivered_at": now, "last_error": None}
        )
    error = describe(answer)
    deadline = first + RETRY_WINDOW
    if not _retryable(answer):
        return record.model_copy(update={**base, "state": "Failed", "last_error": error})
    if now >= deadline:
        hours = int(RETRY_WINDOW.total_seconds() // 3600)
        return record.model_copy(
            update={
                **base,
                "state": "Failed",
                "last_error": f"{error} (gave up after {attempts} attempts in {hours} h)",
            }
        )
    wait = backoff(attempts, first=first_delay)
    if isinstance(answer, HttpAnswer):
        wait = max(wait, retry_after(answer.retry_after, now=now) or wait)
    return record.model_copy(
        update={
            **base,
            "state": "Pending",
            "last_error": error,
            "next_attempt_at": min(now + wait, deadline),
        }
    )


def refused(record: NotificationRecord, reason: str) -> NotificationRecord:
    """R49: a target the operator will not call is Failed without an attempt."""
    return record.model_copy(
        update={"state": "Failed", "last_error": reason, "next_attempt_at": None}
    )
