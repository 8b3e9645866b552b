"""R51: what each answer of a delivery attempt does to the notification's record.

Cases: 2xx is Delivered with its time; 5xx, 429, timeouts and connection
errors stay Pending with an exponential backoff capped at an hour, a later
Retry-After (seconds or an HTTP date) honoured and an unreadable one
ignored; the 24 h window counts from the first attempt, its last try falls
on the window's end and the next failure is Failed saying it gave up; any
other 4xx, a redirect and a 1xx are Failed at once; a not-sent attempt
follows its cause; the error kept is the status and its standard phrase (R59); a refused target
is Failed with no attempt; a delivered record after a retry keeps its id.
"""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta

import pytest

from agentjobs.contract.notifications import delivery
from agentjobs.models.notifications import (
    Answer,
    HttpAnswer,
    NoAnswer,
    NotificationRecord,
    NotSent,
)

NOW = datetime(2026, 12, 1, 12, tzinfo=UTC)
PENDING = NotificationRecord(
    notify=0, target="hooks.example.com", event="Finished", id="uid-execution-finished",
    state="Pending",
)  # fmt: skip


def test_r51_a_2xx_is_delivered() -> None:
    record = delivery.after_attempt(PENDING, HttpAnswer(204), now=NOW)
    assert record.state == "Delivered"
    assert record.delivered_at == NOW
    assert record.attempts == 1
    assert record.first_attempt_at == NOW
    assert record.next_attempt_at is None
    assert record.last_error is None
    assert record.id == PENDING.id


@pytest.mark.parametrize(
    "answer",
    [
        HttpAnswer(500),
        HttpAnswer(503),
        HttpAnswer(429),
        NoAnswer("no answer from hooks.example.com within 10 s"),
        NoAnswer("could not connect to hooks.example.com: Connection refused"),
        NotSent("the signing Secret hooks has no key key", retry=True),
    ],
)
def test_r51_errors_5xx_and_429_are_retried_later(answer: Answer) -> None:
    record = delivery.after_attempt(PENDING, answer, now=NOW)
    assert record.state == "Pending"
    assert record.next_attempt_at == NOW + delivery.FIRST_DELAY
    assert record.last_error


@pytest.mark.parametrize(
    "answer",
    [
        HttpAnswer(400),
        HttpAnswer(401),
        HttpAnswer(404),
        HttpAnswer(410),
        HttpAnswer(301),
        HttpAnswer(101),
        NotSent("hooks.example.com resolves only to addresses the operator never calls", False),
    ],
)
def test_r51_other_4xx_redirects_and_final_refusals_fail_at_once(answer: Answer) -> None:
    record = delivery.after_attempt(PENDING, answer, now=NOW)
    assert record.state == "Failed"
    assert record.attempts == 1
    assert record.next_attempt_at is None


def test_a_redirect_says_it_is_not_followed() -> None:
    record = delivery.after_attempt(PENDING, HttpAnswer(302), now=NOW)
    assert "not followed" in (record.last_error or "")


def test_r51_the_backoff_doubles_up_to_an_hour() -> None:
    waits = [delivery.backoff(attempt) for attempt in range(1, 12)]
    assert waits[:4] == [timedelta(seconds=s) for s in (10, 20, 40, 80)]
    assert waits[-1] == timedelta(hours=1)
    assert all(a <= b for a, b in itertools.pairwise(waits))
    assert delivery.backoff(10_000) == timedelta(hours=1)


@pytest.mark.parametrize(
    ("header", "wait"),
    [
        ("120", timedelta(seconds=120)),
        ("Tue, 01 Dec 2026 12:05:00 GMT", timedelta(minutes=5)),
        ("1", delivery.FIRST_DELAY),  # shorter than the backoff: the backoff stands
        ("soon", delivery.FIRST_DELAY),
        ("-5", delivery.FIRST_DELAY),
        ("Tue, 01 Dec 2026 12:05:00", delivery.FIRST_DELAY),  # no zone: unreadable
    ],
)
def test_r51_retry_after_is_honoured_when_later_than_the_backoff(
    header: str, wait: timedelta
) -> None:
    record = delivery.after_attempt(PENDING, HttpAnswer(503, retry_after=header), now=NOW)
    assert record.next_attempt_at == NOW + wait


def test_r51_retries_end_after_24_hours_from_the_first_attempt() -> None:
    record, now = PENDING, NOW
    while record.state == "Pending":
        record = delivery.after_attempt(record, HttpAnswer(500), now=now)
        assert record.first_attempt_at == NOW
        if record.next_attempt_at is not None:
            assert record.next_attempt_at <= NOW + delivery.RETRY_WINDOW
            now = record.next_attempt_at
    assert record.state == "Failed"
    assert now == NOW + delivery.RETRY_WINDOW  # the last try falls on the window's end
    gave_up = f"(gave up after {record.attempts} attempts in 24 h)"
    assert record.last_error == f"HTTP 500 Internal Server Error {gave_up}"
    assert 25 < record.attempts < 40


def test_a_retry_after_past_the_window_moves_the_try_to_the_windows_end() -> None:
    record = delivery.after_attempt(PENDING, HttpAnswer(429, retry_after="999999"), now=NOW)
    assert record.next_attempt_at == NOW + delivery.RETRY_WINDOW


def test_r51_a_later_success_is_delivered_with_every_attempt_counted() -> None:
    record = delivery.after_attempt(PENDING, HttpAnswer(500), now=NOW)
    record = delivery.after_attempt(record, HttpAnswer(500), now=NOW + timedelta(seconds=10))
    record = delivery.after_attempt(record, HttpAnswer(200), now=NOW + timedelta(seconds=30))
    assert (record.state, record.attempts) == ("Delivered", 3)
    assert record.first_attempt_at == NOW
    assert record.delivered_at == NOW + timedelta(seconds=30)


def test_r59_the_error_kept_is_the_status_and_a_fixed_description() -> None:
    for status, error in (
        (400, "HTTP 400 Bad Request"),
        (503, "HTTP 503 Service Unavailable"),
        (499, "HTTP 499"),
        (599, "HTTP 599"),
    ):
        record = delivery.after_attempt(PENDING, HttpAnswer(status), now=NOW)
        assert record.last_error == error


def test_r49_a_refused_target_is_failed_without_an_attempt() -> None:
    record = delivery.refused(PENDING, "http://x is not allowed: it was never called")
    assert record.state == "Failed"
    assert record.attempts == 0
    assert record.first_attempt_at is None
    assert record.last_error == "http://x is not allowed: it was never called"
