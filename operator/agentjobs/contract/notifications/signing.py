"""R50: webhook signatures as Standard Webhooks define them.

The signing secret is written as Standard Webhooks libraries take it, so a
receiver passes the very same string to its own library: ``whsec_`` (may be
left out) followed by the base64 of 24 to 64 random bytes, e.g.
``echo "whsec_$(openssl rand -base64 32)"``. The HMAC key is the decoded
bytes, never the text. Whitespace around it (the newline a file leaves) is
ignored; anything else that is not strict base64, or a key of another
length, is refused with a message rather than signed with.

The HMAC is these few lines of the standard library rather than the
``standardwebhooks`` package: the package's ``sign`` takes a datetime it
relabels as UTC (a non-UTC aware time signs the wrong second) and decodes
the secret leniently, discarding characters that are not base64.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac

SECRET_PREFIX = "whsec_"
MIN_KEY_BYTES = 24
MAX_KEY_BYTES = 64
_HOW = (
    f"write it as {SECRET_PREFIX} and the base64 of {MIN_KEY_BYTES} to {MAX_KEY_BYTES} "
    f'random bytes, e.g. "{SECRET_PREFIX}$(openssl rand -base64 32)"'
)


class SigningKeyInvalid(ValueError):
    """The Secret's value is not a Standard Webhooks secret; the message never quotes it."""


def signing_key(secret_value: bytes) -> bytes:
    """The HMAC key from the Secret's value (``whsec_<base64>`` or bare base64)."""
    try:
        text = secret_value.decode("ascii").strip()
    except UnicodeDecodeError:
        raise SigningKeyInvalid(f"the signing secret is not ASCII text: {_HOW}") from None
    encoded = text.removeprefix(SECRET_PREFIX)
    try:
        key = base64.b64decode(encoded, validate=True)
    except (binascii.Error, ValueError):
        raise SigningKeyInvalid(f"the signing secret is not base64: {_HOW}") from None
    if not MIN_KEY_BYTES <= len(key) <= MAX_KEY_BYTES:
        raise SigningKeyInvalid(f"the signing secret decodes to {len(key)} bytes: {_HOW}")
    return key


def signature(key: bytes, *, message_id: str, timestamp: int, body: bytes) -> str:
    """``v1,<base64 HMAC-SHA256 of "id.timestamp.body">``."""
    signed = f"{message_id}.{timestamp}.".encode() + body
    digest = hmac.new(key, signed, hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode("ascii")


def headers(key: bytes, *, message_id: str, timestamp: int, body: bytes) -> dict[str, str]:
    """The three Standard Webhooks headers of one attempt (``timestamp`` is the attempt's)."""
    return {
        "webhook-id": message_id,
        "webhook-timestamp": str(timestamp),
        "webhook-signature": signature(key, message_id=message_id, timestamp=timestamp, body=body),
    }


def secret_refusal(name: str, readable: str | None) -> str | None:
    """Why a notify's ``secretRef.name`` is refused, or None.

    The operator may read one conventionally named Secret per namespace (RBAC
    ``resourceNames``), and none while webhooks are off (``readable`` None).
    """
    if readable is None:
        return (
            "webhooks are off in this operator (chart value webhooks.enabled, operator flag "
            "--webhook-secret-name): it was never called"
        )
    if name != readable:
        return (
            f"secretRef.name must be {readable!r}, the one Secret the operator may read "
            "(chart value webhooks.secretName): it was never called"
        )
    return None
