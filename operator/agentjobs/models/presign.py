"""The credentials endpoint's request, as both its server and the sidecars' client know it.

A sidecar POSTs ``{"objects": [{"method", "bucket", "key"}, ...]}`` to
``PRESIGN_PATH``: at most ``MAX_OBJECTS`` objects and ``MAX_BODY_BYTES`` of
body (the server refuses a larger one with 413), so the client batches by
both. A key may be 1,024 bytes of UTF-8 and JSON escapes each non-ASCII
character as up to twelve bytes, so a thousand long names pass a mebibyte.
"""

from __future__ import annotations

import json

from agentjobs.models.storage import ObjectLocation

PRESIGN_PATH = "/v1/presign"
MAX_OBJECTS = 1000
MAX_BODY_BYTES = 1024 * 1024
_OPEN, _SEPARATOR, _CLOSE = b'{"objects": [', b", ", b"]}"


def encoded_item(method: str, location: ObjectLocation) -> bytes:
    """One object of a request, as it appears in the body."""
    item = {"method": method, "bucket": location.bucket, "key": location.key}
    return json.dumps(item).encode()


def body(items: list[bytes]) -> bytes:
    """The request body of these encoded objects."""
    return _OPEN + _SEPARATOR.join(items) + _CLOSE


def batches(method: str, locations: list[ObjectLocation]) -> list[list[ObjectLocation]]:
    """``locations`` in order, cut into requests within both limits (an object too large to
    fit any request goes alone, for the server to refuse)."""
    found: list[list[ObjectLocation]] = []
    batch: list[ObjectLocation] = []
    size = len(_OPEN) + len(_CLOSE)
    for location in locations:
        item = len(encoded_item(method, location)) + (len(_SEPARATOR) if batch else 0)
        if batch and (len(batch) >= MAX_OBJECTS or size + item > MAX_BODY_BYTES):
            found.append(batch)
            batch, size = [], len(_OPEN) + len(_CLOSE)
            item -= len(_SEPARATOR)
        batch.append(location)
        size += item
    if batch:
        found.append(batch)
    return found
