"""`python -m devcluster.demo` (`make demo`): agentjobs end to end on the local cluster.

It brings up the local control plane and S3 store (building them the first time),
installs the CRDs and the chart's RBAC for one namespace, starts the operator as a
local process with that ServiceAccount's token (not an admin credential), applies
the multi-phase example with the example agent, shows each phase's progress and
the agent's output live, and ends with the Execution's verdict and its artifacts (or,
when it does not finish in time, with where it stands: the conditions' messages and the
pods' container states).
The operator stops at the end; the cluster stays up for a look around.

`python -m devcluster.demo outcome` (`make demo-outcome`) runs the outcome example
instead: the example grader grades each attempt in its own pod, and each evaluation
is shown as it starts, while its grader runs and when it ends (R43).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from devcluster import cluster, operator_account
from devcluster.build import BuildError
from devcluster.demo_kubectl import AGENTJOBS, NAMESPACE, DemoError, Kubectl, step
from devcluster.demo_watch import print_artifacts, watch
from devcluster.layout import HOST_ADDRESS, REPO_ROOT, Layout, default_layout

WORK_DIR = REPO_ROOT / "build" / "demo"
# The demo operator's credentials endpoint, on the host's address on the node network.
CREDENTIALS_PORT = 8443


@dataclass(frozen=True)
class Example:
    """One example manifest the demo applies, and the Execution it creates."""

    execution: str
    manifest: Path
    what: str
    make_target: str


MULTI_PHASE = Example(
    "fix-flaky-test",
    REPO_ROOT / "manifests" / "examples" / "multi-phase.yaml",
    "three phases with the example agent",
    "demo",
)
OUTCOME = Example(
    "release-notes-graded",
    REPO_ROOT / "manifests" / "examples" / "outcome.yaml",
    "one phase graded against a rubric by the example grader",
    "demo-outcome",
)
EXAMPLES = {"multi-phase": MULTI_PHASE, "outcome": OUTCOME}


def install(kubectl: Kubectl) -> str:
    """CRDs, the namespace, and the chart's RBAC for it; returns the ServiceAccount's name."""
    kubectl.run("apply", "-f", str(REPO_ROOT / "crds"))
    for crd in sorted((REPO_ROOT / "crds").glob("*.yaml")):  # executions.yaml: its plural
        kubectl.run(
            "wait", "--for=condition=Established", f"crd/{crd.stem}.agentjobs.io", "--timeout=60s"
        )
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}}
    kubectl.run("apply", "-f", "-", input=json.dumps(namespace))
    account = operator_account.install_rbac(kubectl.env, NAMESPACE)
    print(f"serviceaccount/{account}, its role and rolebinding applied")
    return account


@contextmanager
def operator(kubectl: Kubectl, kubeconfig: Path) -> Iterator[Path]:
    """`agentjobs run` for the demo namespace, logging to a file; stopped on exit."""
    log = WORK_DIR / "operator.log"
    env = {**kubectl.env, "KUBECONFIG": str(kubeconfig)}
    # The default restricted security: the operator's image and the example agent run as
    # their Dockerfiles' user (65532). The operator runs here, outside the cluster, so its
    # credentials endpoint listens where the node's pods reach this host.
    argv = [
        str(AGENTJOBS), "run", "--namespace", NAMESPACE, "--pending-timeout", "60",
        f"--credentials-listen={HOST_ADDRESS}:{CREDENTIALS_PORT}",
    ]  # fmt: skip
    with log.open("wb") as output:
        process = subprocess.Popen(argv, env=env, stdout=output, stderr=subprocess.STDOUT)
    try:
        yield log
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        print(f"operator stopped (its log: {log.relative_to(REPO_ROOT)})", flush=True)


def remove_previous_run(kubectl: Kubectl, execution: str) -> None:
    """Delete an earlier run of the example, and wait for its phases to be collected."""
    kubectl.run(
        "delete", "execution", execution, "-n", NAMESPACE, "--ignore-not-found",
        "--timeout=60s",
    )  # fmt: skip
    selector = f"agentjobs.io/execution={execution}"
    deadline = time.monotonic() + 60
    while kubectl.json("get", "phases", "-n", NAMESPACE, "-l", selector)["items"]:
        if time.monotonic() > deadline:
            raise DemoError("the previous run's phases were not garbage-collected in 60 s")
        time.sleep(0.5)


def summarize(kubectl: Kubectl, example: Example, execution: dict[str, Any]) -> bool:
    status = execution.get("status") or {}
    name = example.execution
    step("The Execution and its phases")
    print(kubectl.run("get", "execution", name, "-n", NAMESPACE).rstrip())
    print(
        kubectl.run(
            "get", "phases", "-n", NAMESPACE, "-l", f"agentjobs.io/execution={name}"
        ).rstrip()
    )
    step("The verdict (.status)")
    outcome = status.get("taskOutcome") or {}
    print(f"status:       {status.get('status')}")
    phases = ", ".join(f"{p['name']}={p['status']}" for p in status.get("phases", []))
    print(f"phases:       {phases}")
    print(f"outcome:      {outcome.get('status')} (from the {outcome.get('source')})")
    print(f"summary:      {outcome.get('summary')}")
    if status.get("outcome"):
        print(f"evaluation:   {status['outcome']} (the latest of its phases' outcomes)")
    step(f"Artifacts (agentjobs artifacts {NAMESPACE}/{name})")
    print_artifacts(kubectl, name)
    return status.get("status") == "completed"


def goodbye(layout: Layout, example: Example) -> None:
    python = os.path.relpath(sys.executable, Path.cwd())
    step("The cluster is still up")
    print(f'look around:     eval "$({python} -m devcluster env)"')
    print(f"                 kubectl get executions,phases,pods -n {NAMESPACE}")
    agentjobs = os.path.relpath(AGENTJOBS, Path.cwd())
    print(f"                 {agentjobs} artifacts {NAMESPACE}/{example.execution} --download DIR")
    print(f"run it again:    make {example.make_target}")
    print(f"take it down:    {python} -m devcluster down   (state in {layout.root})")


def run_demo(example: Example = MULTI_PHASE) -> bool:
    layout = default_layout()
    WORK_DIR.mkdir(parents=True, exist_ok=True)
    step("Local control plane, node and S3 store (built on first use)")
    cluster.up(layout)
    kubectl = Kubectl(cluster.environment(layout))
    step(f"CRDs, and the chart's RBAC for namespace {NAMESPACE}")
    account = install(kubectl)
    kubeconfig = operator_account.token_kubeconfig(
        kubectl.env, NAMESPACE, account, WORK_DIR / "operator.kubeconfig", duration="2h"
    )
    step(f"The operator, as ServiceAccount {NAMESPACE}/{account}")
    with operator(kubectl, kubeconfig):
        remove_previous_run(kubectl, example.execution)
        step(f"Applying {example.manifest.relative_to(REPO_ROOT)}: {example.what}")
        print(kubectl.run("apply", "-n", NAMESPACE, "-f", str(example.manifest)).rstrip())
        execution = watch(kubectl, example.execution)
    completed = summarize(kubectl, example, execution)
    goodbye(layout, example)
    return completed


def main(argv: Sequence[str] | None = None) -> int:
    names = list(sys.argv[1:] if argv is None else argv) or ["multi-phase"]
    if len(names) != 1 or names[0] not in EXAMPLES:
        print(f"usage: python -m devcluster.demo [{' | '.join(EXAMPLES)}]", file=sys.stderr)
        return 2
    try:
        return 0 if run_demo(EXAMPLES[names[0]]) else 1
    except (DemoError, BuildError, cluster.ClusterError) as error:
        print(f"demo: {error}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
