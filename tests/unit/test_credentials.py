"""Per-attempt tokens and what they grant (contract/artifacts/credentials.py), the bucket
allow-list, and what a phase may read (handoff.readable_roots).

Cases: a token verifies with its key and carries its claims; a tampered payload or
signature, another key, a malformed or expired token are refused without repeating the
token; PUT only strictly under the attempt's own prefix (never another attempt's, another
phase's, another namespace's, another bucket's, nor a key with `..`, `.`, empty parts, a
leading slash, NUL or backslash); GET also of the inputs named, and only those; inputs
outside the phase's own Execution are not readable; the allow-list admits the operator's
bucket and the admin's names and patterns only, and its refusal names the flag; only the
operator's own bucket is ever created, never one a name or pattern allows (R60), and a
missing one is named in the message.
"""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentjobs.contract.artifacts import credentials, handoff
from agentjobs.contract.artifacts.bucket_policy import BucketPolicy
from agentjobs.contract.artifacts.credentials import AccessDenied, Claims, InvalidToken, Root
from agentjobs.models.repositories import PhaseRepository
from agentjobs.models.resources import PhaseSpec

KEY = b"k" * 32
NOW = 1_800_000_000
ROOT = "team-a/review/1-fix/attempt-2"
INPUT = "team-a/review/0-plan/attempt-1/output/plan.md"
CLAIMS = Claims(
    namespace="team-a",
    phase="review-1-fix",
    phase_uid="uid-1",
    attempt=2,
    writable=Root("agentjobs", ROOT),
    readable=(Root("agentjobs", INPUT),),
    expires=NOW + 60,
)


def test_a_token_verifies_with_its_key_and_carries_its_claims() -> None:
    token = credentials.sign(CLAIMS, KEY)
    assert credentials.verify(token, KEY, now=NOW) == CLAIMS


def _reencoded(token: str, change: dict[str, Any]) -> str:
    version, payload, mac = token.split(".")
    data = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    data.update(change)
    forged = base64.urlsafe_b64encode(json.dumps(data).encode()).decode().rstrip("=")
    return f"{version}.{forged}.{mac}"


@pytest.mark.parametrize(
    "change",
    [
        {"ns": "team-b"},
        {"w": ["agentjobs", "team-b"]},
        {"r": [["agentjobs", "team-b"]]},
        {"at": 1},
        {"exp": NOW + 10**9},
    ],
)
def test_a_tampered_token_is_refused(change: dict[str, Any]) -> None:
    token = _reencoded(credentials.sign(CLAIMS, KEY), change)
    with pytest.raises(InvalidToken, match="signature"):
        credentials.verify(token, KEY, now=NOW)


def test_a_token_of_another_key_is_refused_and_the_message_never_repeats_it() -> None:
    token = credentials.sign(CLAIMS, b"other" * 8)
    with pytest.raises(InvalidToken) as refused:
        credentials.verify(token, KEY, now=NOW)
    assert token.split(".")[1] not in str(refused.value)


@pytest.mark.parametrize("token", ["", "v1", "v1..", "v2.a.b", "v1.a.b.c", "v1.!!!.@@@", "x" * 500])
def test_a_malformed_token_is_refused(token: str) -> None:
    with pytest.raises(InvalidToken):
        credentials.verify(token, KEY, now=NOW)


def test_signed_but_malformed_claims_are_refused() -> None:
    payload = base64.urlsafe_b64encode(b'{"ns": 3}').decode().rstrip("=")
    mac = base64.urlsafe_b64encode(credentials._mac(KEY, payload)).decode().rstrip("=")
    with pytest.raises(InvalidToken, match="malformed"):
        credentials.verify(f"v1.{payload}.{mac}", KEY, now=NOW)


def test_an_expired_token_is_refused() -> None:
    token = credentials.sign(CLAIMS, KEY)
    credentials.verify(token, KEY, now=NOW + 59)
    with pytest.raises(InvalidToken, match="expired"):
        credentials.verify(token, KEY, now=NOW + 60)


