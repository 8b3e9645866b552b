"""Leader election through a coordination.k8s.io/v1 Lease, as client-go's leaderelection does.

:mod:`agentjobs.kube.lease` decides who may hold the Lease; this module reads
and writes it, keeps the time, and tells its owner when leadership begins and
ends. Writes carry the resourceVersion they were based on, so of two
candidates writing at once one gets a conflict: it lost, which is no error.
Leadership ends at the renew deadline even if a renewal is still on its way,
five seconds before any other candidate may take the Lease.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Callable
from datetime import UTC, datetime

from agentjobs.adapters import paths
from agentjobs.adapters.kube import JsonObject, Kube
from agentjobs.kube import lease
from agentjobs.runtime.config import LeaderElection
from agentjobs.runtime.errors import log_retry

logger = logging.getLogger(__name__)
# Candidates spread their attempts over 2-2.4 s, as client-go's JitterFactor of 1.2 does.
JITTER = 0.2


def _now() -> float:
    return asyncio.get_running_loop().time()


class Leadership:
    """Acquires, renews and releases one Lease; ``leading`` says whether this replica leads."""

    def __init__(self, kube: Kube, election: LeaderElection) -> None:
        self._kube = kube
        self._election = election
        self._path = paths.lease(election.namespace, election.name)
        self._observed: lease.Observation | None = None
        self._lease: JsonObject | None = None  # as last read or written: the next write's base
        self._renewed_at: float | None = None
        self._holder = ""

    @property
    def leading(self) -> bool:
        return lease.leading(self._renewed_at, now=_now())

    def _describe(self) -> str:
        return f"lease {self._election.namespace}/{self._election.name}"

    async def run(self, *, started: Callable[[], None], stopped: Callable[[str], object]) -> None:
        """Lead whenever the Lease can be had, until cancelled: ``started()`` when it has been
        acquired, ``stopped(reason)`` the moment it is lost."""
        while True:
            await self._acquire()
            logger.info("leading as %s through %s", self._election.identity, self._describe())
            started()
            reason = await self._keep()
            self._renewed_at = None
            logger.warning("lost leadership: %s %s", self._describe(), reason)
            stopped(reason)

    async def release(self) -> None:
        """Step down, once everything the Lease guards has stopped, so that a successor need
        not wait for the Lease to expire."""
        if not self.leading or self._lease is None or self._observed is None:
            return
        self._renewed_at = None
        record = lease.released(self._observed.record, wall=datetime.now(UTC))
        try:
            await self._kube.replace(self._path, {**self._lease, "spec": lease.spec(record)})
        except Exception as error:  # the Lease then expires by itself
            logger.warning("%s not released: %s", self._describe(), error)
        else:
            logger.info("released %s", self._describe())

    async def _acquire(self) -> None:
        while True:
            attempt_at = _now()
            if await self._try_claim():
                self._renewed_at = attempt_at
                return
            period = lease.RETRY_PERIOD_SECONDS
            await asyncio.sleep(period * (1 + JITTER * random.random()))

    async def _keep(self) -> str:
        """Renew every retry period until that fails for the renew deadline, or another
        candidate holds the Lease; why it was lost."""
        assert self._renewed_at is not None
        try:
            async with asyncio.timeout_at(self._renewed_at + lease.RENEW_DEADLINE_SECONDS) as cut:
                while True:
                    await asyncio.sleep(lease.RETRY_PERIOD_SECONDS)
                    attempt_at = _now()
                    if await self._try_claim():
                        self._renewed_at = attempt_at
                        cut.reschedule(attempt_at + lease.RENEW_DEADLINE_SECONDS)
                    elif self._observed is not None and lease.held_by_another(
                        self._observed, identity=self._election.identity, now=_now()
                    ):
                        return f"is held by {self._observed.record.holder}"
        except TimeoutError:
            return f"was not renewed within {lease.RENEW_DEADLINE_SECONDS:.0f} s"

    async def _try_claim(self) -> bool:
        """One attempt to take or keep the Lease; True when this replica now holds it."""
        try:
            if await self._renew_fast():
                return True
            current = await self._kube.get(self._path)
            if current is None:
                return await self._create()
            self._lease = current
            record = lease.read(current.get("spec") or {})
            self._observed = lease.observe(self._observed, record, now=_now())
            self._note_holder(record.holder)
            return await self._write(self._observed, current)
        except Exception as error:  # sorted in log_retry; an election must go on
            log_retry(logger, self._describe(), error, lease.RETRY_PERIOD_SECONDS)
            return False

    async def _renew_fast(self) -> bool:
        """client-go's fast path: the leader's last write is most likely still current."""
        if not self.leading or self._lease is None or self._observed is None:
            return False
        return await self._write(self._observed, self._lease)

    async def _write(self, observed: lease.Observation, base: JsonObject) -> bool:
        record = lease.claim(
            observed, identity=self._election.identity, now=_now(), wall=datetime.now(UTC)
        )
        if record is None:
            return False
        written = await self._kube.replace(self._path, {**base, "spec": lease.spec(record)})
        return self._wrote(written, record)

    async def _create(self) -> bool:
        record = lease.claim(
            None, identity=self._election.identity, now=_now(), wall=datetime.now(UTC)
        )
        assert record is not None  # nobody holds a Lease that does not exist
        manifest = {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {"name": self._election.name, "namespace": self._election.namespace},
            "spec": lease.spec(record),
        }
        created = await self._kube.create(paths.lease(self._election.namespace), manifest)
        return self._wrote(created, record)

    def _wrote(self, written: JsonObject | None, record: lease.LeaseRecord) -> bool:
        """Note a write's outcome: None means another candidate wrote first."""
        if written is None:
            return False
        self._lease = written
        self._observed = lease.observe(None, record, now=_now())
        self._note_holder(record.holder)
        return True

    def _note_holder(self, holder: str) -> None:
        if holder != self._holder:
            self._holder = holder
            logger.info("%s is held by %s", self._describe(), holder or "nobody")
