"""A reconcile takes its own write's answer over an older copy from the watch."""

from __future__ import annotations

from typing import Any

from agentjobs.kube.resource_versions import written_is_later


def body(uid: str, version: str) -> dict[str, Any]:
    return {"metadata": {"uid": uid, "resourceVersion": version}}


def test_a_write_answered_after_the_watched_copy_is_later() -> None:
    assert written_is_later(body("a", "99"), body("a", "100"))


def test_the_watch_catching_up_with_the_write_makes_the_watched_copy_current() -> None:
    assert not written_is_later(body("a", "100"), body("a", "100"))
    assert not written_is_later(body("a", "101"), body("a", "100"))


def test_a_copy_of_an_object_since_replaced_under_the_same_name_never_wins() -> None:
    assert not written_is_later(body("new", "5"), body("old", "500"))


def test_versions_that_are_not_revisions_are_not_ordered() -> None:
    assert not written_is_later(body("a", "x9"), body("a", "x10"))
