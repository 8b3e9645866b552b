"""A conversation's entries: a page of the stored transcript, or the agent pod's log live.

The stored copy is read by ranges, a page at a time, never whole; its URL
comes from the Phase's status and is served only when it lies under the
Execution's own root in storage (``object_layout.belongs_to``), so a status
someone wrote by hand cannot make the console read another tenant's objects.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from agentjobs.adapters.kube import ApiError, Kube
from agentjobs.adapters.object_store import ObjectStore
from agentjobs.contract.artifacts import object_layout
from agentjobs.contract.conversation.entries import Entry
from agentjobs.contract.conversation.live import LiveConversation
from agentjobs.contract.conversation.pages import PAGE_BYTES, Page, read_page
from agentjobs.kube.pods import AGENT_CONTAINER
from agentjobs.models.contract import TranscriptFormat
from agentjobs.models.storage import ObjectLocation

LIVE_IDLE_SECONDS = 3600.0  # an agent may think a long while between lines
# A live view starts this many lines before the log's end, so a long run is never sent whole;
# the whole transcript pages from storage once the attempt is recorded.
LIVE_TAIL_LINES = 500
START_SECONDS = 300.0  # a pod's image pull and init containers come first


def stored_location(url: str, *, namespace: str, execution: str) -> ObjectLocation:
    """The object a status URL names; LookupError unless it is this Execution's own."""
    location = ObjectLocation.parse(url)
    if not object_layout.belongs_to(location.key, namespace=namespace, execution=execution):
        raise LookupError(f"{url} is not stored under execution {namespace}/{execution}")
    return location


async def stored_page(
    store: ObjectStore,
    location: ObjectLocation,
    transcript_format: TranscriptFormat,
    *,
    start: int,
    size: int,
) -> Page:
    """The page from line start ``start`` of a transcript of ``size`` bytes."""
    window = await _range(store, location, start, PAGE_BYTES)
    page = read_page(transcript_format, window, start=start, at_end=start + len(window) >= size)
    if not page.line_too_long:
        return page
    scanned = start + len(window)  # the next line starts after the next newline
    while scanned < size:
        more = await _range(store, location, scanned, PAGE_BYTES)
        newline = more.find(b"\n")
        if newline >= 0:
            following = scanned + newline + 1
            return Page(page.entries, start, following if following < size else None, True)
        if not more:
            break
        scanned += len(more)
    return Page(page.entries, start, None, True)


async def _range(store: ObjectStore, location: ObjectLocation, offset: int, length: int) -> bytes:
    window = await asyncio.to_thread(store.get_range, location, offset=offset, length=length)
    if window is None:
        raise LookupError(f"{location.url} is not in storage (any more)")
    return window


async def _log(kube: Kube, namespace: str, pod: str) -> AsyncIterator[bytes]:
    """The agent container's log, followed; a container not started yet (400) is waited
    for, up to ``START_SECONDS``."""
    waited = 0.0
    while True:
        stream = kube.stream_log(
            namespace,
            pod,
            AGENT_CONTAINER,
            follow=True,
            idle_seconds=LIVE_IDLE_SECONDS,
            tail_lines=LIVE_TAIL_LINES,
        )
        started = False
        try:
            async for chunk in stream:
                started = True
                yield chunk
            return
        except ApiError as error:
            if started or error.status != 400 or waited >= START_SECONDS:
                raise
        await asyncio.sleep(1.0)
        waited += 1.0


async def live(
    kube: Kube, namespace: str, pod: str, transcript_format: TranscriptFormat
) -> AsyncIterator[list[tuple[int, Entry]]]:
    """The agent container's log from its last ``LIVE_TAIL_LINES`` lines, followed: after
    each read, the entries it added or changed, by index. Ends when the log does."""
    conversation = LiveConversation(transcript_format)
    async for chunk in _log(kube, namespace, pod):
        conversation.feed(chunk)
        changes = conversation.changes()
        if changes:
            yield changes
    conversation.close()
    changes = conversation.changes()
    if changes:
        yield changes
