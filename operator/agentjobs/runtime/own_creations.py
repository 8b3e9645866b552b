"""Objects a reconciler has just created, until its watch shows them.

A reconcile reads its children from the watches (:mod:`observed`), which show a
child created a moment ago only once its event has come. A reconcile in between
would act as if the child were not there: a CronExecution under ``Forbid`` made a
second run beside the first, and a cancelled Execution ended before its first
Phase had started, leaving that Phase to run. So each creation's answer is kept,
by its owner's UID, and counted among the children until the watch shows an
object of its UID, or its deletion (which the watch may show without ever having
shown it).
"""

from __future__ import annotations

from agentjobs.adapters.kube import JsonObject


class OwnCreations:
    def __init__(self) -> None:
        # owner UID -> created object's UID -> the object as its creation returned it
        self._unseen: dict[str, dict[str, JsonObject]] = {}

    def created(self, owner_uid: str, body: JsonObject) -> None:
        self._unseen.setdefault(owner_uid, {})[body["metadata"]["uid"]] = body

    def with_unseen(self, owner_uid: str, watched: list[JsonObject]) -> list[JsonObject]:
        """``watched`` (the owner's children as the watch shows them) and those created
        that it does not show yet; the ones it shows are no longer kept."""
        unseen = self._unseen.get(owner_uid)
        if not unseen:
            return watched
        for item in watched:
            unseen.pop(item["metadata"]["uid"], None)
        if not unseen:
            del self._unseen[owner_uid]
        return [*watched, *unseen.values()]

    def deleted(self, uid: str) -> None:
        """The watch showed the object's deletion."""
        for owner_uid, unseen in list(self._unseen.items()):
            if unseen.pop(uid, None) is not None and not unseen:
                del self._unseen[owner_uid]
