"""Build the pinned Go binaries once and cache them under ~/.cache/agentjobs, keyed by version."""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

CACHE_DIR = Path.home() / ".cache" / "agentjobs"
BIN_DIR = CACHE_DIR / "bin"
GO_MODULES_DIR = Path(__file__).resolve().parent / "go"

KUBERNETES_VERSION = "v1.35.4"
# The module proxy records when the release was tagged; using it keeps builds reproducible.
KUBERNETES_BUILD_DATE = "2026-04-15T18:01:22Z"
ETCD_VERSION = "v3.6.16"
HELM_VERSION = "v3.22.0"
VERSITYGW_VERSION = "v1.8.0"
# MinIO is a test server only (AGPL): built here to prove the operator against it, never
# shipped or linked. The module proxy serves only this pseudo-version of its last commit.
MINIO_VERSION = "v0.0.0-20260212201848-7aac2a2c5b7c"
# Simulated nodes for the scale benchmark: pods there run by stages, not as processes.
KWOK_VERSION = "v0.8.0"
# kstatus's rules (what Flux, kpt and cli-utils' appliers wait on), for a test of the conditions.
KSTATUS_VERSION = "v0.37.2"
# Cluster DNS for the real node's pods (devcluster.dns), with only the plugins it uses.
COREDNS_VERSION = "v1.15.0"


@dataclass(frozen=True)
class GoModuleBuild:
    """One `go build` run inside a wrapper module under devcluster/go/."""

    module_dir: str
    version: str
    # binary name -> Go package path that builds it
    packages: Mapping[str, str]
    ldflags: tuple[str, ...] = ()


def _kubernetes_version_flags() -> tuple[str, ...]:
    major, minor, _patch = KUBERNETES_VERSION.removeprefix("v").split(".")
    values = {
        "gitVersion": KUBERNETES_VERSION,
        "gitMajor": major,
        "gitMinor": minor,
        "gitTreeState": "clean",
        "buildDate": KUBERNETES_BUILD_DATE,
        # Module zips carry no commit hash; empty beats the unexpanded `$Format:%H$` placeholder.
        "gitCommit": "",
    }
    return tuple(
        f"-X {package}.{name}={value}"
        for package in ("k8s.io/component-base/version", "k8s.io/client-go/pkg/version")
        for name, value in values.items()
    )


def _helm_version_flags() -> tuple[str, ...]:
    return (
        f"-X helm.sh/helm/v3/internal/version.version={HELM_VERSION}",
        "-X helm.sh/helm/v3/internal/version.gitTreeState=clean",
    )


def _minio_version_flags() -> tuple[str, ...]:
    # A pseudo-version is v0.0.0-YYYYMMDDHHMMSS-<12 hex of the commit>: MinIO's own release
    # stamps are that time (RFC 3339, and the tag's dashed form) and that commit.
    _base, stamp, commit = MINIO_VERSION.split("-")
    date = f"{stamp[0:4]}-{stamp[4:6]}-{stamp[6:8]}"
    clock = f"{stamp[8:10]}:{stamp[10:12]}:{stamp[12:14]}"
    values = {
        "Version": f"{date}T{clock}Z",
        "ReleaseTag": f"DEVELOPMENT.{date}T{clock.replace(':', '-')}Z",
        "CommitID": commit,
        "ShortCommitID": commit,
        "CopyrightYear": stamp[0:4],
    }
    return tuple(f"-X github.com/minio/minio/cmd.{name}={value}" for name, value in values.items())


BUILDS: tuple[GoModuleBuild, ...] = (
    GoModuleBuild(
        module_dir="kubernetes",
        version=KUBERNETES_VERSION,
        packages={
            name: f"k8s.io/kubernetes/cmd/{name}"
            for name in ("kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubectl")
        },
        ldflags=_kubernetes_version_flags(),
    ),
    # The real node's binaries, from the same wrapper module but a build of their own, so that
    # adding them did not rebuild the cached control plane.
    GoModuleBuild(
        module_dir="kubernetes",
        version=KUBERNETES_VERSION,
        packages={name: f"k8s.io/kubernetes/cmd/{name}" for name in ("kubelet", "kube-proxy")},
        ldflags=_kubernetes_version_flags(),
    ),
    GoModuleBuild(module_dir="etcd", version=ETCD_VERSION, packages={"etcd": "."}),
    GoModuleBuild(
        module_dir="helm",
        version=HELM_VERSION,
        packages={"helm": "helm.sh/helm/v3/cmd/helm"},
        ldflags=_helm_version_flags(),
    ),
    GoModuleBuild(
        module_dir="versitygw",
        version=VERSITYGW_VERSION,
        packages={"versitygw": "github.com/versity/versitygw/cmd/versitygw"},
        ldflags=(f"-X main.Version={VERSITYGW_VERSION}",),
    ),
    GoModuleBuild(
        module_dir="minio",
        version=MINIO_VERSION,
        packages={"minio": "github.com/minio/minio"},
        ldflags=_minio_version_flags(),
    ),
    GoModuleBuild(
        module_dir="kwok",
        version=KWOK_VERSION,
        packages={"kwok": "sigs.k8s.io/kwok/cmd/kwok"},
    ),
    GoModuleBuild(module_dir="kstatus", version=KSTATUS_VERSION, packages={"kstatus": "."}),
    GoModuleBuild(module_dir="coredns", version=COREDNS_VERSION, packages={"coredns": "."}),
)


