"""The real Claude Code, Codex and Gemini CLIs in phase pods, on the real kubelet, talking to
the scripted model server (R13b-R13f, R36-R42).

Each runs from its image (manifests/agents), headless on the phase's prompt, against a
script of the model's answers. Every case runs the three CLIs at once, an Execution each.
Cases: success with the deliverable written by the CLI's own file tool, and usage in the
Phase and the Execution equal to what the server sent; a failure report; a report split
across the stream's deltas; a report only in a tool's output, which is not the agent's;
401 → blocked (auth), 429 → blocked (rate_limit), an unknown model → blocked (config); two
phases, the second CLI reading the first's artifact from artifacts/input; the CLI as the
grader of an outcome, the agent revising with its feedback. And each example in
manifests/examples/agents, applied as it is but for its Secrets' values and the addresses of
the API and the repository (the real git server), completes with the repository checked out
on its work branch.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from devcluster.git_server import GitServer, Token
from devcluster.images.catalog import AGENT_CLI_IMAGES
from devcluster.layout import HOST_ADDRESS
from devcluster.testing import Kubectl, load_images
from tests.integration.operator_fixtures import OperatorProcess, phase_status, wait_finished
from tests.model_server.agents import CLIS, Cli, report
from tests.model_server.script import Refuse, RunShell, Say, Turn, Usage, WriteFile
from tests.model_server.server import ModelServer

EXAMPLES = Path(__file__).parents[2] / "manifests" / "examples" / "agents"
OUTPUT = "/workspace/artifacts/output"
INPUT = "/workspace/artifacts/input"
FINISH_SECONDS = 180

# A phase's spec and the API key of its script.
Phase = tuple[dict[str, Any], str]


@pytest.fixture(scope="module")
def model_server(local_cluster: object) -> Iterator[ModelServer]:
    # Where pods reach the host: the node network's host address.
    with ModelServer(HOST_ADDRESS).running() as server:
        yield server


@pytest.fixture(scope="module", autouse=True)
def agent_cli_images(local_cluster: object) -> None:
    load_images(AGENT_CLI_IMAGES)


def phase(cli: Cli, server: ModelServer, name: str, turns: list[Turn]) -> Phase:
    """A phase run by `cli` whose model answers with `turns`, under an API key of its own."""
    key = f"key-{uuid.uuid4().hex}"
    server.script(key, turns)
    spec = {
        "name": name,
        "image": cli.image,
        "prompt": f"Phase {name}: do the task.",
        "transcriptFormat": cli.name,
        "env": cli.env(server.url, key),
        "timeoutSeconds": FINISH_SECONDS,
    }
    return spec, key


def for_each_cli(
    kubectl: Kubectl,
    namespace: str,
    name: str,
    phases: Callable[[Cli], list[dict[str, Any]]],
    *,
    server: ModelServer,
    **spec: Any,
) -> dict[str, Any]:
    """An Execution `<name>-<cli>` of `phases(cli)` (and the rest of `spec`) for every CLI,
    applied together; once all have finished, their statuses by CLI. One that does not
    finish in time fails with what the model server could not answer and the pods' states."""
    for cli in CLIS:
        manifest = {
            "apiVersion": "agentjobs.io/v1alpha1",
            "kind": "Execution",
            "metadata": {"name": f"{name}-{cli.name}"},
            "spec": {"phases": phases(cli), **spec},
        }
        kubectl.apply(manifest, namespace)
    statuses = {}
    for cli in CLIS:
        execution = f"{name}-{cli.name}"
        try:
            statuses[cli.name] = wait_finished(
                kubectl, namespace, execution, timeout=FINISH_SECONDS
            )
        except AssertionError as error:
            pods = kubectl.run("get", "pods", "-n", namespace, "-o", "wide", check=False).stdout
            raise AssertionError(
                f"{error}\nunanswered model requests: {server.unexpected()}\npods:\n{pods}"
            ) from error
    return statuses


