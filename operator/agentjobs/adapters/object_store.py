"""S3-compatible storage through the ``minio`` client (MinIO, AWS S3, versitygw, ...).

Settings come from the environment (``AGENTJOBS_S3_*``); the credentials are
read there and never logged, nor written into a resource. Every call here is
blocking: async callers go through :func:`asyncio.to_thread`.
"""

from __future__ import annotations

import hashlib
import io
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import IO, BinaryIO
from urllib.parse import urlsplit

import urllib3
from minio import Minio
from minio.deleteobjects import DeleteObject
from minio.error import MinioException, S3Error

from agentjobs.adapters.checked_file import write_checked
from agentjobs.adapters.store_common import StorageError, content_type
from agentjobs.models.storage import ObjectLocation

ENV_ENDPOINT = "AGENTJOBS_S3_ENDPOINT"
ENV_BUCKET = "AGENTJOBS_S3_BUCKET"
ENV_REGION = "AGENTJOBS_S3_REGION"
ENV_CA_FILE = "AGENTJOBS_S3_CA_FILE"
ENV_ACCESS_KEY = "AGENTJOBS_S3_ACCESS_KEY"
ENV_SECRET_KEY = "AGENTJOBS_S3_SECRET_KEY"
DEFAULT_BUCKET = "agentjobs"
READ_CHUNK = 1024 * 1024


class StorageNotConfigured(StorageError):
    """No ``AGENTJOBS_S3_ENDPOINT`` was given."""


@dataclass(frozen=True)
class StorageSettings:
    """Where the store is and how to authenticate (``repr`` hides the keys)."""

    endpoint: str
    bucket: str
    region: str | None = None
    ca_file: str | None = None
    access_key: str = field(default="", repr=False)
    secret_key: str = field(default="", repr=False)

    @classmethod
    def from_environment(cls, environ: Mapping[str, str] = os.environ) -> StorageSettings:
        endpoint = environ.get(ENV_ENDPOINT, "").strip()
        if not endpoint:
            raise StorageNotConfigured(f"{ENV_ENDPOINT} is not set")
        parts = urlsplit(endpoint if "://" in endpoint else f"https://{endpoint}")
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise StorageError(f"{ENV_ENDPOINT} must be an http(s) URL, got {endpoint!r}")
        return cls(
            endpoint=f"{parts.scheme}://{parts.netloc}",
            bucket=environ.get(ENV_BUCKET) or DEFAULT_BUCKET,
            region=environ.get(ENV_REGION) or None,
            ca_file=environ.get(ENV_CA_FILE) or None,
            access_key=environ.get(ENV_ACCESS_KEY, ""),
            secret_key=environ.get(ENV_SECRET_KEY, ""),
        )

    def public_environment(self) -> dict[str, str]:
        """The settings a container needs, without the credentials."""
        values = {ENV_ENDPOINT: self.endpoint, ENV_BUCKET: self.bucket}
        if self.region:
            values[ENV_REGION] = self.region
        return values


class _HashingReader(io.RawIOBase):
    """Reads a file while hashing exactly the bytes handed to the uploader."""

    def __init__(self, source: BinaryIO) -> None:
        self._source = source
        self.digest = hashlib.sha256()

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        data = self._source.read(size)
        self.digest.update(data)
        return data


class StoredObject:
    """An object being read: its size, then its bytes a chunk at a time."""

    def __init__(self, response: urllib3.BaseHTTPResponse, location: ObjectLocation) -> None:
        self._response = response
        self._location = location
        self.size = int(response.headers.get("Content-Length") or 0)

    def read(self) -> bytes:
        """The next chunk; b"" at the end."""
        try:
            return self._response.read(READ_CHUNK)
        except (urllib3.exceptions.HTTPError, OSError) as error:
            raise StorageError(f"download of {self._location.url}: {error}") from error

    def read_all(self) -> bytes:
        """Every byte left, and closed."""
        try:
            return self._response.read()
        except (urllib3.exceptions.HTTPError, OSError) as error:
            raise StorageError(f"download of {self._location.url}: {error}") from error
        finally:
            self.close()

    def close(self) -> None:
        self._response.close()
        self._response.release_conn()


