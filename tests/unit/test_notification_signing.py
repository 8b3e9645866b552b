"""R50: Standard Webhooks signatures and the signing secret's format.

Cases: the published Standard Webhooks example signs to its published
signature; a receiver's own HMAC of "id.timestamp.body" verifies the headers
and fails for another body, id or timestamp; the secret is read with or
without `whsec_` and around a trailing newline; a secret that is not strict
base64, not ASCII, too short or too long is refused with a message that
never quotes it.
"""

from __future__ import annotations

import base64
import hashlib
import hmac

import pytest

from agentjobs.contract.notifications import signing

# The example of the Standard Webhooks specification: secret, id, timestamp, body, signature.
SPEC_SECRET = b"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
SPEC_ID = "msg_p5jXN8AQM9LWM0D4loKWxJek"
SPEC_TIMESTAMP = 1614265330
SPEC_BODY = b'{"test": 2432232314}'
SPEC_SIGNATURE = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
KEY = bytes(range(32))
SECRET = b"whsec_" + base64.b64encode(KEY)


def receiver_verifies(secret: bytes, headers: dict[str, str], body: bytes) -> bool:
    """What a receiver writes with the standard library alone."""
    key = base64.b64decode(secret.decode().removeprefix("whsec_"))
    signed = f"{headers['webhook-id']}.{headers['webhook-timestamp']}.".encode() + body
    expected = base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()
    return any(
        hmac.compare_digest(f"v1,{expected}", given)
        for given in headers["webhook-signature"].split(" ")
    )


def test_r50_the_specifications_example_signs_to_its_published_signature() -> None:
    key = signing.signing_key(SPEC_SECRET)
    assert (
        signing.signature(key, message_id=SPEC_ID, timestamp=SPEC_TIMESTAMP, body=SPEC_BODY)
        == SPEC_SIGNATURE
    )


def test_r50_a_receivers_own_hmac_verifies_the_headers() -> None:
    body = b'{"specversion": "1.0"}'
    headers = signing.headers(
        signing.signing_key(SECRET), message_id="uid-1-execution-finished", timestamp=1, body=body
    )
    assert set(headers) == {"webhook-id", "webhook-timestamp", "webhook-signature"}
    assert headers["webhook-id"] == "uid-1-execution-finished"
    assert headers["webhook-timestamp"] == "1"
    assert receiver_verifies(SECRET, headers, body)


@pytest.mark.parametrize("change", ["body", "id", "timestamp"])
def test_r50_the_signature_covers_the_id_the_timestamp_and_the_body(change: str) -> None:
    body = b'{"a": 1}'
    headers = signing.headers(signing.signing_key(SECRET), message_id="m", timestamp=7, body=body)
    if change == "body":
        body = b'{"a": 2}'
    elif change == "id":
        headers["webhook-id"] = "n"
    else:
        headers["webhook-timestamp"] = "8"
    assert not receiver_verifies(SECRET, headers, body)


@pytest.mark.parametrize(
    "value",
    [SECRET, base64.b64encode(KEY), SECRET + b"\n", b"  " + SECRET + b"\r\n"],
    ids=["whsec", "bare-base64", "trailing-newline", "surrounding-space"],
)
def test_the_secret_is_read_as_standard_webhooks_libraries_read_it(value: bytes) -> None:
    assert signing.signing_key(value) == KEY


@pytest.mark.parametrize(
    ("value", "says"),
    [
        (b"whsec_not base64 at all!", "not base64"),
        (b"whsec_" + base64.b64encode(KEY)[:-4] + b"@@@@", "not base64"),
        ("whsec_geheim\u00e9".encode(), "not ASCII"),
        (b"whsec_" + base64.b64encode(b"short"), "decodes to 5 bytes"),
        (b"whsec_" + base64.b64encode(bytes(65)), "decodes to 65 bytes"),
        (b"", "decodes to 0 bytes"),
        (KEY, "not"),  # raw bytes are not the format: say so rather than guess
    ],
)
def test_a_secret_of_another_format_is_refused_without_quoting_it(value: bytes, says: str) -> None:
    with pytest.raises(signing.SigningKeyInvalid, match=says) as refused:
        signing.signing_key(value)
    assert "openssl rand -base64 32" in str(refused.value)
    if len(value) > 8:
        assert value.decode("latin-1").strip()[6:] not in str(refused.value)