def test_success_with_a_file_written_by_the_clis_own_tool_and_the_usage_sent(
    kubectl: Kubectl, namespace: str, operator: OperatorProcess, model_server: ModelServer
) -> None:
    turns: list[Turn] = [
        WriteFile(f"{OUTPUT}/notes.md", "# Notes\n\nThe parser drops the last token.\n",
                  Usage(input_tokens=120, output_tokens=30, cached_tokens=40)),
        Say(("The notes are written.\n", report(True, "notes.md written")),
            Usage(input_tokens=80, output_tokens=20, cached_tokens=10)),
    ]  # fmt: skip
    phases = {cli.name: phase(cli, model_server, "write", turns) for cli in CLIS}
    statuses = for_each_cli(
        kubectl, namespace, "write", lambda cli: [phases[cli.name][0]], server=model_server
    )
    # Cache reads are counted apart from inputTokens, whatever each vendor's API counts.
    sent = {"inputTokens": 200, "outputTokens": 50, "cacheReadInputTokens": 50}
    for cli in CLIS:
        status = statuses[cli.name]
        assert status["status"] == "completed", (cli.name, status)
        outcome = status["taskOutcome"]
        assert (outcome["source"], outcome["status"]) == ("agent", "success"), cli.name
        record = phase_status(kubectl, namespace, f"write-{cli.name}-0-write")
        assert record["report"]["state"] == "success", cli.name
        assert (record["exitCode"], record["streamIntact"]) == (0, True), cli.name
        [artifact] = record["artifacts"]
        assert (artifact["path"], artifact["recovered"]) == ("notes.md", False), cli.name
        assert {name: record["usage"].get(name) for name in sent} == sent, cli.name
        assert {name: status["usage"].get(name) for name in sent} == sent, cli.name
        requests = model_server.requests(phases[cli.name][1])
        assert [(r.turn, r.unexpected) for r in requests] == [(True, None)] * 2, cli.name


def test_a_failure_report(
    kubectl: Kubectl, namespace: str, operator: OperatorProcess, model_server: ModelServer
) -> None:
    text = report(False, "the fixture repository is missing", failure_reason="environment")
    turns: list[Turn] = [Say(("I could not do it.\n", text))]
    statuses = for_each_cli(
        kubectl,
        namespace,
        "fail",
        lambda cli: [phase(cli, model_server, "fail", turns)[0]],
        server=model_server,
    )
    for cli in CLIS:
        assert statuses[cli.name]["status"] == "failed", cli.name
        assert statuses[cli.name]["taskOutcome"]["source"] == "agent", cli.name
        record = phase_status(kubectl, namespace, f"fail-{cli.name}-0-fail")
        assert (record["report"]["state"], record["report"]["comments"]) == (
            "failure",
            "the fixture repository is missing",
        ), cli.name


def test_a_report_split_across_the_streams_deltas(
    kubectl: Kubectl, namespace: str, operator: OperatorProcess, model_server: ModelServer
) -> None:
    text = report(True, "split")
    # A last message with substance: with no file written, it is the deliverable (R30).
    words = "The parser now keeps the last token of every line it reads.\n"
    pieces = (words + "TASK_RE", text[len("TASK_RE"):30], text[30:-10], text[-10:])  # fmt: skip
    turns: list[Turn] = [Say(pieces)]
    statuses = for_each_cli(
        kubectl,
        namespace,
        "split",
        lambda cli: [phase(cli, model_server, "split", turns)[0]],
        server=model_server,
    )
    for cli in CLIS:
        assert statuses[cli.name]["status"] == "completed", (
            cli.name,
            json.dumps(statuses[cli.name]),
        )
        record = phase_status(kubectl, namespace, f"split-{cli.name}-0-split")
        assert (record["report"]["state"], record["report"]["comments"]) == (
            "success",
            "split",
        ), cli.name


def test_a_report_only_in_a_tools_output_is_not_the_agents(
    kubectl: Kubectl, namespace: str, operator: OperatorProcess, model_server: ModelServer
) -> None:
    printed = report(True, "printed by a command").replace('"', '\\"').replace("\n", "\\n")
    turns: list[Turn] = [RunShell(f'printf "{printed}\\n"'), Say(("I ran the command.",))]
    statuses = for_each_cli(
        kubectl,
        namespace,
        "tool",
        lambda cli: [phase(cli, model_server, "tool", turns)[0]],
        server=model_server,
    )
    for cli in CLIS:
        record = phase_status(kubectl, namespace, f"tool-{cli.name}-0-tool")
        assert record["report"]["state"] == "not_reported", cli.name
        assert statuses[cli.name]["status"] != "completed", cli.name


@pytest.mark.parametrize(
    ("http_status", "kind"), [(401, "auth"), (429, "rate_limit"), (404, "config")]
)
def test_an_api_error_blocks_the_phase_with_its_kind(
    kubectl: Kubectl,
    namespace: str,
    operator: OperatorProcess,
    model_server: ModelServer,
    http_status: int,
    kind: str,
) -> None:
    phases = {cli.name: phase(cli, model_server, "call", [Refuse(http_status)]) for cli in CLIS}
    statuses = for_each_cli(
        kubectl, namespace, "refused", lambda cli: [phases[cli.name][0]], server=model_server
    )
    for cli in CLIS:
        status = statuses[cli.name]
        assert (status["status"], status["failureClassification"]) == ("failed", "platform"), (
            cli.name,
            status,
        )
        outcome = status["taskOutcome"]
        assert (outcome["status"], outcome["source"]) == ("blocked", "system"), cli.name
        assert outcome["blockers"][0]["type"] == kind, (cli.name, outcome)
        record = phase_status(kubectl, namespace, f"refused-{cli.name}-0-call")
        assert record["run"]["agentCliError"]["kind"] == kind, cli.name
        assert model_server.requests(phases[cli.name][1]), f"{cli.name} never called the model"


