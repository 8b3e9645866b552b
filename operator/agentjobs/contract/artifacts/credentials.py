"""Per-attempt tokens for a phase's sidecars, and what a token lets them touch.

A token is ``v1.<claims>.<mac>``: base64url of compact JSON claims and of their
HMAC-SHA256 under a key only the operator holds. It carries everything the
credentials endpoint needs to decide (no lookup beyond "has the phase ended"),
so any replica, before or after a restart, verifies it the same way. The
token says where its attempt may write (one key prefix in one bucket) and
what it may read (its own prefix, and the inputs its spec names); a key is
granted only when it is a clean path strictly under one of those prefixes.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
from dataclasses import dataclass
from typing import Any, Literal

VERSION = "v1"
Method = Literal["GET", "PUT"]


class InvalidToken(ValueError):
    """A token that is malformed, forged, tampered with or expired."""


class AccessDenied(ValueError):
    """A valid token asked for an object outside what it grants."""


@dataclass(frozen=True)
class Root:
    """A bucket and a key prefix: every key below it (and, for reading, the key itself)."""

    bucket: str
    prefix: str


@dataclass(frozen=True)
class Claims:
    """What one attempt's token says about its holder."""

    namespace: str
    phase: str
    phase_uid: str
    attempt: int
    writable: Root
    readable: tuple[Root, ...]
    expires: int  # seconds since the epoch

    def to_json(self) -> dict[str, Any]:
        return {
            "ns": self.namespace,
            "ph": self.phase,
            "uid": self.phase_uid,
            "at": self.attempt,
            "w": [self.writable.bucket, self.writable.prefix],
            "r": [[root.bucket, root.prefix] for root in self.readable],
            "exp": self.expires,
        }

    @classmethod
    def from_json(cls, data: Any) -> Claims:
        try:
            return cls(
                namespace=_text(data["ns"]),
                phase=_text(data["ph"]),
                phase_uid=_text(data["uid"]),
                attempt=_number(data["at"]),
                writable=_root(data["w"]),
                readable=tuple(_root(item) for item in data["r"]),
                expires=_number(data["exp"]),
            )
        except (KeyError, TypeError, ValueError) as error:
            raise InvalidToken("malformed token claims") from error


def _text(value: Any) -> str:
    if not isinstance(value, str) or not value:
        raise ValueError("not a non-empty string")
    return value


def _number(value: Any) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise ValueError("not an integer")
    return value


def _root(value: Any) -> Root:
    bucket, prefix = value
    return Root(_text(bucket), _text(prefix))


def _encode(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _decode(text: str) -> bytes:
    try:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError) as error:
        raise InvalidToken("malformed token") from error


def _mac(key: bytes, payload: str) -> bytes:
    return hmac.new(key, f"{VERSION}.{payload}".encode(), hashlib.sha256).digest()


def sign(claims: Claims, key: bytes) -> str:
    """The token that carries ``claims``."""
    payload = _encode(json.dumps(claims.to_json(), separators=(",", ":")).encode())
    return f"{VERSION}.{payload}.{_encode(_mac(key, payload))}"


def verify(token: str, key: bytes, *, now: float) -> Claims:
    """The claims of a token this key signed and that has not expired, or InvalidToken.

    The messages never repeat the token."""
    parts = token.split(".")
    if len(parts) != 3 or parts[0] != VERSION:
        raise InvalidToken("malformed token")
    _, payload, mac = parts
    if not hmac.compare_digest(_decode(mac), _mac(key, payload)):
        raise InvalidToken("token signature does not match")
    try:
        data = json.loads(_decode(payload))
    except ValueError as error:
        raise InvalidToken("malformed token claims") from error
    claims = Claims.from_json(data)
    if now >= claims.expires:
        raise InvalidToken("token has expired")
    return claims


def derive_key(secret: bytes, purpose: str) -> bytes:
    """A key for one purpose from the operator's own secret (the same on every replica)."""
    return hmac.new(secret, f"agentjobs/{purpose}".encode(), hashlib.sha256).digest()


def clean_key(key: str) -> bool:
    """A key that names one object as a path: no empty, ``.`` or ``..`` part, no NUL,
    no leading slash, and none of the characters a URL or a file system reads otherwise."""
    if not key or len(key.encode()) > 1024 or any(c in key for c in "\x00\\"):
        return False
    return all(part not in ("", ".", "..") for part in key.split("/"))


def _under(root: Root, bucket: str, key: str) -> bool:
    return bucket == root.bucket and key.startswith(root.prefix.rstrip("/") + "/")


def _at_or_under(root: Root, bucket: str, key: str) -> bool:
    return _under(root, bucket, key) or (bucket == root.bucket and key == root.prefix)


def check(claims: Claims, method: Method, bucket: str, key: str) -> None:
    """Raise AccessDenied unless the token grants ``method`` on ``bucket``/``key``."""
    if not clean_key(key):
        raise AccessDenied(f"not a clean object key: {key!r}")
    if _under(claims.writable, bucket, key):
        return
    if method == "GET" and any(_at_or_under(root, bucket, key) for root in claims.readable):
        return
    verb = "write" if method == "PUT" else "read"
    raise AccessDenied(f"this attempt may not {verb} s3://{bucket}/{key}")
