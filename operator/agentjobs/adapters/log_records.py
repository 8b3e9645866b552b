"""The operator's log lines: text for people, or one JSON object per line for collectors.

Each line logged while a phase runs carries the phase it concerns
(namespace, execution, phase, attempt), from a context variable the phase's
runner sets, so that a collector can select one run's lines without parsing
messages; kopf's own per-object lines carry the object they concern.
"""

from __future__ import annotations

import json
import logging
from contextvars import ContextVar
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


class LogFormat(StrEnum):
    TEXT = "text"
    JSON = "json"


@dataclass
class PhaseFields:
    """The phase a log line concerns; ``attempt`` moves on as the runner does."""

    namespace: str
    execution: str
    phase: str
    attempt: int | None = None


current_phase: ContextVar[PhaseFields | None] = ContextVar("current_phase", default=None)


class _PhaseFilter(logging.Filter):
    """Puts the running phase's fields on each record logged in its task."""

    def filter(self, record: logging.LogRecord) -> bool:
        fields = current_phase.get()
        if fields is not None:
            for key, value in asdict(fields).items():
                setattr(record, key, value)
        return True


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message, the phase's fields, the
    object kopf named, and the exception's traceback when there was one."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        for key in ("namespace", "execution", "phase", "attempt"):
            value = getattr(record, key, None)
            if value is not None:
                line[key] = value
        reference = getattr(record, "k8s_ref", None)  # kopf's objects logger
        if isinstance(reference, dict):
            line["object"] = {
                k: reference[k] for k in ("kind", "namespace", "name") if k in reference
            }
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        return json.dumps(line, ensure_ascii=False, default=str)


class _TextFormatter(logging.Formatter):
    """The text line, with the phase it concerns before the message."""

    def format(self, record: logging.LogRecord) -> str:
        text = super().format(record)
        phase = getattr(record, "phase", None)
        if phase is None:
            return text
        namespace, execution = getattr(record, "namespace", ""), getattr(record, "execution", "")
        attempt = getattr(record, "attempt", None) or "-"
        where = f"[{namespace}/{execution}/{phase} a{attempt}] "
        head, _, message = text.partition(": ")
        return f"{head}: {where}{message}"


def configure(log_format: LogFormat, *, verbose: bool) -> None:
    """Log to stderr in ``log_format``, at debug level when ``verbose``."""
    handler = logging.StreamHandler()
    handler.addFilter(_PhaseFilter())
    formatter = JsonFormatter() if log_format is LogFormat.JSON else _TextFormatter(TEXT_FORMAT)
    handler.setFormatter(formatter)
    root = logging.getLogger()
    for existing in list(root.handlers):
        root.removeHandler(existing)
    root.addHandler(handler)
    root.setLevel(logging.DEBUG if verbose else logging.INFO)
