"""Errors sorted in one place: a conflict or a wait is routine, an outage a warning, a
refusal an error naming what to grant, anything else a bug with its traceback; only a
wait, a conflict or an outage is worth trying again as it was."""

from __future__ import annotations

import logging

import aiohttp
import pytest

from agentjobs.adapters.kube import ApiError
from agentjobs.adapters.store_common import StorageError
from agentjobs.runtime.errors import RetryLater, log_retry, transient


@pytest.mark.parametrize(
    ("error", "level"),
    [
        (RetryLater("an old Phase of that name is being removed"), logging.INFO),
        (ApiError(409, "Conflict", "the object has been modified"), logging.INFO),
        (ApiError(503, "ServiceUnavailable", "storage is (re)initializing"), logging.WARNING),
        (ApiError(429, "TooManyRequests", "slow down"), logging.WARNING),
        (aiohttp.ClientConnectionError("refused"), logging.WARNING),
        (StorageError("the store did not answer"), logging.WARNING),
        (ApiError(403, "Forbidden", "cannot create pods"), logging.ERROR),
        (ApiError(422, "Invalid", "spec.containers: Required value"), logging.ERROR),
        (KeyError("metadata"), logging.ERROR),
    ],
)
def test_each_error_is_logged_at_the_level_it_deserves(
    error: BaseException, level: int, caplog: pytest.LogCaptureFixture
) -> None:
    logger = logging.getLogger("agentjobs.test")
    with caplog.at_level(logging.DEBUG, logger="agentjobs.test"):
        log_retry(logger, "phase ns/p", error, 4.0)
    [record] = caplog.records
    assert record.levelno == level
    assert record.getMessage().startswith("phase ns/p: ")
    assert record.getMessage().endswith("retrying in 4 s")
    assert (record.exc_info is not None) is isinstance(error, KeyError)


RBAC_DENIAL = (
    'pods is forbidden: User "system:serviceaccount:ns:op" cannot create resource "pods" '
    'in API group "" in the namespace "ns"'
)


def test_a_refusal_says_what_to_grant(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.ERROR, logger="agentjobs.test"):
        error = ApiError(403, "Forbidden", RBAC_DENIAL)
        log_retry(logging.getLogger("agentjobs.test"), "x", error, 1)
    assert "grant it in the operator's Role or ClusterRole" in caplog.text


def test_a_403_from_admission_is_not_called_missing_rbac(caplog: pytest.LogCaptureFixture) -> None:
    message = 'pods "p" is forbidden: status unknown for quota: q, resources: pods'
    with caplog.at_level(logging.ERROR, logger="agentjobs.test"):
        log_retry(logging.getLogger("agentjobs.test"), "x", ApiError(403, "Forbidden", message), 1)
    assert message in caplog.text
    assert "grant" not in caplog.text


@pytest.mark.parametrize(
    ("error", "worth_retrying"),
    [
        (RetryLater("an old Phase of that name is being removed"), True),
        (ApiError(0, "", "no answer"), True),
        (ApiError(409, "Conflict", "the object has been modified"), True),
        (ApiError(408, "Timeout", "request timed out"), True),
        (ApiError(429, "TooManyRequests", "slow down"), True),
        (ApiError(500, "InternalError", "etcdserver: leader changed"), True),
        (ApiError(503, "ServiceUnavailable", "storage is (re)initializing"), True),
        (aiohttp.ClientConnectionError("refused"), True),
        (TimeoutError(), True),
        (StorageError("the store did not answer"), True),
        (ApiError(400, "BadRequest", "name part must consist of"), False),
        (ApiError(403, "Forbidden", "cannot create pods"), False),
        (ApiError(404, "NotFound", "the server could not find the requested resource"), False),
        (ApiError(413, "RequestEntityTooLarge", "request is too large"), False),
        (ApiError(500, "InternalError", "etcdserver: request is too large"), False),
        (ApiError(422, "Invalid", "spec.containers: Required value"), False),
        (KeyError("metadata"), False),
        (UnicodeEncodeError("utf-8", "\ud83d", 0, 1, "surrogates not allowed"), False),
    ],
)
def test_only_waits_conflicts_and_outages_are_worth_trying_again(
    error: BaseException, worth_retrying: bool
) -> None:
    assert transient(error) is worth_retrying
