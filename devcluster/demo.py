"""`python -m devcluster.demo` (`make demo`): agentjobs end to end on the local cluster.

It brings up the local control plane and S3 store (building them the first time),
installs the CRDs and the chart's RBAC for one namespace, starts the operator as a
local process with that ServiceAccount's token (not an admin credential), applies
the multi-phase example with the example agent, shows each phase's progress and
the agent's output live, and ends with the Execution's verdict and its artifacts.
The operator stops at the end; the cluster stays up for a look around.

`python -m devcluster.demo outcome` (`make demo-outcome`) runs the outcome example
instead: the example grader grades each attempt in its own pod, and each evaluation
is shown as it starts, while its grader runs and when it ends (R43).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from devcluster import cluster, processes
from devcluster.build import KUBERNETES_VERSION, BuildError
from devcluster.components import NODE
from devcluster.layout import REPO_ROOT, Layout, default_layout

NAMESPACE = "agentjobs-demo"
RELEASE = "agentjobs"
AGENT_SCRIPT = REPO_ROOT / "manifests" / "examples" / "agent" / "agent.sh"
GRADER_SCRIPT = REPO_ROOT / "manifests" / "examples" / "agent" / "grade.sh"
AGENT_IMAGE = "ghcr.io/agentjobs/example-agent"
CHART = REPO_ROOT / "charts" / "agentjobs"
WORK_DIR = REPO_ROOT / "build" / "demo"
AGENTJOBS = Path(sys.executable).parent / "agentjobs"
TIMEOUT_SECONDS = 300.0
RBAC_TEMPLATES = ("serviceaccount.yaml", "role.yaml", "rolebinding.yaml")


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


class DemoError(RuntimeError):
    """A step of the demo failed; the message says which and why."""


def step(text: str) -> None:
    print(f"\n==> {text}", flush=True)


class Kubectl:
    """kubectl (and helm) with the cluster's environment."""

    def __init__(self, env: dict[str, str]) -> None:
        self.env = {**os.environ, **env}

    def run(self, *args: str, input: str | None = None, check: bool = True) -> str:
        return self.tool("kubectl", *args, input=input, check=check)

    def tool(self, *argv: str, input: str | None = None, check: bool = True) -> str:
        result = subprocess.run(
            list(argv), input=input, env=self.env, capture_output=True, text=True, check=False
        )
        if check and result.returncode != 0:
            raise DemoError(f"`{' '.join(argv)}` failed:\n{result.stderr.strip()}")
        return result.stdout

    def json(self, *args: str) -> Any:
        return json.loads(self.run(*args, "-o", "json"))


def _node_image_files(layout: Layout) -> list[str]:
    pid = processes.alive(layout.pid_file(NODE.name))
    if pid is None:
        return []
    argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    return [a.decode().removeprefix("--images=") for a in argv if a.startswith(b"--images=")]


