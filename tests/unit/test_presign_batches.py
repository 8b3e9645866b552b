"""How the sidecars cut their URL requests to the credentials endpoint (models/presign.py).

Cases: a thousand output files with long non-ASCII names, which as one request pass the
endpoint's mebibyte, are asked for in several requests, each within both limits, in order
and with none lost; a thousand short names go in one request; more than a thousand objects
are cut by count; an object too large for any request goes alone, for the endpoint to
refuse; an empty list asks nothing.
"""

from __future__ import annotations

import json

from agentjobs.models import presign
from agentjobs.models.storage import ObjectLocation

ROOT = "namespaces/team-a/executions/notes/0-draft/attempt-1/output"


def location(key: str) -> ObjectLocation:
    return ObjectLocation("agentjobs", f"{ROOT}/{key}")


def request(method: str, batch: list[ObjectLocation]) -> bytes:
    return presign.body([presign.encoded_item(method, item) for item in batch])


def test_a_thousand_long_non_ascii_names_are_asked_for_within_the_limits() -> None:
    # 190 four-byte characters: within the 768-byte path cap, 12 bytes each as JSON.
    wanted = [location(f"{index:04}-" + "\U0001f600" * 190) for index in range(1000)]
    assert len(request("PUT", wanted)) > presign.MAX_BODY_BYTES  # one request: a 413
    batches = presign.batches("PUT", wanted)
    assert len(batches) > 1
    assert [item for batch in batches for item in batch] == wanted
    for batch in batches:
        body = request("PUT", batch)
        assert len(body) <= presign.MAX_BODY_BYTES
        assert len(batch) <= presign.MAX_OBJECTS
        assert [o["key"] for o in json.loads(body)["objects"]] == [i.key for i in batch]


def test_short_names_go_in_one_request_and_more_than_a_thousand_are_cut_by_count() -> None:
    assert presign.batches("GET", [location(f"f{i}") for i in range(1000)]) == [
        [location(f"f{i}") for i in range(1000)]
    ]
    sizes = [
        len(batch) for batch in presign.batches("GET", [location(f"f{i}") for i in range(2500)])
    ]
    assert sizes == [1000, 1000, 500]


def test_an_object_too_large_for_any_request_goes_alone() -> None:
    huge = location("x" * presign.MAX_BODY_BYTES)
    batches = presign.batches("PUT", [location("a"), huge, location("b")])
    assert batches == [[location("a")], [huge], [location("b")]]
    assert presign.batches("PUT", []) == []
