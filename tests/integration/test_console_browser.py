"""The console in real headless Chromium against the local cluster and the operator (R72).

Cases: the Executions page lists a running and a finished Execution and turns the running
one finished without a reload; the page of a three-phase run whose middle phase is revised
after its grader's feedback shows each attempt and evaluation, with the grader's criteria;
the conversations of a Claude Code-, a Codex- and a Gemini CLI-shaped phase show their
turns and tools and mark the report, live while the agent runs (from the pod's log) and
after the pods are deleted (from storage); an artifact downloads byte for byte and a
Markdown one renders; HTML and script an agent wrote in its words, tools, report and
artifact names and contents are shown as text, and none of it runs.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from devcluster.testing import Kubectl
from tests import builders
from tests.integration.browser import screenshot
from tests.integration.console_fixtures import console
from tests.integration.images import BUSYBOX
from tests.integration.operator_fixtures import (
    OperatorProcess,
    phase_status,
    wait_finished,
    wait_for,
)
from tests.integration.test_outcomes import AGENT, GRADER, RUBRIC

OUTPUT = '"$AGENTJOBS_OUTPUT_DIR"'  # a phase that leaves no file and few words fails (R32)
GO = "/workspace/go"  # the agents wait for it half-way, so a test can watch them live
HOSTILE = '<script>window.pwned=1</script><img src=x onerror="window.pwned=2">'


@pytest.fixture
def console_url(s3_env: dict[str, str], tmp_path: Path) -> Iterator[str]:
    """The console with the admin's kubeconfig, as a user runs it on their machine."""
    with console(s3_env, tmp_path / "console.log") as url:
        yield url


def slowly(lines: list[str], *, wait_at: int | None = None) -> str:
    """A script printing ``lines`` a third of a second apart, waiting for ``GO`` before
    line ``wait_at``."""
    script = [f"echo work > {OUTPUT}/notes.md"]
    for number, line in enumerate(lines):
        if number == wait_at:
            script.append(f"while [ ! -f {GO} ]; do sleep 0.2; done")
        script.append(f"printf '%s\\n' {shell_quoted(line)}; sleep 0.3")
    return "\n".join(script)


def done(report: dict[str, Any]) -> str:
    """A script that leaves a file and reports."""
    return f"echo work > {OUTPUT}/notes.md; " + builders.echo_block(report)


def shell_quoted(text: str) -> str:
    return "'" + text.replace("'", "'\"'\"'") + "'"


def event(**fields: Any) -> str:
    return json.dumps(fields)


REPORT = builders.block(builders.report(comments="all done"))


def claude_lines(words: str = "I fixed the parser.") -> list[str]:
    def message(mid: str, *content: dict[str, Any]) -> str:
        return event(
            type="assistant", message={"id": mid, "role": "assistant", "content": list(content)}
        )

    return [
        event(type="system", subtype="init", model="claude-test", cwd="/workspace"),
        message("m1", {"type": "text", "text": "Let me look at the parser."},
                {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls src"}}),
        event(type="user", message={"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": "parser.py\n"}]}),
        message("m2", {"type": "text", "text": f"{words}\n\n{REPORT}"}),
        event(type="result", subtype="success", is_error=False, result=words),
    ]  # fmt: skip


def codex_lines() -> list[str]:
    def item(kind: str, **fields: Any) -> str:
        return event(type=kind, item=fields)

    return [
        event(type="thread.started", thread_id="th"),
        event(type="turn.started"),
        item("item.started", id="c1", type="command_execution", command="pytest -q"),
        item("item.completed", id="c1", type="command_execution", command="pytest -q",
             aggregated_output="3 passed\n", exit_code=0),
        item("item.completed", id="a1", type="agent_message", text=f"Tests pass.\n{REPORT}"),
        event(type="turn.completed", usage={"input_tokens": 10, "output_tokens": 5}),
    ]  # fmt: skip


def gemini_lines() -> list[str]:
    return [
        event(type="init", model="gemini-test"),
        event(type="tool_use", tool_name="read_file", tool_id="r1", parameters={"path": "a.py"}),
        event(type="tool_result", tool_id="r1", status="success", output="print(1)"),
        event(type="message", role="assistant", content="The file ", delta=True),
        event(type="message", role="assistant", content=f"prints one.\n{REPORT}", delta=True),
        event(type="result", status="success", stats={"input_tokens": 3}),
    ]


def cli_phase(name: str, transcript_format: str, lines: list[str], **extra: Any) -> dict[str, Any]:
    return {
        "name": name,
        "image": BUSYBOX,
        "prompt": "Work.",
        "transcriptFormat": transcript_format,
        "command": ["sh", "-c", slowly(lines, **extra)],
    }


