"""The operator's log lines: JSON objects carrying the running phase, or text naming it."""

from __future__ import annotations

import asyncio
import json
import logging
import sys

from agentjobs.adapters import log_records
from agentjobs.adapters.log_records import JsonFormatter, PhaseFields


def record(message: str = "pod x-a1 runs the agent", **extra: object) -> logging.LogRecord:
    made = logging.LogRecord("agentjobs.test", logging.INFO, __file__, 1, message, (), None)
    for key, value in extra.items():
        setattr(made, key, value)
    return made


def test_a_json_line_carries_the_phase_fields_and_kopfs_object() -> None:
    line = json.loads(
        JsonFormatter().format(
            record(namespace="ns", execution="e", phase="p", attempt=2,
                   k8s_ref={"kind": "Phase", "namespace": "ns", "name": "e-0-p", "uid": "u"})
        )
    )  # fmt: skip
    assert line["message"] == "pod x-a1 runs the agent" and line["level"] == "INFO"
    assert (line["namespace"], line["execution"], line["phase"], line["attempt"]) == (
        "ns", "e", "p", 2,
    )  # fmt: skip
    assert line["object"] == {"kind": "Phase", "namespace": "ns", "name": "e-0-p"}


def test_a_line_outside_a_phase_has_no_phase_fields_and_keeps_its_traceback() -> None:
    try:
        raise ValueError("boom")
    except ValueError:
        failed = record("failed")
        failed.exc_info = sys.exc_info()
    line = json.loads(JsonFormatter().format(failed))
    assert "phase" not in line and "namespace" not in line
    assert "ValueError: boom" in line["exception"]


def test_each_task_logs_its_own_phase() -> None:
    """The fields follow the runner's task (and the tasks it starts), not the process."""
    stream: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            stream.append(record)

    keep = Keep()
    keep.addFilter(log_records._PhaseFilter())
    logger = logging.getLogger("agentjobs.test.tasks")
    logger.addHandler(keep)
    logger.setLevel(logging.INFO)

    async def runner(phase: str) -> None:
        fields = PhaseFields("ns", "e", phase)
        log_records.current_phase.set(fields)
        fields.attempt = 1
        await asyncio.sleep(0)
        await asyncio.create_task(asyncio.to_thread(lambda: None))
        logger.info("in %s", phase)

    async def both() -> None:
        await asyncio.gather(runner("a"), runner("b"))
        logger.info("outside")

    try:
        asyncio.run(both())
    finally:
        logger.removeHandler(keep)
    seen = {r.getMessage(): getattr(r, "phase", None) for r in stream}
    assert seen == {"in a": "a", "in b": "b", "outside": None}


def test_a_text_line_names_the_phase_before_its_message() -> None:
    formatter = log_records._TextFormatter("%(levelname)s %(name)s: %(message)s")
    text = formatter.format(record(namespace="ns", execution="e", phase="p", attempt=3))
    assert text == "INFO agentjobs.test: [ns/e/p a3] pod x-a1 runs the agent"
    assert formatter.format(record()) == "INFO agentjobs.test: pod x-a1 runs the agent"