def binary_path(name: str) -> Path:
    """Where the cached binary `name` lives, e.g. ~/.cache/agentjobs/bin/etcd-v3.6.16."""
    for build in BUILDS:
        if name in build.packages:
            return BIN_DIR / f"{name}-{build.version}"
    raise KeyError(f"no Go build produces a binary named {name!r}")


def all_binary_names() -> list[str]:
    return [name for build in BUILDS for name in build.packages]


def builds_for(names: Collection[str] | None) -> list[GoModuleBuild]:
    """The builds producing any of the binaries `names` (all of them for None)."""
    unknown = set(names or ()) - set(all_binary_names())
    if unknown:
        raise KeyError(f"no Go build produces {sorted(unknown)}")
    return [b for b in BUILDS if names is None or not set(b.packages).isdisjoint(names)]


def go_environment() -> dict[str, str]:
    """The environment for our `go` invocations: private caches so later builds reuse work."""
    env = dict(os.environ)
    env["GOMODCACHE"] = str(CACHE_DIR / "gomod")
    env["GOCACHE"] = str(CACHE_DIR / "gobuild")
    # Static binaries that do not depend on the host's C library or compiler.
    env["CGO_ENABLED"] = "0"
    # Module zips carry no VCS data, so stamping VCS info would fail.
    flags = env.get("GOFLAGS", "").split()
    # -modcacherw: the module cache stays deletable with plain `rm -rf`.
    for flag in ("-buildvcs=false", "-modcacherw"):
        if flag not in flags:
            flags.append(flag)
    env["GOFLAGS"] = " ".join(flags)
    return env


def _missing(build: GoModuleBuild) -> bool:
    return any(not binary_path(name).is_file() for name in build.packages)


def _run_build(build: GoModuleBuild, log: TextIO) -> None:
    module = GO_MODULES_DIR / build.module_dir
    with tempfile.TemporaryDirectory(dir=BIN_DIR, prefix=f".build-{build.module_dir}-") as out:
        command = [
            "go",
            "build",
            "-mod=readonly",
            "-trimpath",
            "-ldflags=" + " ".join(("-s", "-w", *build.ldflags)),
            "-o",
            out + os.sep,
            *build.packages.values(),
        ]
        started = time.monotonic()
        print(f"building {', '.join(build.packages)} {build.version} ...", file=log, flush=True)
        result = subprocess.run(command, cwd=module, env=go_environment(), check=False)
        if result.returncode != 0:
            raise BuildError(f"`go build` in {module} failed with exit code {result.returncode}")
        for name, package in build.packages.items():
            # `go build -o DIR/` names each binary after the last element of its import path.
            produced_name = module.name if package == "." else package.rsplit("/", 1)[-1]
            os.replace(Path(out) / produced_name, binary_path(name))
        elapsed = time.monotonic() - started
        print(f"built {', '.join(build.packages)} in {elapsed:.0f}s", file=log, flush=True)


class BuildError(RuntimeError):
    """A pinned Go module could not be built."""


def ensure_binaries(
    log: TextIO = sys.stderr, names: Collection[str] | None = None
) -> dict[str, Path]:
    """Build whichever pinned binaries are not cached yet, of those named (default: all), so
    that e.g. Helm alone does not wait for MinIO's build; return each one's path."""
    builds = builds_for(names)
    if shutil.which("go") is None:
        raise BuildError("the `go` command is not on PATH; it is needed to build the cluster")
    BIN_DIR.mkdir(parents=True, exist_ok=True)
    # Two `up` commands at once must not build into the same files.
    with open(BIN_DIR / ".build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        for build in builds:
            if _missing(build):
                _run_build(build, log)
    return {name: binary_path(name) for build in builds for name in build.packages}


def link_unversioned(binaries: Mapping[str, Path], directory: Path) -> None:
    """Point `directory/<name>` at each versioned binary, so the directory can go on PATH."""
    directory.mkdir(parents=True, exist_ok=True)
    for name, target in binaries.items():
        link = directory / name
        if link.is_symlink() and link.readlink() == target:
            continue
        temporary = directory / f".{name}.new"
        temporary.unlink(missing_ok=True)
        temporary.symlink_to(target)
        os.replace(temporary, link)


if __name__ == "__main__":
    for binary_name, path in ensure_binaries().items():
        print(f"{binary_name}: {path}")