def let_go(kubectl: Kubectl, namespace: str, pod: str) -> None:
    """Let an agent waiting for ``GO`` go on, once its container runs."""
    wait_for(
        lambda: (
            kubectl.run("exec", "-n", namespace, pod, "-c", "agent", "--", "touch", GO).returncode
            == 0
        ),
        what="the agent to take the go",
    )


def row(page: Page, namespace: str, name: str) -> Any:
    return page.locator(f'tr[data-key="{namespace}/{name}"]')


def test_the_executions_page_lists_running_and_finished_and_updates_live(
    kubectl: Kubectl, namespace: str, operator: OperatorProcess, console_url: str, page: Page
) -> None:
    kubectl.apply(builders.shell_execution("quick", done(builders.report())), namespace)
    slow = cli_phase("wait", "claude-code", claude_lines(), wait_at=1)
    kubectl.apply(builders.execution("slow", [slow]), namespace)
    quick = wait_finished(kubectl, namespace, "quick")
    assert quick["status"] == "completed", json.dumps(quick)
    wait_for(lambda: phase_status(kubectl, namespace, "slow-0-wait").get("podName"), what="its pod")

    page.goto(f"{console_url}/executions?namespace={namespace}")
    expect(row(page, namespace, "quick").locator(".badge")).to_have_text("completed")
    expect(row(page, namespace, "slow").locator(".badge")).to_have_text("running")
    expect(page.locator("#live-state")).to_have_text("Live")
    screenshot(page, "executions")
    page.evaluate("window.notReloaded = true")
    pod = phase_status(kubectl, namespace, "slow-0-wait")["podName"]
    let_go(kubectl, namespace, pod)
    expect(row(page, namespace, "slow").locator(".badge")).to_have_text("completed", timeout=60_000)
    assert page.evaluate("window.notReloaded") is True


def test_a_revised_three_phase_run_shows_each_attempt_and_evaluation(
    kubectl: Kubectl, namespace: str, operator: OperatorProcess, console_url: str, page: Page
) -> None:
    write = {
        "name": "write", "image": BUSYBOX, "command": ["sh", "-c"], "args": [AGENT],
        "prompt": "Write the report.",
        "outcome": {
            "description": "A fixed report", "rubric": RUBRIC, "maxIterations": 3,
            "grader": {"command": ["sh", "-c"], "args": [GRADER.replace("SLOW", "1")]},
        },
    }  # fmt: skip
    phases = [
        {"name": "plan", "image": BUSYBOX, "prompt": "Plan.", "command": ["sh", "-c",
         done(builders.report(comments="planned"))]},
        write,
        {"name": "review", "image": BUSYBOX, "prompt": "Review.", "command": ["sh", "-c",
         done(builders.report(comments="reviewed"))]},
    ]  # fmt: skip
    kubectl.apply(builders.execution("loop", phases), namespace)
    assert wait_finished(kubectl, namespace, "loop", timeout=240)["status"] == "completed"

    page.goto(f"{console_url}/executions/{namespace}/loop")
    expect(page.locator("ol.timeline > li.phase")).to_have_count(3)
    writing = page.locator("#phase-write")
    expect(writing.locator("tr.attempt")).to_have_count(2)
    evaluations = writing.locator("li.evaluation")
    expect(evaluations).to_have_count(2)
    expect(evaluations.nth(0)).to_contain_text("needs_revision")
    expect(evaluations.nth(0)).to_contain_text("not met fixed: write FIXED")
    expect(evaluations.nth(1)).to_contain_text("satisfied")
    expect(page.locator("ul.verdict")).to_contain_text("The Execution is completed.")
    screenshot(page, "execution")


def test_conversations_show_turns_and_the_report_live_and_after_the_pods_are_gone(
    kubectl: Kubectl, namespace: str, operator: OperatorProcess, console_url: str, page: Page
) -> None:
    # Each agent stops before the line with its report until the test lets it go.
    phases = [
        cli_phase("claude", "claude-code", claude_lines(), wait_at=3),
        cli_phase("codex", "codex", codex_lines(), wait_at=4),
        cli_phase("gemini", "gemini-cli", gemini_lines(), wait_at=4),
    ]
    kubectl.apply(builders.execution("talk", phases, defaults={"keepPods": True}), namespace)
    expected = {
        "claude": ("Bash", "I fixed the parser."),
        "codex": ("shell", "Tests pass."),
        "gemini": ("read_file", "The file prints one."),
    }
    for index, (phase, (tool, _)) in enumerate(expected.items()):
        resource = f"talk-{index}-{phase}"
        wait_for(
            lambda resource=resource: phase_status(kubectl, namespace, resource).get("podName"),
            timeout=60,
            what=f"{phase}'s pod",
        )
        pod = phase_status(kubectl, namespace, resource)["podName"]
        page.goto(f"{console_url}/executions/{namespace}/talk/phases/{phase}/attempts/1")
        live = page.locator("#conversation")
        expect(live.locator(".entry-tool summary").first).to_contain_text(tool, timeout=30_000)
        expect(live.locator(".report-block")).to_have_count(0)
        page.evaluate("window.notReloaded = true")
        let_go(kubectl, namespace, pod)
        expect(live.locator(".report-block.report-success")).to_have_count(1, timeout=30_000)
        expect(live.locator(".entry-end")).to_contain_text("Run ended")
        assert page.evaluate("window.notReloaded") is True

    assert wait_finished(kubectl, namespace, "talk", timeout=120)["status"] == "completed"
    kubectl.run("delete", "pods", "-n", namespace, "--all", "--wait=true", "--timeout=60s")
    for phase, (tool, words) in expected.items():
        page.goto(f"{console_url}/executions/{namespace}/talk/phases/{phase}/attempts/1")
        stored = page.locator("#conversation")
        expect(stored.locator(".entry-tool summary").first).to_contain_text(tool)
        expect(stored.locator(".entry-words").last).to_contain_text(words)
        expect(stored.locator(".report-block.report-success")).to_have_count(1)
        expect(page.locator("h1")).to_contain_text("completed")
        if phase == "claude":
            stored.locator(".entry-tool summary").first.click()
            expect(stored.locator(".entry-tool pre").last).to_have_text("parser.py\n")
            screenshot(page, "conversation")


