"""What a phase's output directory holds, as listed without following a link (R28)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from agentjobs.models.contract import ContractModel

GIB = 1024**3
DEFAULT_MAX_FILES = 10_000
DEFAULT_MAX_FILE_BYTES = 1 * GIB
DEFAULT_MAX_PHASE_BYTES = 4 * GIB


@dataclass(frozen=True)
class HarvestLimits:
    """How much one phase may store."""

    max_files: int = DEFAULT_MAX_FILES
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES
    max_phase_bytes: int = DEFAULT_MAX_PHASE_BYTES


DEFAULT_HARVEST_LIMITS = HarvestLimits()

# The longest relative path that is stored: S3 keys are at most 1024 bytes, and the
# attempt's prefix and ``output/`` take the rest.
MAX_PATH_BYTES = 768


class EntryKind(StrEnum):
    """What an entry of the output directory is."""

    FILE = "file"
    SYMLINK = "symlink"
    SPECIAL = "special"
    DIRECTORY = "directory"  # only a directory that could not be walked is an entry


class OutputEntry(ContractModel):
    """One entry under the output directory; ``path`` is relative and uses ``/``.

    A name that is not UTF-8 is shown with its bad bytes escaped (``\\xff``);
    such an entry always has a ``problem`` and is never stored.
    """

    path: str
    kind: EntryKind
    size: int = 0
    modified_ns: int = 0
    # Why the lister could not take this entry (a name that is not UTF-8, a directory it
    # may not read, a cap): the entry is skipped with this reason.
    problem: str | None = None