class ObjectStore:
    """Blocking object operations on one S3-compatible endpoint."""

    def __init__(self, settings: StorageSettings) -> None:
        self.settings = settings
        parts = urlsplit(settings.endpoint)
        http_client = None
        if settings.ca_file:
            http_client = urllib3.PoolManager(ca_certs=settings.ca_file, maxsize=16)
        self._client = Minio(
            parts.netloc,
            access_key=settings.access_key,
            secret_key=settings.secret_key,
            secure=parts.scheme == "https",
            region=settings.region,
            http_client=http_client,
        )

    def ensure_bucket(self, bucket: str) -> None:
        try:
            if not self._client.bucket_exists(bucket):
                self._client.make_bucket(bucket)
        except S3Error as error:
            if error.code not in ("BucketAlreadyOwnedByYou", "BucketAlreadyExists"):
                raise StorageError(f"bucket {bucket!r}: {error.code}: {error.message}") from error
        except (MinioException, urllib3.exceptions.HTTPError, OSError) as error:
            raise StorageError(f"bucket {bucket!r}: {error}") from error

    def bucket_exists(self, bucket: str) -> bool:
        try:
            return self._client.bucket_exists(bucket)
        except S3Error as error:
            raise StorageError(f"bucket {bucket!r}: {error.code}: {error.message}") from error
        except (MinioException, urllib3.exceptions.HTTPError, OSError) as error:
            raise StorageError(f"bucket {bucket!r}: {error}") from error

    def presigned_url(self, method: str, location: ObjectLocation, *, seconds: int) -> str:
        """A URL that lets its holder ``method`` (GET or PUT) this one object for ``seconds``;
        computed here, without a request (but the first for a bucket of unknown region)."""
        expires = timedelta(seconds=seconds)
        try:
            if method == "PUT":
                return self._client.presigned_put_object(location.bucket, location.key, expires)
            return self._client.presigned_get_object(location.bucket, location.key, expires)
        except (MinioException, urllib3.exceptions.HTTPError, OSError) as error:
            raise StorageError(f"presigning {method} of {location.url}: {error}") from error

    def put_file(self, location: ObjectLocation, path: Path, *, size: int) -> str:
        """Upload ``size`` bytes of a regular file (never through a symlink); their SHA-256."""
        try:
            descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
            with os.fdopen(descriptor, "rb") as source:
                reader = _HashingReader(source)
                self._client.put_object(
                    location.bucket,
                    location.key,
                    reader,  # type: ignore[arg-type]
                    length=size,
                    content_type=content_type(location.key),
                )
                return reader.digest.hexdigest()
        except (MinioException, urllib3.exceptions.HTTPError) as error:
            raise StorageError(f"upload of {location.url}: {error}") from error

    def put_bytes(self, location: ObjectLocation, data: bytes, *, media_type: str) -> None:
        self.put_stream(location, io.BytesIO(data), size=len(data), media_type=media_type)

    def put_stream(
        self, location: ObjectLocation, stream: IO[bytes], *, size: int, media_type: str
    ) -> None:
        """Upload ``size`` bytes read from ``stream`` (from its current position)."""
        try:
            self._client.put_object(
                location.bucket,
                location.key,
                stream,  # type: ignore[arg-type]
                size,
                content_type=media_type,
            )
        except (MinioException, urllib3.exceptions.HTTPError, OSError) as error:
            raise StorageError(f"upload of {location.url}: {error}") from error

    def get_bytes(self, location: ObjectLocation) -> bytes | None:
        """The object's bytes, or None when there is no such object."""
        stored = self.open(location)
        return None if stored is None else stored.read_all()

    def get_range(self, location: ObjectLocation, *, offset: int, length: int) -> bytes | None:
        """Up to ``length`` bytes from ``offset`` (fewer at the end; none past it), or None
        when there is no such object."""
        try:
            stored = self.open(location, offset=offset, length=length)
        except StorageError as error:
            if error.code == "InvalidRange":
                return b""
            raise
        return None if stored is None else stored.read_all()

    def open(
        self, location: ObjectLocation, *, offset: int = 0, length: int = 0
    ) -> StoredObject | None:
        """The object (``length`` bytes from ``offset``, 0: to its end), to read and close;
        None when there is no such object."""
        try:
            response = self._client.get_object(
                location.bucket, location.key, offset=offset, length=length
            )
        except S3Error as error:
            if error.code in ("NoSuchKey", "NoSuchBucket"):
                return None
            raise StorageError(
                f"download of {location.url}: {error.code}", error.code or ""
            ) from error
        except (MinioException, urllib3.exceptions.HTTPError, OSError) as error:
            raise StorageError(f"download of {location.url}: {error}") from error
        return StoredObject(response, location)

    def download(self, location: ObjectLocation, destination: Path, *, sha256: str) -> None:
        """Write the object to ``destination``, refusing it unless it hashes to ``sha256``."""
        try:
            response = self._client.get_object(location.bucket, location.key)
            try:
                chunks = response.stream(READ_CHUNK)
                write_checked(chunks, destination, sha256=sha256, url=location.url)
            finally:
                response.close()
                response.release_conn()
        except (MinioException, urllib3.exceptions.HTTPError) as error:
            raise StorageError(f"download of {location.url}: {error}") from error

    def remove_prefix(self, bucket: str, prefix: str) -> int:
        """Delete every object under ``prefix/``; how many there were."""
        try:
            names = [
                item.object_name
                for item in self._client.list_objects(bucket, prefix=prefix + "/", recursive=True)
                if item.object_name is not None
            ]
            errors = list(self._client.remove_objects(bucket, (DeleteObject(n) for n in names)))
        except S3Error as error:
            if error.code == "NoSuchBucket":
                return 0
            raise StorageError(f"removal under s3://{bucket}/{prefix}: {error.code}") from error
        except (MinioException, urllib3.exceptions.HTTPError, OSError) as error:
            raise StorageError(f"removal under s3://{bucket}/{prefix}: {error}") from error
        if errors:
            raise StorageError(f"removal under s3://{bucket}/{prefix}: {errors[0]}")
        return len(names)
