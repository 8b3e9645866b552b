"""What a test run left in the S3 store: every object under a key prefix, read whole."""

from __future__ import annotations

from minio import Minio

BUCKET = "agentjobs"


def stored_objects(s3: Minio, prefix: str, bucket: str = BUCKET) -> dict[str, bytes]:
    """Each object under ``prefix`` by its full key."""
    found = {}
    for item in s3.list_objects(bucket, prefix=prefix, recursive=True):
        assert item.object_name is not None
        response = s3.get_object(bucket, item.object_name)
        try:
            found[item.object_name] = response.read()
        finally:
            response.close()
            response.release_conn()
    return found