@given(st.text(max_size=200))
def test_no_text_is_a_valid_token(text: str) -> None:
    with pytest.raises(InvalidToken):
        credentials.verify(text, KEY, now=NOW)


def test_put_is_granted_under_the_attempts_own_prefix() -> None:
    credentials.check(CLAIMS, "PUT", "agentjobs", f"{ROOT}/output/a/b.txt")
    credentials.check(CLAIMS, "PUT", "agentjobs", f"{ROOT}/manifest.json")
    credentials.check(CLAIMS, "GET", "agentjobs", f"{ROOT}/manifest.json")


@pytest.mark.parametrize(
    ("method", "bucket", "key"),
    [
        ("PUT", "agentjobs", ROOT),  # the prefix itself is no object
        ("PUT", "agentjobs", f"{ROOT}-x/output/f"),  # a sibling that shares the prefix text
        ("PUT", "agentjobs", "team-a/review/1-fix/attempt-1/output/f"),  # another attempt
        ("PUT", "agentjobs", "team-a/review/0-plan/attempt-1/output/f"),  # another phase
        ("PUT", "agentjobs", "team-b/review/1-fix/attempt-2/output/f"),  # another namespace
        ("PUT", "other", f"{ROOT}/output/f"),  # another bucket
        ("PUT", "agentjobs", f"{ROOT}/../../../../team-b/x"),
        ("PUT", "agentjobs", f"{ROOT}/output/../../attempt-1/output/f"),
        ("PUT", "agentjobs", f"{ROOT}/./output/f"),
        ("PUT", "agentjobs", f"{ROOT}//output/f"),
        ("PUT", "agentjobs", f"/{ROOT}/output/f"),
        ("PUT", "agentjobs", f"{ROOT}/output/f\x00"),
        ("PUT", "agentjobs", f"{ROOT}/output\\..\\..\\f"),
        ("PUT", "agentjobs", INPUT),  # readable, not writable
        ("GET", "agentjobs", INPUT + ".secret"),  # exactly the inputs named
        ("GET", "agentjobs", "team-a/review/0-plan/attempt-1/transcript.log"),
        ("GET", "agentjobs", "team-b/review/0-plan/attempt-1/output/plan.md"),
        ("GET", "other", INPUT),
        ("GET", "agentjobs", f"{INPUT}/../../../../../../team-b/x"),
    ],
)
def test_everything_else_is_denied(method: credentials.Method, bucket: str, key: str) -> None:
    with pytest.raises(AccessDenied):
        credentials.check(CLAIMS, method, bucket, key)


@given(st.text(min_size=1, max_size=40))
def test_no_key_with_a_dot_dot_part_is_ever_granted(tail: str) -> None:
    for key in (f"{ROOT}/../{tail}", f"{ROOT}/{tail}/.."):
        with pytest.raises(AccessDenied):
            credentials.check(CLAIMS, "PUT", "agentjobs", key)


def test_keys_are_derived_per_purpose_and_alike_on_every_replica() -> None:
    first = credentials.derive_key(b"secret", "credential-token")
    assert first == credentials.derive_key(b"secret", "credential-token")
    assert first != credentials.derive_key(b"secret", "tls")
    assert first != credentials.derive_key(b"other", "credential-token")


def _phase(manifest: str | None) -> PhaseSpec:
    inputs = None if manifest is None else {"manifest": manifest, "sha256": "0" * 64, "count": 1}
    return PhaseSpec.model_validate(
        {"executionName": "review", "index": 1, "name": "fix", "image": "a", "inputs": inputs}
    )


