"""The one place where errors are sorted: waits and passing faults are retried later,
permission problems are named with what to grant, and anything else is a bug."""

from __future__ import annotations

import logging

import aiohttp

from agentjobs.adapters.kube import ApiError
from agentjobs.adapters.object_store import StorageError
from agentjobs.logic import admission


class RetryLater(Exception):
    """A wait that only time ends, such as an old object of the same name being removed."""


def transient(error: BaseException) -> bool:
    """Whether trying ``error``'s work again may succeed without anything else changing: an
    outage or overload of the API server or storage, a conflict with another writer, or a
    wait. A refusal (4xx but 408, 409 and 429) is given again to the same request."""
    if isinstance(error, RetryLater | aiohttp.ClientError | TimeoutError | StorageError):
        return True
    if isinstance(error, ApiError):
        return error.status in (0, 408, 409, 429) or error.status >= 500
    return False


def describe(error: ApiError) -> str:
    """An API error as an operator's log line; a denied permission says what to grant."""
    if admission.is_operator_permission(code=error.status, message=error.message):
        return (
            f"permission denied by the API server ({error.message}): grant it in the "
            "operator's Role or ClusterRole"
        )
    return str(error)


def log_retry(logger: logging.Logger, subject: str, error: BaseException, delay: float) -> None:
    """Log ``error`` at the level it deserves before ``subject`` is tried again.

    A wait or a conflict (another writer was first) is routine; an outage of the
    API server or of storage is a warning; a refusal is an error; anything else
    is unexpected and logged with its traceback.
    """
    suffix = f"; retrying in {delay:.0f} s"
    if isinstance(error, RetryLater):
        logger.info("%s: %s%s", subject, error, suffix)
    elif isinstance(error, ApiError):
        if error.status == 409:
            logger.info("%s: %s%s", subject, error, suffix)
        elif error.status in (0, 429) or error.status >= 500:
            logger.warning("%s: %s%s", subject, error, suffix)
        else:
            logger.error("%s: %s%s", subject, describe(error), suffix)
    elif isinstance(error, aiohttp.ClientError | TimeoutError | StorageError):
        logger.warning("%s: %s%s", subject, str(error) or type(error).__name__, suffix)
    else:
        logger.error("%s: unexpected error%s", subject, suffix, exc_info=error)
