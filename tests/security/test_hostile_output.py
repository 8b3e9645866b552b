"""Agent output that made runners crash and retry for ever, and controls meant for terminals.

The tenant runs one Execution per case; each phase's agent (a shell in the
`busybox` image) prints one hostile transcript and writes a file of output.
Cases: a report whose comments hold a lone surrogate, ESC/OSC sequences, BEL,
NUL and bidi overrides (text); a Claude Code error cut inside a surrogate at
1 KiB; a `jsonl` event whose `type` is a list, then one whose `type` is an
object; usage and cost beyond int64 and float (Claude Code). Each phase ends
with its verdict written, each log was read once (the operator's
`agentjobs_log_bytes_read_total` equals the sum of the transcripts' sizes: a
runner that crashed and read again from byte 0 would add a transcript
again), the operator logged no unexpected error, and no Phase,
Execution or Event of the namespace holds a terminal control or a bidi
override.
"""

from __future__ import annotations

import json
import re
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families

from devcluster.testing import Kubectl
from tests.integration.images import BUSYBOX
from tests.integration.operator_fixtures import (
    OperatorProcess,
    free_port,
    wait_finished,
)
from tests.security.conftest import Tenant

pytestmark = pytest.mark.integration

PHASE = "hostile"
HOSTILE = r"a\u001b]0;pwned\u0007b\u001b[2Jc\u0000d\u202ee\u2066f\u200fg\u0085h"
SUBSTANCE = "I wrote the notes file and checked every line of it against the brief."
CASES: dict[str, tuple[str, str]] = {
    "surrogate-comments": (
        "text",
        f"{SUBSTANCE}\n"
        f'TASK_RESULT: {{"success": true, "side_effects": "none", '
        f'"comments": "half an emoji \\ud83d and {HOSTILE}"}}\n'
        "TASK_RESULT_END\n",
    ),
    "surrogate-cli-error": (
        "claude-code",
        '{"type":"system","subtype":"init"}\n'
        f'{{"type":"result","is_error":true,"result":"{"e" * 1023}\\ud83dtail {HOSTILE}"}}\n',
    ),
    "list-type": (
        "jsonl",
        '{"type":["assistant"],"message":{"content":[]}}\n'
        '{"type":{"a":1}}\n'
        '{"type":"message","role":"assistant","content":'
        f'"{SUBSTANCE}\\nTASK_RESULT: {{\\"success\\": true}}\\nTASK_RESULT_END"}}\n'
        '{"type":"result","result":"done"}\n',
    ),
    "huge-usage": (
        "claude-code",
        '{"type":"assistant","message":{"id":"m1","content":[{"type":"text","text":'
        f'"{SUBSTANCE}\\nTASK_RESULT: {{\\"success\\": true}}\\nTASK_RESULT_END"}}]}}}}\n'
        '{"type":"result","subtype":"success","result":"done","total_cost_usd":1e999,'
        f'"usage":{{"input_tokens":{10**30},"output_tokens":{2**64}}}}}\n',
    ),
}
# Nothing that moves a terminal's cursor, retitles, rings it or reorders its text; JSON as
# kubectl prints it escapes C0 controls, so those are looked for escaped too.
UNSAFE = re.compile(
    r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]"
    r"|\\u00[01][0-9a-fA-F]|\\u007[fF]|\\u00[89][0-9a-fA-F]|\\u(?:061c|200[ef]|202[a-e]|206[6-9])"
    r"|\\ud[89a-f][0-9a-f]{2}|\\r",
    re.IGNORECASE,
)


def execution(name: str, transcript_format: str, transcript: str) -> dict[str, Any]:
    script = (
        'echo "notes" > "$AGENTJOBS_OUTPUT_DIR/notes.md"\n'
        f"cat <<'TRANSCRIPT'\n{transcript}TRANSCRIPT\n"
    )
    return {
        "apiVersion": "agentjobs.io/v1alpha1",
        "kind": "Execution",
        "metadata": {"name": name},
        "spec": {
            "phases": [
                {
                    "name": PHASE,
                    "image": BUSYBOX,
                    "prompt": "Print your transcript.",
                    "command": ["sh", "-c"],
                    "args": [script],
                    "transcriptFormat": transcript_format,
                }
            ]
        },
    }


def log_bytes_read(port: int) -> float:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as response:
        text = response.read().decode()
    return sum(
        sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
        if sample.name == "agentjobs_log_bytes_read_total"
    )


@pytest.fixture
def metered(
    s3_env: dict[str, str], crds: None, namespace: str, tmp_path: Path
) -> Iterator[tuple[OperatorProcess, int]]:
    port = free_port()
    process = OperatorProcess(
        s3_env,
        namespace,
        tmp_path / "operator.log",
        [f"--metrics-port={port}"],
    )
    process.start()
    yield process, port
    process.stop()
    print(process.log()[-20000:])  # shown by pytest when the test failed


def test_hostile_output_ends_each_phase_once_with_its_verdict_and_no_control(
    kubectl: Kubectl, tenant: Tenant, metered: tuple[OperatorProcess, int], s3_store: str
) -> None:
    operator, port = metered
    for name, (transcript_format, transcript) in CASES.items():
        tenant.kubectl.apply(execution(name, transcript_format, transcript), tenant.namespace)
    phases: dict[str, Any] = {}
    for name in CASES:
        wait_finished(tenant.kubectl, tenant.namespace, name, timeout=120)
        phase = tenant.kubectl.json("get", "-n", tenant.namespace, "phase", f"{name}-0-{PHASE}")
        phases[name] = phase["status"]

    ended = {name: (s["status"], s.get("failureClassification")) for name, s in phases.items()}
    assert ended == {
        "surrogate-comments": ("completed", None),
        "surrogate-cli-error": ("failed", "platform"),
        "list-type": ("completed", None),
        "huge-usage": ("completed", None),
    }
    comments = phases["surrogate-comments"]["report"]["comments"]
    assert comments == "half an emoji \ufffd and a]0;pwnedb[2Jcdefgh"
    cli_error = phases["surrogate-cli-error"]["run"]["agentCliError"]["message"]
    assert cli_error == "e" * 1023
    assert phases["huge-usage"]["usage"] == {
        "inputTokens": 2**63 - 1,
        "outputTokens": 2**63 - 1,
        "turns": 1,  # R69: its one assistant message
    }

    # Every transcript was read once: a second read of any would count its bytes again.
    transcripts = sum(status["run"]["transcriptBytes"] for status in phases.values())
    assert transcripts > 0
    assert log_bytes_read(port) == transcripts
    assert "unexpected error" not in operator.log()

    # What the operator wrote (the spec holds the transcripts as the agents' commands).
    items = kubectl.json("get", "executions,phases,events", "-n", tenant.namespace)["items"]
    written = [item.get("status") or item.get("message") for item in items]
    assert any(item["kind"] == "Event" for item in items)
    assert UNSAFE.findall(json.dumps(written)) == []
    assert UNSAFE.findall(json.dumps(written, ensure_ascii=False)) == []
