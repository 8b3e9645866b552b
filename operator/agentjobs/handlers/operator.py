"""The operator's state in one process: the running Phase runners and the reconciler."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from agentjobs.adapters.kube import Kube
from agentjobs.handlers.config import OperatorConfig
from agentjobs.handlers.errors import log_retry
from agentjobs.handlers.executions import ExecutionReconciler
from agentjobs.handlers.phase_runner import PhaseRunner
from agentjobs.handlers.phase_storage import PhaseStorage
from agentjobs.logic import phase_status
from agentjobs.models.resources import PhaseResourceStatus

logger = logging.getLogger(__name__)
MAX_BACKOFF_SECONDS = 60.0


class Operator:
    """Starts one runner per unfinished Phase and routes events to it."""

    def __init__(self, kube: Kube, config: OperatorConfig, storage: PhaseStorage | None) -> None:
        self.kube = kube
        self.config = config
        self.storage = storage
        self.executions = ExecutionReconciler(kube, storage)
        self._runners: dict[tuple[str, str], tuple[PhaseRunner, asyncio.Task[None]]] = {}

    def phase_seen(self, namespace: str, name: str, body: dict[str, Any]) -> None:
        status = PhaseResourceStatus.model_validate(body.get("status") or {})
        if phase_status.is_terminal(status) or body["metadata"].get("deletionTimestamp"):
            return
        cancel = bool(body.get("spec", {}).get("cancel"))
        running = self._runners.get((namespace, name))
        if running is None:
            runner = PhaseRunner(
                self.kube, self.config, self.storage, namespace=namespace, name=name
            )
            task = asyncio.create_task(self._keep_running(runner), name=f"phase {namespace}/{name}")
            self._runners[namespace, name] = (runner, task)
            running = (runner, task)
        if cancel:
            running[0].notify(cancel=True)

    def phase_deleted(self, namespace: str, name: str) -> None:
        running = self._runners.pop((namespace, name), None)
        if running is not None:
            running[1].cancel()

    def pod_seen(self, namespace: str, phase: str) -> None:
        running = self._runners.get((namespace, phase))
        if running is not None:
            running[0].notify()

    async def _keep_running(self, runner: PhaseRunner) -> None:
        """Run until the phase is resolved, retrying with backoff after unexpected errors."""
        backoff = 1.0
        try:
            while True:
                try:
                    await runner.run()
                    return
                except Exception as error:  # sorted in log_retry; the phase must still end
                    log_retry(logger, f"phase {runner.namespace}/{runner.name}", error, backoff)
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, MAX_BACKOFF_SECONDS)
        finally:
            current = self._runners.get((runner.namespace, runner.name))
            if current is not None and current[0] is runner:
                del self._runners[runner.namespace, runner.name]

    async def stop(self) -> None:
        self.executions.stop()
        tasks = [task for _, task in self._runners.values()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await self.kube.close()
