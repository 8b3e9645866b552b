"""The one place where errors are sorted: waits and passing faults are retried later,
permission problems are named with what to grant, and anything else is a bug."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TypeVar

import aiohttp
from pydantic import BaseModel

from agentjobs.adapters.kube import ApiError, JsonObject, Kube
from agentjobs.adapters.store_common import StorageError
from agentjobs.kube import admission
from agentjobs.kube.status_patch import status_patch

logger = logging.getLogger(__name__)
S = TypeVar("S", bound=BaseModel)


class RetryLater(Exception):
    """A wait that only time ends, such as an old object of the same name being removed."""


def transient(error: BaseException) -> bool:
    """Whether trying ``error``'s work again may succeed without anything else changing: an
    outage or overload of the API server or storage, a conflict with another writer, or a
    wait. A refusal (4xx but 408, 409 and 429) is given again to the same request, and so
    is etcd's refusal of a request too large (a 500)."""
    if isinstance(error, RetryLater | aiohttp.ClientError | TimeoutError | StorageError):
        return True
    if isinstance(error, ApiError):
        passing = error.status in (0, 408, 409, 429) or error.status >= 500
        return passing and not too_large(error)
    return False


class StatusTooLarge(Exception):
    """A status the API server refuses for its size even squeezed as far as it goes (R57):
    writing it again cannot help, so it is not retried."""


def too_large(error: ApiError) -> bool:
    """Whether the API server refused a write for its size: the request body (413), etcd's
    request limit, or a value the schema bounds (422 "Too long")."""
    message = error.message.lower()
    return (
        error.status == 413
        or "request is too large" in message
        or (error.status == 422 and "too long" in message)
    )


async def write_status(
    kube: Kube, path: str, patch: JsonObject, status: S, previous: S, *, squeeze: Callable[[S], S]
) -> tuple[JsonObject | None, S]:
    """Merge ``patch`` (``previous`` to ``status``) into the status at ``path``; refused for
    its size (R57), write ``squeeze(status)`` once instead. The API's answer (None: the
    object is gone) and the status written."""
    try:
        return await kube.merge_patch(path, {"status": patch}), status
    except ApiError as error:
        if not too_large(error):
            raise
        refused = error
    smallest = squeeze(status)
    written = await _write_smallest(kube, path, status_patch(smallest, previous), refused=refused)
    return written, smallest


async def _write_smallest(
    kube: Kube, path: str, patch: JsonObject | None, *, refused: ApiError
) -> JsonObject | None:
    """Write a status squeezed as far as it goes after ``refused`` said the full one was too
    large; StatusTooLarge when it is refused for its size too."""
    if patch is None:
        raise StatusTooLarge(f"{path}: {refused.message}") from refused
    logger.warning(
        "%s: refused for its size (%s); written again squeezed as far as it goes",
        path,
        refused.message,
    )
    try:
        return await kube.merge_patch(path, {"status": patch})
    except ApiError as error:
        if too_large(error):
            raise StatusTooLarge(f"{path}: {error.message}") from error
        raise


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
