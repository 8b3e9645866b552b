"""What a repository costs a phase: the fetcher's checkout and the harvester's hand-off and
push, beside a plain ``git clone`` of the same repository (R65, R66).

Serves a repository of N files (default 10,000, about 40 bytes each, in 100 directories) from
the project's test git server on loopback, then times, in this one process, each step as a
phase pod makes it, with the sidecars' own code:

- ``git clone``: a plain clone of the repository over the same server, the baseline;
- first checkout: ``hydration.hydrate`` from the remote (what phase 1's fetcher does);
- hand-off: ``work_handoff.hand_off`` after one commit changing 10 files: read the work
  branch, bundle the commit, push it (what phase 1's harvester does at its last sync);
- handed checkout: ``hydration.hydrate`` from the remote's commit plus the bundle (what
  phase 2's fetcher does).

Each is run ``--runs`` times (default 3) and the median printed, with its ratio to the clone.

    TMPDIR=/dev/shm python -m benchmarks.repository_handoff [--files 10000] [--runs 3]

Writing 10,000 files dominates both a clone and a checkout; on a busy disk its writeback
makes the figures vary by seconds from run to run, so keep the work trees on tmpfs
(``TMPDIR``) to compare what git and the sidecars do.
"""

from __future__ import annotations

import argparse
import base64
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from agentjobs.contract.artifacts.unpushed_work import DEFAULT_LIMITS
from agentjobs.models.repositories import HandedWork, PhaseRepository
from agentjobs.models.storage import StoredPatch
from agentjobs.sidecars import hydration, work_handoff
from devcluster.git_server import GitServer, Token

TOKEN = Token("benchmark-token-0123456789")
GIT_ENV = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null"}


def _timed(step: Callable[[], object]) -> float:
    started = time.perf_counter()
    step()
    return time.perf_counter() - started


def _git(directory: Path, *arguments: str) -> None:
    subprocess.run(
        ["git", "-C", str(directory), "-c", "user.name=b", "-c", "user.email=b@example.test",
         *arguments],
        check=True, capture_output=True, env=GIT_ENV,
    )  # fmt: skip


class Phase:
    def __init__(self, root: Path, url: str, handed: HandedWork | None = None) -> None:
        self.root = root
        self.workspace = root / "workspace"
        self.credentials = root / "credentials" / "service"
        self.checkouts = root / "checkouts" / "checkouts.json"
        for directory in (self.workspace, self.credentials):
            directory.mkdir(parents=True)
        (self.credentials / "token").write_text(TOKEN.value)
        self.repository = PhaseRepository(
            name="service", url=url, branch="agentjobs/benchmark", push=True,
            credentials_secret="git", handed=handed,
        )  # fmt: skip

    def check_out(self) -> None:
        scratch = self.root / "fetcher"
        scratch.mkdir()

        def fetch(handed: HandedWork, target: Path) -> None:
            assert handed.bundle is not None
            shutil.copyfile(handed.bundle, target)

        hydration.hydrate(
            fetch, [self.repository], workspace=self.workspace,
            credentials_root=self.credentials.parent, started_file=self.checkouts,
            scratch=scratch,
        )  # fmt: skip

    def hand_off(self) -> None:
        scratch = self.root / "harvester"
        scratch.mkdir()

        def store(repository: str, name: str, path: Path) -> StoredPatch:
            shutil.copyfile(path, self.root / name)
            return StoredPatch(size=path.stat().st_size, sha256="0" * 64)

        [record] = work_handoff.hand_off(
            self.checkouts, workspace=self.workspace, scratch=scratch,
            credentials_root=self.credentials.parent, limits=DEFAULT_LIMITS, store=store,
        )  # fmt: skip
        assert record.pushed and record.commits == 1, record


def _files(count: int) -> dict[str, str]:
    return {
        f"src/d{i % 100:02d}/f{i:05d}.txt": f"line {i} of the benchmark\n" for i in range(count)
    }


def run_once(server: GitServer, root: Path, url: str) -> dict[str, float]:
    clone = root / "clone"
    header = "Authorization: Basic " + base64.b64encode(f"x:{TOKEN.value}".encode()).decode()
    times = {
        "git clone": _timed(
            lambda: _git(root, "-c", f"http.extraHeader={header}", "clone", "-q", url, str(clone))
        )
    }
    first = Phase(root / "one", url)
    times["first checkout"] = _timed(first.check_out)
    work = first.workspace / "service"
    for index in range(10):
        (work / f"src/d00/f{index * 100:05d}.txt").write_text("changed\n")
    _git(work, "commit", "-q", "-am", "Ten files")
    times["hand-off and push"] = _timed(first.hand_off)
    base = subprocess.run(
        ["git", "-C", str(work), "rev-parse", "HEAD~1", "HEAD"],
        check=True, capture_output=True, text=True, env=GIT_ENV,
    ).stdout.split()  # fmt: skip
    handed = HandedWork(
        commit=base[1], since=base[0], bundle=str(first.root / work_handoff.BUNDLE),
        bundle_sha256="0" * 64,
    )  # fmt: skip
    second = Phase(root / "two", url, handed)
    times["handed checkout"] = _timed(second.check_out)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    results: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory(prefix="agentjobs-bench-") as top:
        for run in range(args.runs):
            root = Path(top) / f"run-{run}"
            with GitServer(root / "server", tokens=[TOKEN]) as server:
                url = server.create("service", _files(args.files))
                for step, seconds in run_once(server, root, url).items():
                    results.setdefault(step, []).append(seconds)
    baseline = statistics.median(results["git clone"])
    print(f"{args.files} files, median of {args.runs} run(s):")
    for step, seconds in results.items():
        median = statistics.median(seconds)
        print(f"  {step:<18} {median * 1000:8.0f} ms  {median / baseline:5.2f}x git clone")
    phase = statistics.median(
        [
            a + b
            for a, b in zip(results["hand-off and push"], results["handed checkout"], strict=True)
        ]
    )
    print(f"  hand-off + next checkout {phase * 1000:.0f} ms ({phase / baseline:.2f}x git clone)")


if __name__ == "__main__":
    main()