def test_the_second_phases_cli_reads_the_first_phases_artifact(
    kubectl: Kubectl, namespace: str, operator: OperatorProcess, model_server: ModelServer
) -> None:
    finding = "The tokenizer drops the last token of every line."
    first: list[Turn] = [
        WriteFile(f"{OUTPUT}/finding.md", f"{finding}\n"),
        Say((report(True, "finding.md written"),)),
    ]
    second: list[Turn] = [
        RunShell(f"cat {INPUT}/finding.md"),
        WriteFile(f"{OUTPUT}/fix.md", "The tokenizer keeps the last token now.\n"),
        Say((report(True, "fix.md written"),)),
    ]
    phases = {
        cli.name: (phase(cli, model_server, "find", first), phase(cli, model_server, "fix", second))
        for cli in CLIS
    }
    statuses = for_each_cli(
        kubectl,
        namespace,
        "handoff",
        lambda cli: [spec for spec, _ in phases[cli.name]],
        server=model_server,
    )
    for cli in CLIS:
        assert statuses[cli.name]["status"] == "completed", (
            cli.name,
            json.dumps(statuses[cli.name]),
        )
        # The shell tool's output goes back to the model in the request after the call.
        after_call = [r for r in model_server.requests(phases[cli.name][1][1]) if r.turn][1]
        assert finding in json.dumps(after_call.request.body), cli.name


def grade(result: str, met: bool, feedback: str | None = None) -> str:
    criterion: dict[str, Any] = {"name": "Breaking changes", "met": met}
    if feedback is not None:
        criterion["feedback"] = feedback
    body = {"result": result, "explanation": f"The notes are {result}.", "criteria": [criterion]}
    return f"GRADE_RESULT: {json.dumps(body)}\nGRADE_RESULT_END"


def test_a_real_cli_grades_and_the_agent_revises_with_its_feedback(
    kubectl: Kubectl, namespace: str, operator: OperatorProcess, model_server: ModelServer
) -> None:
    feedback = "Add a section named Breaking changes."
    agent: list[Turn] = [
        WriteFile(f"{OUTPUT}/notes.md", "# Notes\n\n- faster parser\n"),
        Say((report(True, "first draft"),)),
        WriteFile(f"{OUTPUT}/notes.md", "# Notes\n\n- faster parser\n\n## Breaking changes\n"),
        Say((report(True, "revised"),)),
    ]
    grader: list[Turn] = [
        Say(("Checked.\n", grade("needs_revision", False, feedback))),
        Say(("Checked again.\n", grade("satisfied", True))),
    ]
    phases = {cli.name: phase(cli, model_server, "notes", agent) for cli in CLIS}
    graders = {cli.name: phase(cli, model_server, "grader", grader) for cli in CLIS}

    def graded(cli: Cli) -> list[dict[str, Any]]:
        spec = dict(phases[cli.name][0])
        grader_spec = graders[cli.name][0]
        spec["outcome"] = {
            "description": "Release notes, ready to publish.",
            "rubric": "- the notes have a `Breaking changes` section\n",
            "maxIterations": 2,
            "grader": {key: grader_spec[key] for key in ("image", "transcriptFormat", "env")},
        }
        return [spec]

    statuses = for_each_cli(kubectl, namespace, "graded", graded, server=model_server)
    for cli in CLIS:
        status = statuses[cli.name]
        assert (status["status"], status["outcome"]) == ("completed", "satisfied"), (
            cli.name,
            status,
        )
        record = phase_status(kubectl, namespace, f"graded-{cli.name}-0-notes")
        results = [e["result"] for e in record["outcome"]["evaluations"]]
        assert results == ["needs_revision", "satisfied"], cli.name
        # The grader is given the description and the rubric's instruction, not the agent's
        # prompt; the agent's revision is given the grader's feedback.
        asked = [json.dumps(r.request.body) for r in model_server.requests(graders[cli.name][1])]
        assert all("Release notes, ready to publish." in body for body in asked), cli.name
        assert not any("Phase notes: do the task." in body for body in asked), cli.name
        turns = [r for r in model_server.requests(phases[cli.name][1]) if r.turn]
        assert feedback not in json.dumps(turns[0].request.body), cli.name
        assert feedback in json.dumps(turns[2].request.body), cli.name


