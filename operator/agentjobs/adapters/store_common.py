"""What both S3 clients share: the operator's (:mod:`object_store`, through minio) and the
phase sidecars' (:mod:`presigned_store`, presigned URLs through urllib3).

It imports no client library, so a sidecar, which starts before each agent may, never loads
minio.
"""

from __future__ import annotations

import mimetypes


class StorageError(Exception):
    """The store could not be reached or refused a request (retry later); ``code`` is the
    store's own error code, when it gave one."""

    def __init__(self, message: str, code: str = "") -> None:
        super().__init__(message)
        self.code = code


def content_type(path: str) -> str:
    guessed, _ = mimetypes.guess_type(path)
    return guessed or "application/octet-stream"