def agent_image_table(layout: Layout) -> Path:
    """An image table for the process node that runs the example agent's script.

    The script is copied into the cluster's state directory and named by its absolute
    path, because a phase container's /tmp is its own: a checkout under /tmp would be
    hidden from it. It runs as 65532, the user of manifests/examples/agent/Dockerfile.
    """
    directory = layout.root / "images"
    directory.mkdir(parents=True, exist_ok=True)
    script = directory / "example-agent.sh"
    shutil.copyfile(AGENT_SCRIPT, script)
    # `agent.sh grade` runs the grade.sh beside it, as in the image (the outcome example).
    shutil.copyfile(GRADER_SCRIPT, directory / "grade.sh")
    table = directory / "example-agent.yaml"
    entry = {
        "entrypoint": ["sh", str(script)],
        "env": {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"},
        "workingDir": "/workspace",
        "user": "65532:65532",
    }
    table.write_text(yaml.safe_dump({"images": {AGENT_IMAGE: entry}}))
    return table


def bring_up_cluster(layout: Layout) -> None:
    """Start the cluster with the example agent's image table; restart a node that lacks it."""
    images = agent_image_table(layout)
    extra = [p for p in os.environ.get("AGENTJOBS_EXTRA_IMAGES", "").split(os.pathsep) if p]
    if str(images) not in extra:
        os.environ["AGENTJOBS_EXTRA_IMAGES"] = os.pathsep.join([*extra, str(images)])
    cluster.up(layout)
    if str(images.resolve()) not in _node_image_files(layout):
        print("restarting the node so that it knows the example agent's image", flush=True)
        processes.stop(layout.pid_file(NODE.name), NODE.grace_seconds)
        cluster.up(layout)


def install(kubectl: Kubectl) -> str:
    """CRDs, the namespace, and the chart's RBAC for it; returns the ServiceAccount's name."""
    kubectl.run("apply", "-f", str(REPO_ROOT / "crds"))
    for crd in ("executions.agentjobs.io", "phases.agentjobs.io"):
        kubectl.run("wait", "--for=condition=Established", f"crd/{crd}", "--timeout=60s")
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}}
    kubectl.run("apply", "-f", "-", input=json.dumps(namespace))
    show_only = [arg for name in RBAC_TEMPLATES for arg in ("--show-only", f"templates/{name}")]
    rendered = kubectl.tool(
        "helm", "template", RELEASE, str(CHART), "--namespace", NAMESPACE,
        "--kube-version", KUBERNETES_VERSION,
        "--set", f"watchNamespaces={{{NAMESPACE}}}", *show_only,
    )  # fmt: skip
    print(kubectl.run("apply", "-f", "-", input=rendered).rstrip())
    objects = [doc for doc in yaml.safe_load_all(rendered) if doc]
    (account,) = [o["metadata"]["name"] for o in objects if o["kind"] == "ServiceAccount"]
    return str(account)


def token_kubeconfig(kubectl: Kubectl, account: str) -> Path:
    """A kubeconfig that authenticates as the operator's ServiceAccount."""
    token = kubectl.run("create", "token", account, "-n", NAMESPACE, "--duration=2h").strip()
    admin = yaml.safe_load(Path(kubectl.env["KUBECONFIG"]).read_text())
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": admin["clusters"][:1],
        "users": [{"name": account, "user": {"token": token}}],
        "contexts": [
            {
                "name": account,
                "context": {"cluster": admin["clusters"][0]["name"], "user": account},
            }
        ],
        "current-context": account,
    }
    path = WORK_DIR / "operator.kubeconfig"
    path.write_text(yaml.safe_dump(config))
    path.chmod(0o600)
    return path


@contextmanager
def operator(kubectl: Kubectl, kubeconfig: Path) -> Iterator[Path]:
    """`agentjobs run` for the demo namespace, logging to a file; stopped on exit."""
    log = WORK_DIR / "operator.log"
    env = {**kubectl.env, "KUBECONFIG": str(kubeconfig)}
    # The default restricted security: the operator's image and the example agent run as
    # their Dockerfiles' user (65532), as the node's image table says.
    argv = [str(AGENTJOBS), "run", "--namespace", NAMESPACE, "--pending-timeout", "60"]
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


def _follow_log(kubectl: Kubectl, pod: str, container: str) -> None:
    """Print the agent's (or grader's) output as it comes, indented; retry while its
    container starts."""
    argv = ["kubectl", "logs", "-f", "-n", NAMESPACE, pod, "-c", container, "--prefix=false"]
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        with subprocess.Popen(
            argv, env=kubectl.env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
        ) as process:
            assert process.stdout is not None
            for line in process.stdout:
                print(f"    | {line.rstrip()}", flush=True)
        if process.returncode == 0:
            return
        time.sleep(0.3)  # not started yet (PodInitializing)


def _phase_line(phase: dict[str, Any]) -> str:
    status = phase.get("status") or {}
    name = phase["spec"]["name"]
    state = status.get("status") or "pending"
    if state == "running":
        return f"phase {name}: running in pod {status.get('podName')}"
    if state in ("pending", "waiting"):
        return f"phase {name}: {state}"
    report = status.get("report") or {}
    verdict = f"phase {name}: {state}"
    if report.get("comments"):
        verdict += f' (the agent says: "{report["comments"]}")'
    if status.get("error"):
        verdict += f" - {status['error']}"
    return verdict