def test_each_cli_commits_with_its_shell_tool_and_the_operator_pushes_its_work(
    kubectl: Kubectl,
    namespace: str,
    git_operator: OperatorProcess,
    model_server: ModelServer,
    example_repository: GitServer,
) -> None:
    example_secret(kubectl, namespace)
    commit = (
        "cd /workspace/service && printf 'replicas: 2\\n' > deploy/replicas.yaml && "
        "git add -A && git -c user.name=Agent -c user.email=agent@example.test "
        'commit -q -m "Set replicas"'
    )
    # Its deliverable is the commit, told in its last message (R31 recovers it, R33 wants it).
    told = "I set the replicas to two in deploy/replicas.yaml and committed that change.\n"
    turns: list[Turn] = [RunShell(commit), Say((told, report(True, "replicas set")))]
    repositories = [
        {"name": "service", "url": example_repository.url("example-service"),
         "credentialsSecret": {"name": "example-service-git"}, "push": {}}
    ]  # fmt: skip
    statuses = for_each_cli(
        kubectl, namespace, "commit",
        lambda cli: [phase(cli, model_server, "fix", turns)[0]], repositories=repositories,
        server=model_server,
    )  # fmt: skip
    for cli in CLIS:
        assert statuses[cli.name]["status"] == "completed", (
            cli.name,
            statuses[cli.name]["taskOutcome"]["summary"],
        )
        [entry] = phase_status(kubectl, namespace, f"commit-{cli.name}-0-fix")["repositories"]
        assert (entry["commits"], entry["pushed"]) == (1, True), (cli.name, entry)
        branch = f"agentjobs/commit-{cli.name}"
        assert example_repository.commits("example-service", branch)[0] == "Set replicas"
        assert example_repository.changed_paths("example-service", branch) >= {
            "deploy/replicas.yaml"
        }


EXAMPLE_REPOSITORY = "https://github.com/agentjobs/example-service.git"
EXAMPLE_TOKEN = Token("example-token-0123456789")


def example_secret(kubectl: Kubectl, namespace: str) -> None:
    kubectl.run(
        "create", "secret", "generic", "example-service-git", "-n", namespace,
        f"--from-literal=token={EXAMPLE_TOKEN.value}",
    )  # fmt: skip


@pytest.fixture
def example_repository(tmp_path: Path) -> Iterator[GitServer]:
    """The examples' repository, on the real git server where the pods reach it."""
    with GitServer(tmp_path / "git", tokens=[EXAMPLE_TOKEN], host=HOST_ADDRESS) as server:
        server.create("example-service", {"deploy/app.yaml": "kind: Deployment\n"})
        yield server


def test_each_clis_example_completes_as_written(
    kubectl: Kubectl,
    namespace: str,
    git_operator: OperatorProcess,
    model_server: ModelServer,
    example_repository: GitServer,
) -> None:
    names = {}
    repository = example_repository.url("example-service")
    example_secret(kubectl, namespace)
    for cli in CLIS:
        key = f"key-{uuid.uuid4().hex}"
        model_server.script(key, [
            WriteFile(f"{OUTPUT}/checklist.md", "# Checklist\n\n- resource limits set\n"),
            Say(("The checklist is written.\n", report(True, "checklist.md written"))),
        ])  # fmt: skip
        kubectl.run(
            "create", "secret", "generic", cli.secret, f"--from-literal=apiKey={key}",
            "-n", namespace,
        )  # fmt: skip
        text = (EXAMPLES / f"{cli.name}.yaml").read_text()
        assert text.count(cli.api) == 1 and text.count(EXAMPLE_REPOSITORY) == 1, cli.name
        text = text.replace(EXAMPLE_REPOSITORY, repository)
        manifest = yaml.safe_load(text.replace(cli.api, model_server.url))
        kubectl.apply(manifest, namespace)
        names[cli.name] = manifest["metadata"]["name"]
    for cli in CLIS:
        name = names[cli.name]
        status = wait_finished(kubectl, namespace, name, timeout=FINISH_SECONDS)
        assert status["status"] == "completed", (cli.name, status)
        checklist = phase_status(kubectl, namespace, f"{name}-0-checklist")
        [artifact] = checklist["artifacts"]
        assert artifact["path"] == "checklist.md", cli.name
        [entry] = checklist["repositories"]  # checked out on its branch, nothing to push
        assert (entry["branch"], entry["commits"], entry.get("pushed")) == (
            f"agentjobs/{name}", 0, None
        ), cli.name  # fmt: skip