def test_a_phase_may_read_handoffs_of_its_own_namespace_only() -> None:
    root = "team/namespaces/ns-a/executions/review"
    own = _phase(f"s3://agentjobs/{root}/0-plan/attempt-1/artifacts.json")
    assert handoff.readable_roots(own, namespace="ns-a") == (
        Root("agentjobs", f"{root}/0-plan/attempt-1/artifacts.json"),
        Root("agentjobs", f"{root}/0-plan/attempt-1/output"),
    )
    # R48: a resumed execution's first phase reads its parent's, in the same namespace.
    parent = _phase(
        "s3://agentjobs/namespaces/ns-a/executions/review/1-fix/attempt-2/artifacts.json"
    )
    assert handoff.readable_roots(parent, namespace="ns-a") == (
        Root("agentjobs", "namespaces/ns-a/executions/review/1-fix/attempt-2/artifacts.json"),
        Root("agentjobs", "namespaces/ns-a/executions/review/1-fix/attempt-2/output"),
    )
    for manifest in (
        "s3://agentjobs/team/namespaces/ns-b/executions/review/0-plan/attempt-1/artifacts.json",
        "s3://agentjobs/namespaces/ns-a-other/executions/r/0-plan/attempt-1/artifacts.json",
        "s3://agentjobs/namespaces/ns-b/namespaces/ns-a/executions/r/0-p/attempt-1/artifacts.json",
        "s3://agentjobs/namespaces/ns-a/other/r/0-plan/attempt-1/artifacts.json",
        f"s3://agentjobs/{root}/0-plan/attempt-1/transcript.log",
        f"s3://agentjobs/{root}/../../../ns-b/executions/r/0-plan/attempt-1/artifacts.json",
        "s3://agentjobs/ns-a/review/0-plan/attempt-1/artifacts.json",
        "s3://agentjobs/artifacts.json",
        "https://elsewhere/x",
        None,
    ):
        assert handoff.readable_roots(_phase(manifest), namespace="ns-a") == (), manifest


def test_the_allow_list_admits_the_operators_bucket_and_the_admins_names() -> None:
    only_own = BucketPolicy("agentjobs")
    assert only_own.allows("agentjobs")
    assert not only_own.allows("agentjobs-other")
    policy = BucketPolicy("agentjobs", ("shared", "team-*"))
    assert policy.allows("shared") and policy.allows("team-a")
    assert not policy.allows("sharedx") and not policy.allows("other-team-a")


def test_a_refused_bucket_is_named_with_the_flag_that_allows_it() -> None:
    message = BucketPolicy("agentjobs").refusal("loot")
    assert "'loot'" in message and "--allowed-bucket" in message and "agentjobs" in message


def test_only_the_operators_own_bucket_is_ever_created() -> None:
    policy = BucketPolicy("agentjobs", ("shared", "team-*"))
    assert policy.creates("agentjobs")
    assert not policy.creates("shared") and not policy.creates("team-anything")
    message = policy.missing("team-anything")
    assert "'team-anything' does not exist" in message and "'agentjobs'" in message


def _with_bundle(bundle: str) -> PhaseSpec:
    handed = {"commit": "b" * 40, "since": "a" * 40, "bundle": bundle, "bundleSha256": "0" * 64}
    repository = {"name": "service", "url": "https://g/s.git", "branch": "x", "handed": handed}
    return _phase(None).model_copy(
        update={"repositories": [PhaseRepository.model_validate(repository)]}
    )


def test_r63_a_phase_may_read_the_bundles_handed_to_it_in_its_own_namespace_only() -> None:
    key = "namespaces/ns-a/executions/review/0-plan/attempt-1/work/service/work.bundle"
    assert handoff.readable_roots(_with_bundle(f"s3://agentjobs/{key}"), namespace="ns-a") == (
        Root("agentjobs", key),
    )
    for bundle in (
        "s3://agentjobs/namespaces/ns-b/executions/review/0-plan/attempt-1/work/s/work.bundle",
        "s3://agentjobs/namespaces/ns-a/executions/r/../../../ns-b/executions/x/y/work.bundle",
        "https://elsewhere/x",
    ):
        assert handoff.readable_roots(_with_bundle(bundle), namespace="ns-a") == (), bundle
