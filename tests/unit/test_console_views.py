"""What the console's pages are made of, from what the cluster holds (R72).

Cases: an Execution's row as ``kubectl get executions`` shows it, filters,
newest first; an Execution's page keeps only the Phases it owns by UID,
sorted, with a running attempt not yet recorded; a status the console
cannot read is named, not fatal; the verdict in words; the questions asked
of Kubernetes; a status URL outside the Execution's root is refused; every
value a tenant or agent wrote is escaped in every page, and their Markdown
keeps no raw HTML nor script link; an Execution's page shows every part of its
status (attempts and their reasons, evaluations and criteria, repositories,
limits, usage, notifications); a conversation page links its next page, and a
live one its stream.
"""

from __future__ import annotations

from typing import Any

import pytest

from agentjobs.console import permissions, render, rows, views
from agentjobs.contract.artifacts import object_layout
from agentjobs.contract.conversation.entries import Entry, Kind
from agentjobs.contract.conversation.pages import Page

HOSTILE = '<script>window.pwned=1</script><img src=x onerror="window.pwned=2">'


def execution(name: str = "demo", **status: Any) -> dict[str, Any]:
    return {
        "metadata": {
            "name": name,
            "namespace": "team-a",
            "uid": "uid-1",
            "creationTimestamp": "2026-12-05T01:00:00Z",
            "labels": {"team": "web"},
        },
        "spec": {"phases": []},
        "status": status,
    }


def phase(name: str, index: int, owner: str = "uid-1", **status: Any) -> dict[str, Any]:
    return {
        "metadata": {
            "name": f"demo-{index}-{name}",
            "ownerReferences": [{"uid": owner, "kind": "Execution", "controller": True}],
        },
        "spec": {"name": name, "index": index, "transcriptFormat": "claude-code"},
        "status": status,
    }


def test_a_row_has_kubectls_columns_and_cost() -> None:
    row = rows.row(
        execution(
            status="failed",
            currentPhase="fix",
            failureClassification="platform",
            deliverableProduced=False,
            usage={"costUsd": 0.0123},
            repositories=[{"name": "app", "branch": "agent/fix"}],
        )
    )
    assert (row.key, row.status, row.classification, row.branch, row.cost) == (
        "team-a/demo",
        "failed",
        "platform",
        "agent/fix",
        "0.0123",
    )
    assert row.deliverable is False and row.ended and row.labels == {"team": "web"}
    assert rows.row({"metadata": {"name": "new"}}).status == "" and not rows.row({}).ended


def test_filters_keep_status_and_classification_and_rows_sort_newest_first() -> None:
    old = rows.row(execution("old", status="running"))
    new = rows.row({**execution("new", status="failed", failureClassification="platform")})
    new = new._replace(created="2026-12-05T02:00:00Z")
    assert rows.Filters(status="failed").keeps(new) and not rows.Filters(status="failed").keeps(old)
    assert not rows.Filters(classification="unclassified").keeps(new)
    assert [r.name for r in rows.newest_first([old, new])] == ["new", "old"]


def test_an_executions_page_holds_only_the_phases_it_owns_in_order() -> None:
    attempts = [
        {"number": 1, "status": "failed", "podName": "p-a1", "finishedAt": "2026-12-05T01:00:00Z"}
    ]
    view = views.execution_view(
        execution(status="running"),
        [
            phase("review", 1, status="running", attempt=1, podName="p-a1"),
            phase("fix", 0, status="running", attempt=2, attempts=attempts, podName="p-a2"),
            phase("impostor", 2, owner="someone-else"),
        ],
    )
    assert [p.name for p in view.phases] == ["fix", "review"]
    assert [p.running_attempt for p in view.phases] == [2, 1]
    assert view.phases[0].attempts[0].number == 1


def test_a_status_the_console_cannot_read_is_named() -> None:
    view = views.phase_view(phase("fix", 0, attempts="not a list"))
    assert view.problem is not None and view.attempts == []


def test_the_verdict_in_words() -> None:
    status = views.execution_view(
        execution(
            status="failed",
            failureClassification="platform",
            deliverableProduced=False,
            taskOutcome={
                "status": "blocked",
                "source": "system",
                "summary": "The budget ran out.",
                "terminalReason": "BudgetExceeded",
                "reportedAt": "2026-12-05T01:00:00Z",
                "blockers": [
                    {"type": "budget", "message": "maxCostUsd 1 passed", "recoverable": True}
                ],
            },
        ),
        [],
    ).verdict
    assert status[0] == "The Execution is failed."
    assert "Task outcome: blocked, as the operator saw it." in status
    assert "Blocked by budget: maxCostUsd 1 passed (can be retried)." in status
    assert "A deliverable was not produced." in status
    assert views.verdict_in_words(views.execution_view(execution(), []).status) == [
        "The operator has not written a status yet."
    ]


def test_the_questions_asked_of_kubernetes() -> None:
    assert permissions.list_executions("").attributes == {
        "verb": "list",
        "group": "agentjobs.io",
        "resource": "executions",
        "namespace": "",
    }
    download = permissions.artifacts("a")[-1]
    assert download.attributes["subresource"] == "artifacts"
    assert str(download) == "get executions/artifacts in namespace a"
    log = permissions.conversation("a")[-1]
    assert (log.group, log.resource, log.subresource) == ("", "pods", "log")