def _evaluation_lines(phase: dict[str, Any]) -> list[tuple[str, bool, str]]:
    """Each evaluation of the phase's outcome as it stands (R43): its grader pod, whether it
    has ended, and a line saying it is grading or its result."""
    lines = []
    outcome = (phase.get("status") or {}).get("outcome") or {}
    for evaluation in outcome.get("evaluations") or []:
        pod = str(evaluation.get("graderPod"))
        head = f"  evaluation {evaluation['iteration']} (grader pod {pod})"
        result = evaluation.get("result")
        if result is None:
            lines.append((pod, False, f"{head}: grading"))
            continue
        unmet = [c["name"] for c in evaluation.get("criteria") or [] if not c.get("met")]
        detail = f"; not met: {', '.join(unmet)}" if unmet else ""
        explanation = evaluation.get("explanation") or ""
        lines.append((pod, True, f"{head}: {result} - {explanation}{detail}"))
    return lines


def watch(kubectl: Kubectl, execution_name: str) -> dict[str, Any]:
    """Print phase transitions, evaluations and the agents' and graders' output until the
    Execution has finished."""
    seen: dict[str, str] = {}
    evaluations_shown: set[str] = set()
    followers: dict[str, threading.Thread] = {}
    deadline = time.monotonic() + TIMEOUT_SECONDS
    selector = f"agentjobs.io/execution={execution_name}"
    while True:
        phases = kubectl.json("get", "phases", "-n", NAMESPACE, "-l", selector)["items"]
        for phase in sorted(phases, key=lambda p: p["spec"].get("index", 0)):
            name, status = phase["metadata"]["name"], phase.get("status") or {}
            pod = status.get("podName")
            evaluations = _evaluation_lines(phase)
            graders = [grader for grader, _, _ in evaluations]
            containers: dict[str, str] = {pod: "agent"} if pod else {}
            containers |= dict.fromkeys(graders, "grader")
            for followed, container in containers.items():
                if followed not in followers:
                    followers[followed] = threading.Thread(
                        target=_follow_log, args=(kubectl, followed, container), daemon=True
                    )
                    followers[followed].start()
            for grader, ended, line in evaluations:
                if line in evaluations_shown:
                    continue
                if ended and grader in followers:
                    followers[grader].join(timeout=10)  # the grader's words before its result
                evaluations_shown.add(line)
                print(line, flush=True)
            line = _phase_line(phase)
            if seen.get(name) == line:
                continue
            if pod and status.get("finishedAt"):
                followers[pod].join(timeout=10)  # the agent's last words before the verdict
            seen[name] = line
            print(line, flush=True)
        execution: dict[str, Any] = kubectl.json(
            "get", "execution", execution_name, "-n", NAMESPACE
        )
        conditions = (execution.get("status") or {}).get("conditions") or []
        if any(c["type"] == "Finished" and c["status"] == "True" for c in conditions):
            return execution
        if time.monotonic() > deadline:
            raise DemoError(f"the execution did not finish in {TIMEOUT_SECONDS:.0f} s")
        time.sleep(0.5)


def print_artifacts(kubectl: Kubectl, execution_name: str) -> None:
    """The artifact list, from `agentjobs artifacts` (or the phases' status without it)."""
    result = subprocess.run(
        [str(AGENTJOBS), "artifacts", f"{NAMESPACE}/{execution_name}"],
        env=kubectl.env,
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode == 0:
        print(result.stdout.rstrip())
        return
    if "invalid choice" not in result.stderr:
        raise DemoError(f"`agentjobs artifacts` failed:\n{result.stderr.strip()}")
    selector = f"agentjobs.io/execution={execution_name}"
    for phase in kubectl.json("get", "phases", "-n", NAMESPACE, "-l", selector)["items"]:
        for artifact in (phase.get("status") or {}).get("artifacts") or []:
            print(f"{phase['spec']['name']:12} {json.dumps(artifact)}")


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
    step("Local control plane, process node and S3 store (built on first use)")
    bring_up_cluster(layout)
    kubectl = Kubectl(cluster.environment(layout))
    step(f"CRDs, and the chart's RBAC for namespace {NAMESPACE}")
    account = install(kubectl)
    kubeconfig = token_kubeconfig(kubectl, account)
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