def test_an_artifact_downloads_byte_for_byte_and_markdown_renders(
    kubectl: Kubectl, namespace: str, operator: OperatorProcess, console_url: str, page: Page
) -> None:
    script = (
        r"printf '\000\001\377 binary\n' > $AGENTJOBS_OUTPUT_DIR/data.bin; "
        r"printf '# Findings\n\n- **one**\n' > $AGENTJOBS_OUTPUT_DIR/report.md; "
        + builders.echo_block(builders.report())
    )
    kubectl.apply(builders.shell_execution("made", script), namespace)
    assert wait_finished(kubectl, namespace, "made")["status"] == "completed"

    page.goto(f"{console_url}/executions/{namespace}/made")
    with page.expect_download() as download:
        page.locator("table.artifacts tr", has_text="data.bin").get_by_text("download").click()
    assert Path(download.value.path()).read_bytes() == b"\x00\x01\xff binary\n"
    page.locator("table.artifacts tr", has_text="report.md").get_by_text("view").click()
    expect(page.locator(".markdown h1")).to_have_text("Findings")
    expect(page.locator(".markdown strong")).to_have_text("one")


def test_html_and_script_an_agent_wrote_are_shown_as_text_and_never_run(
    kubectl: Kubectl, namespace: str, operator: OperatorProcess, console_url: str, page: Page
) -> None:
    report = builders.block(builders.report(success=False, failure_reason="task", comments=HOSTILE))
    lines = [
        event(type="assistant", message={"id": "m1", "role": "assistant", "content": [
            {"type": "text", "text": f"{HOSTILE}\n[click](javascript:window.pwned=3)"},
            {"type": "tool_use", "id": "t1", "name": HOSTILE, "input": {"html": HOSTILE}}]}),
        event(type="user", message={"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": HOSTILE}]}),
        event(type="assistant", message={"id": "m2", "role": "assistant", "content": [
            {"type": "text", "text": report}]}),
        event(type="result", subtype="success", is_error=False, result=HOSTILE),
    ]  # fmt: skip
    artifact = "$AGENTJOBS_OUTPUT_DIR/'evil<img src=x onerror=window.pwned=4>.md'"
    script = (
        f"printf '%s\\n' {shell_quoted('# Hi <script>window.pwned=5</script>')} > {artifact}; "
        + slowly(lines)
    )
    phase = {
        "name": "evil", "image": BUSYBOX, "prompt": "Be evil.",
        "transcriptFormat": "claude-code", "command": ["sh", "-c", script],
    }  # fmt: skip
    kubectl.apply(builders.execution("evil", [phase]), namespace)
    wait_finished(kubectl, namespace, "evil", timeout=90)

    base = f"{console_url}/executions/{namespace}/evil"
    for address in (
        f"{console_url}/executions?namespace={namespace}",
        base,
        f"{base}/phases/evil/attempts/1",
    ):
        page.goto(address)
        for details in page.locator("details").all():
            details.locator("summary").click()
        assert page.evaluate("typeof window.pwned") == "undefined", address
    expect(page.locator("#conversation")).to_contain_text("<script>window.pwned=1</script>")
    expect(page.locator("#conversation a", has_text="click")).to_have_count(0)
    page.goto(base)
    expect(page.locator("table.artifacts")).to_contain_text(
        "evil<img src=x onerror=window.pwned=4>.md"
    )
    page.locator("table.artifacts tr", has_text="evil<img").get_by_text("view").click()
    expect(page.locator(".markdown")).to_contain_text("<script>window.pwned=5</script>")
    assert page.evaluate("typeof window.pwned") == "undefined"
