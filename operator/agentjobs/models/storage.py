"""Where artifacts are kept, and the manifest the harvester writes beside them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal
from urllib.parse import urlsplit

from pydantic import Field

from agentjobs.models.contract import ContractModel
from agentjobs.models.output import EntryKind

SHA256_PATTERN = r"^[0-9a-f]{64}$"


class ManifestEntry(ContractModel):
    """One entry of a phase's output directory as the harvester found it (R28).

    ``uploaded`` is true when the file's bytes are stored under ``output/``;
    empty files are recorded but not stored (R29 replaces them), and skipped
    entries carry the reason.
    """

    path: str
    kind: EntryKind
    size: int = 0
    sha256: str | None = None
    content_type: str | None = None
    uploaded: bool = False
    skipped: str | None = None


class StoredPatch(ContractModel):
    """A patch the harvester stored under ``work/<repo>/`` beside ``output/`` (R52)."""

    size: int = Field(ge=0)
    sha256: str = Field(pattern=SHA256_PATTERN)


class RepositoryRecord(ContractModel):
    """A git repository under /workspace as the harvester's last sync found it (R52).

    ``repo`` is its path under /workspace; ``upstream`` the remote-tracking
    branch its commits were compared with (None: with every remote-tracking
    ref); ``commits`` how many non-merge commits are not there, all in
    ``unpushed_patch``, of which ``workflow_commits`` change
    ``.github/workflows/`` (their part of it in ``workflow_patch``).
    ``skipped`` says why the commits could not be saved.
    """

    repo: str
    branch: str | None = None
    head: str | None = None
    upstream: str | None = None
    commits: int = 0
    merges_left_out: int = 0
    workflow_commits: int = 0
    unpushed_patch: StoredPatch | None = None
    workflow_patch: StoredPatch | None = None
    skipped: str | None = None


class CheckoutRecord(ContractModel):
    """A repository the phase checked out (R63, R64), as the harvester's last sync left it:
    where the checkout started (``base``; ``since``: the remote's commit the work builds
    on), where the work branch ended (``head``), the bundle of the commits since ``since``,
    and the push (``pushed`` None: not asked for; ``push_fault`` and ``push_error``: why it
    did not land, in the server's words)."""

    name: str
    base_ref: str
    base_commit: str
    since: str
    branch: str
    head: str | None = None
    commits: int = 0
    bundle: StoredPatch | None = None
    pushed: bool | None = None
    push_fault: str | None = None
    push_error: str | None = None
    workflow_changes_quarantined: bool = False
    uncommitted_changes: bool = False
    uncommitted_patch: StoredPatch | None = None
    skipped: str | None = None


class ArtifactManifest(ContractModel):
    """``manifest.json``: written after every sync; ``final`` once the last sync succeeded,
    and only the final one records the repositories (``work``). ``failure`` says why the
    last sync was given up (a refusal that asking again cannot change); never final."""

    version: Literal[1] = 1
    final: bool = False
    failure: str | None = None
    entries: list[ManifestEntry] = []
    work: list[RepositoryRecord] = []
    checkouts: list[CheckoutRecord] = []


class InputArtifact(ContractModel):
    """An artifact handed to the next phase (R35): where it is stored and what it must hash to."""

    path: str
    url: str
    sha256: str
    size: int


class HandoffManifest(ContractModel):
    """``artifacts.json``: every artifact a phase hands on (R35), however many.

    The operator writes it beside the attempt's objects once the phase has
    ended (the harvester's files and the recovered ones); the Phase's status
    and the next Phase's spec name it by :class:`HandoffRef` instead of
    listing every artifact, so neither grows with the output directory.
    """

    version: Literal[1] = 1
    artifacts: list[InputArtifact] = []


class HandoffRef(ContractModel):
    """Where a phase's :class:`HandoffManifest` is stored and what its bytes hash to."""

    manifest: str = Field(min_length=1, max_length=2048)
    sha256: str = Field(pattern=SHA256_PATTERN)
    count: int = Field(ge=0)


@dataclass(frozen=True)
class ObjectLocation:
    bucket: str
    key: str

    @property
    def url(self) -> str:
        return f"s3://{self.bucket}/{self.key}"

    @classmethod
    def parse(cls, url: str) -> ObjectLocation:
        parts = urlsplit(url)
        if parts.scheme != "s3" or not parts.netloc or not parts.path.strip("/"):
            raise ValueError(f"not an s3://bucket/key URL: {url!r}")
        return cls(parts.netloc, parts.path.lstrip("/"))