@pytest.mark.parametrize(
    ("key", "belongs"),
    [
        ("namespaces/a/executions/demo/0-fix/attempt-1/transcript.log", True),
        ("prefix/namespaces/a/executions/demo/0-fix/attempt-1/output/r.md", True),
        ("namespaces/b/executions/demo/0-fix/attempt-1/transcript.log", False),
        ("namespaces/a/executions/other/0-fix/transcript.log", False),
        ("namespaces/a/executions/demo", False),
        ("namespaces/a/executions/demo/../../b/executions/x/t.log", False),
        ("x/namespaces/b/executions/y/namespaces/a/executions/demo/t.log", False),
    ],
)
def test_only_objects_under_the_executions_root_are_its_own(key: str, belongs: bool) -> None:
    assert object_layout.belongs_to(key, namespace="a", execution="demo") is belongs


def test_every_value_a_tenant_or_agent_wrote_is_escaped() -> None:
    hostile = execution(
        HOSTILE,
        status="running",
        currentPhase=HOSTILE,
        taskOutcome={
            "status": "failed",
            "source": "agent",
            "summary": HOSTILE,
            "terminalReason": "Completed",
            "reportedAt": "2026-12-05T01:00:00Z",
        },
    )
    row = rows.row(hostile)
    listing = render.page(
        "executions.html",
        rows=[row],
        filters=rows.Filters(label=HOSTILE),
        version="1",
        note=HOSTILE,
        statuses=[],
        classifications=[],
        query="",
    )
    view = views.execution_view(
        hostile,
        [
            phase(
                "fix",
                0,
                status="failed",
                artifacts=[{"path": HOSTILE, "title": HOSTILE, "size": 1, "url": "s3://b/k"}],
            )
        ],
    )
    assert view.problem is None and view.phases[0].problem is None
    page = render.page("execution.html", view=view)
    assert page.count("&lt;script&gt;window.pwned=1") >= 4  # name, phase, summary, artifact
    words = Entry(Kind.WORDS, 0, text=f"{HOSTILE}\n[link](javascript:alert(1))\n\n<b>bold</b>")
    tool = Entry(Kind.TOOL, 9, title=HOSTILE, input=HOSTILE, output=HOSTILE)
    conversation = render.fragment("macros.html", "entry", 0, words) + render.fragment(
        "macros.html", "entry", 1, tool
    )
    for html in (listing, page, conversation):
        assert "<script>window" not in html and "<img src=x" not in html
        assert "&lt;script&gt;window.pwned=1&lt;/script&gt;" in html
    assert "javascript:" not in conversation.replace("javascript:alert(1))", "")
    assert "<b>bold</b>" not in conversation


def test_an_agents_markdown_renders_as_markdown() -> None:
    html = str(render.markdown("# Report\n\n- **done**\n\n`code`"))
    assert (
        "<h1>Report</h1>" in html
        and "<strong>done</strong>" in html
        and "<code>code</code>" in html
    )


def test_an_execution_page_shows_every_part_of_its_status() -> None:
    finished = "2026-12-05T01:00:00Z"
    transcript = {
        "url": "s3://b/namespaces/team-a/executions/demo/0-fix/attempt-1/t.log",
        "sha256": "0" * 64,
        "size": 2048,
    }
    phase_status = {
        "status": "completed",
        "report": {"state": "success", "success": True, "comments": "fixed"},
        "usage": {"costUsd": 0.5, "inputTokens": 10, "turns": 3},
        "attempts": [
            {"number": 1, "status": "failed", "podName": "p-a1", "finishedAt": finished,
             "reason": "retried: transient", "transcript": transcript},
            {"number": 2, "status": "completed", "podName": "p-a2", "finishedAt": finished},
        ],
        "outcome": {"result": "satisfied", "evaluations": [
            {"iteration": 0, "result": "needs_revision", "explanation": "Not yet.",
             "criteria": [{"name": "tests", "met": False, "feedback": "add one"}],
             "graderPod": "g1"},
            {"iteration": 1, "result": "satisfied", "criteria": [{"name": "tests", "met": True}]},
        ]},
        "repositories": [{"name": "app", "url": "https://git/app", "branch": "agent/fix",
                          "commits": 2, "pushed": True}],
    }  # fmt: skip
    execution_status = {
        "status": "completed",
        "usage": {"costUsd": 0.75},
        "limits": [{"limit": "maxCostUsd", "allowed": "1", "used": "0.75"}],
        "notifications": [{"notify": 0, "target": "https://hooks/x", "event": "Finished",
                           "id": "e1",
                           "state": "Delivered", "attempts": 1}],
    }  # fmt: skip
    view = views.execution_view(execution(**execution_status), [phase("fix", 0, **phase_status)])
    assert view.problem is None and view.phases[0].problem is None
    html = render.page("execution.html", view=view)
    shown = ["retried: transient", "conversation (2.0 KiB)", "not met", "add one", "g1"]
    shown += ["agent/fix", "maxCostUsd", "$0.7500", "https://hooks/x", "Delivered", "Turns"]
    for text in shown:
        assert text in html, text
    assert html.count('class="evaluation"') == 2 and html.count('class="attempt"') == 2


def test_a_conversation_page_pages_on_and_a_live_one_follows_its_stream() -> None:
    view = views.execution_view(
        execution(status="running"), [phase("fix", 0, status="running", attempt=1, podName="p-a1")]
    )
    entries = [Entry(Kind.WORDS, 0, text="# Done"), Entry(Kind.END, 9, text="the run ended")]
    stored = render.page(
        "conversation.html", view=view, phase=view.phases[0], number=1, record=None,
        page=Page(entries, 100, 4096), entries=list(enumerate(entries)), live=False,
        request_path="/x",
    )  # fmt: skip
    assert '<a rel="next" href="?from=4096">' in stored and 'href="?from=0"' in stored
    assert "<h1>Done</h1>" in stored and "data-stream" not in stored
    live = render.page(
        "conversation.html", view=view, phase=view.phases[0], number=1, record=None,
        page=None, entries=[], live=True, request_path="/x",
    )  # fmt: skip
    assert 'data-stream="/x/events"' in live and "Next page" not in live
