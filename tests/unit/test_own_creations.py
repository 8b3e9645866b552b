"""Objects a reconciler created count among its children until the watch shows them, or
their deletion; children of other owners are not touched."""

from __future__ import annotations

from typing import Any

from agentjobs.runtime.own_creations import OwnCreations


def _object(uid: str, version: str = "1") -> dict[str, Any]:
    return {"metadata": {"uid": uid, "resourceVersion": version}}


def test_a_creation_counts_until_the_watch_shows_it_then_the_watch_copy_alone() -> None:
    own = OwnCreations()
    own.created("owner", _object("a"))
    assert own.with_unseen("owner", []) == [_object("a")]
    assert own.with_unseen("owner", []) == [_object("a")]  # still not shown: still counted
    shown = [_object("a", "7")]
    assert own.with_unseen("owner", shown) == shown
    assert own.with_unseen("owner", []) == []  # once shown, the watch alone says


def test_a_deletion_the_watch_shows_ends_the_wait_for_that_object_only() -> None:
    own = OwnCreations()
    own.created("owner", _object("a"))
    own.created("owner", _object("b"))
    own.created("other", _object("c"))
    own.deleted("a")
    assert own.with_unseen("owner", []) == [_object("b")]
    assert own.with_unseen("other", []) == [_object("c")]
    assert own.with_unseen("nobody", [_object("d")]) == [_object("d")]
