"""How a log stream is served beyond its bytes: the idle timeout and test-injected drops.

The idle timeout is the kubelet's streamingConnectionIdleTimeout (default 4 h):
a follow stream that has sent nothing for that long is closed. A drop rule (a
chaos-test knob) cuts the connection of the next K streams of one container
after N bytes, the way a broken network would.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

PodKey = tuple[str, str]
ContainerKey = tuple[str, str, str]


class StreamDropped(Exception):
    """A drop rule cut this stream: the connection is to be aborted, not ended."""


class StreamIdle(Exception):
    """Nothing was sent for the idle timeout: the connection is to be closed."""


@dataclass
class DropRule:
    after_bytes: int
    # How many more streams to drop; None drops every stream until the rule is replaced.
    remaining: int | None


@dataclass
class StreamPolicy:
    idle_timeout: float
    pod_idle_timeout: dict[PodKey, float] = field(default_factory=dict)
    drops: dict[ContainerKey, DropRule] = field(default_factory=dict)

    def set_drop(self, key: ContainerKey, after_bytes: int, times: int | None) -> None:
        if times == 0:
            self.drops.pop(key, None)
        else:
            self.drops[key] = DropRule(after_bytes, times)

    def take_drop(self, key: ContainerKey) -> int | None:
        """The byte count after which this new stream is cut, using up one drop."""
        rule = self.drops.get(key)
        if rule is None:
            return None
        if rule.remaining is not None:
            rule.remaining -= 1
            if rule.remaining <= 0:
                del self.drops[key]
        return rule.after_bytes

    def idle_timeout_for(self, key: PodKey) -> float:
        return self.pod_idle_timeout.get(key, self.idle_timeout)


async def shaped(
    chunks: AsyncIterator[bytes], idle_timeout: float | None, drop_after: int | None
) -> AsyncIterator[bytes]:
    """`chunks`, raising StreamIdle after the idle timeout and StreamDropped at a drop."""
    sent = 0
    iterator = aiter(chunks)
    while True:
        try:
            chunk = await asyncio.wait_for(anext(iterator), idle_timeout)
        except StopAsyncIteration:
            return
        except TimeoutError as error:
            raise StreamIdle from error
        if drop_after is not None and sent + len(chunk) >= drop_after:
            if drop_after > sent:
                yield chunk[: drop_after - sent]
            raise StreamDropped
        sent += len(chunk)
        yield chunk
