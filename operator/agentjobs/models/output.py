"""What a phase's output directory holds, as listed without following a link (R28)."""

from __future__ import annotations

from enum import StrEnum

from agentjobs.models.contract import ContractModel


class EntryKind(StrEnum):
    """What an entry of the output directory is."""

    FILE = "file"
    SYMLINK = "symlink"
    SPECIAL = "special"


class OutputEntry(ContractModel):
    """One entry under the output directory; ``path`` is relative and uses ``/``."""

    path: str
    kind: EntryKind
    size: int = 0
    modified_ns: int = 0
