"""Which buckets Executions may name in ``spec.artifacts.bucket``: an admin's allow-list.

Without one, only the operator's own bucket is allowed. An entry is a bucket
name or a shell-style pattern (``team-*``), matched case-sensitively, since
bucket names are lower case. R60: only the operator's own bucket is ever
created; an allowed one must exist already, so a pattern never lets a tenant
make the operator create buckets with its credentials.
"""

from __future__ import annotations

from dataclasses import dataclass
from fnmatch import fnmatchcase

ALLOWED_BUCKETS_FLAG = "--allowed-bucket"
# The blockers of a phase whose bucket it may not use; such a phase writes nothing there.
NOT_ALLOWED = "BucketNotAllowed"
NOT_FOUND = "BucketNotFound"
BLOCKERS = frozenset({NOT_ALLOWED, NOT_FOUND})


@dataclass(frozen=True)
class BucketPolicy:
    default_bucket: str
    allowed: tuple[str, ...] = ()

    def allows(self, bucket: str) -> bool:
        if bucket == self.default_bucket:
            return True
        return any(fnmatchcase(bucket, pattern) for pattern in self.allowed)

    def refusal(self, bucket: str) -> str:
        """Why ``bucket`` is refused, naming what the admin may change."""
        allowed = ", ".join(sorted({self.default_bucket, *self.allowed}))
        return (
            f"bucket {bucket!r} is not allowed by this operator (allowed: {allowed}); "
            f"an admin may add it with {ALLOWED_BUCKETS_FLAG} (chart value s3.allowedBuckets)"
        )

    def creates(self, bucket: str) -> bool:
        """R60: whether the operator creates ``bucket`` when it is missing (its own only)."""
        return bucket == self.default_bucket

    def missing(self, bucket: str) -> str:
        """Why a phase naming an allowed ``bucket`` that does not exist cannot run."""
        return (
            f"bucket {bucket!r} does not exist; the operator creates only its own bucket "
            f"({self.default_bucket!r}): an admin must create {bucket!r} first"
        )
