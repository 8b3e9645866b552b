"""Repositories in the workspace on the real local cluster, against the real git server (R63-R65).

Cases:
- Two phases: phase 1 finds the repository checked out on agentjobs/<execution>, commits;
  phase 2 starts from that commit and adds one; the server's branch ends with both, each
  Phase's status.repositories gives its base, head, commit count and pushed, the Execution's
  the latest; the agent looked for the token in its environment, its files and /proc and
  found nothing, and no credentials directory is mounted in its container.
- Without push, phase 2 still starts from phase 1's commit (the bundle), and nothing reaches
  the server.
- A push to the protected branch: the phase completes, pushed false with the server's words,
  taskOutcome partial_success with a permission blocker that needs the user.
- A commit adding .github/workflows/ci.yml with a token lacking the grant: the branch is
  pushed without it, workflowChangesQuarantined true, and workflow-changes.patch is stored;
  with the grant, it is pushed as it is.
- A wrong token ends the phase blocked (auth) with git's words, a missing ref blocked
  (config), and the agent's container never starts.
- A failed phase's commit is pushed and its patch kept; a retried attempt starts from the
  failed attempt's commit, and the branch ends with both; a grader reads the graded
  attempt's changes as a diff.
"""

from __future__ import annotations

import json
import secrets
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from minio import Minio

from devcluster.git_server import GitServer, Token
from devcluster.layout import HOST_ADDRESS
from devcluster.testing import Kubectl
from tests.integration.images import PYTHON_GIT
from tests.integration.operator_fixtures import (
    OperatorProcess,
    phase_status,
    wait_finished,
)
from tests.integration.stored import stored_objects

MARK = "agentjobs-canary-token-"
PLAIN = Token(MARK + secrets.token_hex(8))
GRANTED = Token("granted-" + secrets.token_hex(8), workflow=True)
FINISH = """
echo 'TASK_RESULT: {"success": true, "side_effects": "none", "comments": "Committed."}'
echo TASK_RESULT_END
"""
# Looks for the token everywhere the agent can: its environment, every file it can read
# (the workspace and its .git included), every process's environment and command line.
SEARCH = r"""
set -e
MARK="$MARK_A$MARK_B"  # never whole in the environment the search reads
out=/workspace/artifacts/output/search.txt
found=0
env | grep -F "$MARK" >/dev/null && { echo "in the environment" >> $out; found=1; }
for f in $(grep -rlsF "$MARK" / --exclude-dir=proc --exclude-dir=sys --exclude-dir=dev); do
  echo "in $f" >> $out; found=1
done
for f in /proc/[0-9]*/environ /proc/[0-9]*/cmdline; do
  grep -aF "$MARK" "$f" >/dev/null 2>&1 && { echo "in $f" >> $out; found=1; }
done
[ -e /var/run/agentjobs/git ] && { echo "credentials mounted" >> $out; found=1; }
[ "$found" = 0 ] && echo "nothing found" > $out
"""
COMMIT = """
cd /workspace/service
git config user.name Agent && git config user.email agent@example.test
mkdir -p "$(dirname "$FILE")"; printf '%s\\n' "$WORK" > "$FILE"
git add -A && git commit -q -m "$WORK"
git log --format=%s > /workspace/artifacts/output/log.txt
git symbolic-ref --short HEAD > /workspace/artifacts/output/branch.txt
"""


@pytest.fixture
def git_server(tmp_path: Path) -> Iterator[GitServer]:
    with GitServer(
        tmp_path / "git", tokens=[PLAIN, GRANTED], host=HOST_ADDRESS, protected=["main"]
    ) as served:
        served.create("service", {"src/app.py": "print(1)\n"})
        yield served


def secret(kubectl: Kubectl, namespace: str, token: str) -> None:
    kubectl.run(
        "create", "secret", "generic", "git", "-n", namespace, f"--from-literal=token={token}"
    )


def phase(name: str, work: str, file: str = "src/app.py", search: bool = False) -> dict[str, Any]:
    script = (SEARCH if search else "set -e\n") + COMMIT + FINISH
    return {
        "name": name,
        "image": PYTHON_GIT,
        "prompt": f"Commit {work}.",
        "command": ["sh", "-c", script],
        "env": [
            {"name": "MARK_A", "value": MARK[:10]},
            {"name": "MARK_B", "value": MARK[10:]},
            {"name": "WORK", "value": work},
            {"name": "FILE", "value": file},
        ],
    }


def apply(
    kubectl: Kubectl,
    namespace: str,
    name: str,
    server: GitServer,
    phases: list[dict[str, Any]],
    **repository: Any,
) -> dict[str, Any]:
    body = {
        "apiVersion": "agentjobs.io/v1alpha1",
        "kind": "Execution",
        "metadata": {"name": name},
        "spec": {
            "repositories": [
                {"name": "service", "url": server.url("service"),
                 "credentialsSecret": {"name": "git"}, **repository}
            ],
            "phases": phases,
        },
    }  # fmt: skip
    kubectl.run("apply", "-n", namespace, "-f", "-", input=json.dumps(body))
    return wait_finished(kubectl, namespace, name, timeout=180)


def output(s3: Minio, namespace: str, execution: str, phase: str, path: str) -> str:
    root = f"namespaces/{namespace}/executions/{execution}/{phase}/attempt-1/output/{path}"
    return stored_objects(s3, root)[root].decode()


def served(server: GitServer, ref: str) -> str:
    return subprocess.run(
        ["git", "--git-dir", str(server.root / "service.git"), "rev-parse", "-q", "--verify", ref],
        capture_output=True, text=True, check=False,
    ).stdout.strip()  # fmt: skip


def test_two_phases_commit_on_one_branch_that_is_pushed_and_the_agent_never_sees_the_token(
    kubectl: Kubectl, namespace: str, git_operator: OperatorProcess, s3: Minio,
    git_server: GitServer,
) -> None:  # fmt: skip
    secret(kubectl, namespace, PLAIN.value)
    base = served(git_server, "main")
    status = apply(
        kubectl, namespace, "relay", git_server,
        [phase("one", "Phase one", search=True), phase("two", "Phase two", "NOTES.md")],
        push={},
    )  # fmt: skip
    assert status["status"] == "completed", status["conditions"]
    assert output(s3, namespace, "relay", "0-one", "search.txt") == "nothing found\n"
    assert output(s3, namespace, "relay", "1-two", "branch.txt") == "agentjobs/relay\n"
    assert output(s3, namespace, "relay", "1-two", "log.txt").splitlines()[:2] == [
        "Phase two",
        "Phase one",
    ]
    assert git_server.commits("service", "agentjobs/relay")[:2] == ["Phase two", "Phase one"]
    head = served(git_server, "agentjobs/relay")
    [one] = phase_status(kubectl, namespace, "relay-0-one")["repositories"]
    [two] = phase_status(kubectl, namespace, "relay-1-two")["repositories"]
    assert (one["baseCommit"], one["commits"], one["pushed"], one["branch"]) == (
        base, 1, True, "agentjobs/relay"
    )  # fmt: skip
    assert (two["baseCommit"], two["headCommit"], two["commits"], two["pushed"]) == (
        one["headCommit"], head, 2, True
    )  # fmt: skip
    assert status["repositories"] == [two]


def test_without_push_the_next_phase_starts_from_the_bundle(
    kubectl: Kubectl, namespace: str, git_operator: OperatorProcess, s3: Minio,
    git_server: GitServer,
) -> None:  # fmt: skip
    secret(kubectl, namespace, PLAIN.value)
    status = apply(
        kubectl, namespace, "bundled", git_server,
        [phase("one", "Phase one"), phase("two", "Phase two", "NOTES.md")],
    )  # fmt: skip
    assert status["status"] == "completed", status["conditions"]
    assert output(s3, namespace, "bundled", "1-two", "log.txt").splitlines()[:2] == [
        "Phase two",
        "Phase one",
    ]
    [two] = phase_status(kubectl, namespace, "bundled-1-two")["repositories"]
    assert (two["commits"], two.get("pushed")) == (2, None)
    assert served(git_server, "agentjobs/bundled") == ""


def test_a_refused_push_completes_the_phase_as_a_partial_success(
    kubectl: Kubectl, namespace: str, git_operator: OperatorProcess, git_server: GitServer,
) -> None:  # fmt: skip
    secret(kubectl, namespace, PLAIN.value)
    status = apply(
        kubectl, namespace, "guarded", git_server, [phase("one", "Phase one")],
        push={"branch": "main"},
    )  # fmt: skip
    assert status["status"] == "completed", status["conditions"]
    [entry] = phase_status(kubectl, namespace, "guarded-0-one")["repositories"]
    refusal = "error: GH006: Protected branch update failed for refs/heads/main."
    assert (entry["pushed"], entry["pushError"]) == (False, refusal)
    outcome = status["taskOutcome"]
    assert (outcome["status"], outcome["needsUserAction"]) == ("partial_success", True)
    assert [b["type"] for b in outcome["blockers"]] == ["permission"]
    assert refusal in outcome["blockers"][0]["message"]
    assert git_server.commits("service", "main") == ["The repository's first commit"]
    artifacts = [a["path"] for a in phase_status(kubectl, namespace, "guarded-0-one")["artifacts"]]
    assert "work/service/unpushed.patch" in artifacts


def test_a_failed_phases_commits_are_pushed_and_kept(
    kubectl: Kubectl, namespace: str, git_operator: OperatorProcess, git_server: GitServer,
) -> None:  # fmt: skip
    secret(kubectl, namespace, PLAIN.value)
    failing = phase("one", "Half done")
    failing["command"] = ["sh", "-c", "set -e\n" + COMMIT + "echo 'I could not finish.'\nexit 1\n"]
    status = apply(kubectl, namespace, "halfway", git_server, [failing], push={})
    assert status["status"] == "failed", status["conditions"]
    [entry] = phase_status(kubectl, namespace, "halfway-0-one")["repositories"]
    assert (entry["commits"], entry["pushed"]) == (1, True)
    assert git_server.commits("service", "agentjobs/halfway")[0] == "Half done"
    titles = [a["title"] for a in phase_status(kubectl, namespace, "halfway-0-one")["artifacts"]]
    assert "work/service/unpushed.patch (kept from a failed phase)" in titles


def test_a_workflow_change_is_quarantined_without_the_grant(
    kubectl: Kubectl, namespace: str, git_operator: OperatorProcess, s3: Minio,
    git_server: GitServer,
) -> None:  # fmt: skip
    secret(kubectl, namespace, PLAIN.value)
    status = apply(
        kubectl, namespace, "ci", git_server,
        [phase("one", "Run CI", ".github/workflows/ci.yml")], push={},
    )  # fmt: skip
    assert status["status"] == "completed", status["conditions"]
    [entry] = phase_status(kubectl, namespace, "ci-0-one")["repositories"]
    assert (entry["pushed"], entry["workflowChangesQuarantined"]) == (True, True)
    assert git_server.changed_paths("service", "agentjobs/ci") == {"src/app.py"}
    root = f"namespaces/{namespace}/executions/ci/0-one/attempt-1/work/service/"
    patch = stored_objects(s3, root)[root + "workflow-changes.patch"].decode()
    assert "+++ b/.github/workflows/ci.yml" in patch and "src/app.py" not in patch


def test_a_workflow_change_is_pushed_as_it_is_with_the_grant(
    kubectl: Kubectl, namespace: str, git_operator: OperatorProcess, git_server: GitServer,
) -> None:  # fmt: skip
    secret(kubectl, namespace, GRANTED.value)
    status = apply(
        kubectl, namespace, "granted", git_server,
        [phase("one", "Run CI", ".github/workflows/ci.yml")], push={},
    )  # fmt: skip
    assert status["status"] == "completed", status["conditions"]
    [entry] = phase_status(kubectl, namespace, "granted-0-one")["repositories"]
    assert (entry["pushed"], entry["workflowChangesQuarantined"]) == (True, False)
    assert served(git_server, "agentjobs/granted") == entry["headCommit"]
    assert ".github/workflows/ci.yml" in git_server.changed_paths("service", "agentjobs/granted")


@pytest.mark.parametrize(
    ("token", "ref", "kind", "words"),
    [
        ("wrong-token-0123456789", None, "auth", "could not read Username"),
        (PLAIN.value, "no-such-branch", "config", "no-such-branch"),
    ],
    ids=["wrong token", "missing ref"],
)
def test_a_checkout_that_cannot_be_made_blocks_the_phase_before_the_agent(
    kubectl: Kubectl, namespace: str, git_operator: OperatorProcess, git_server: GitServer,
    token: str, ref: str | None, kind: str, words: str,
) -> None:  # fmt: skip
    secret(kubectl, namespace, token)
    one = phase("one", "Phase one") | {"keepPods": True}
    status = apply(
        kubectl, namespace, "refused", git_server, [one], **({"ref": ref} if ref else {})
    )
    outcome = status["taskOutcome"]
    assert (status["status"], outcome["status"]) == ("failed", "blocked"), status
    [blocker] = outcome["blockers"]
    assert blocker["type"] == kind and words in blocker["message"]
    pod = kubectl.json("get", "pod", "-n", namespace, "refused-0-one-a1")
    [agent] = [c for c in pod["status"]["containerStatuses"] if c["name"] == "agent"]
    assert "running" not in agent["state"] and "terminated" not in agent["state"]
    assert not agent.get("lastState")


GRADER = r"""
diff=/workspace/artifacts/changes/service.diff
if grep -q '^+Graded work' "$diff" && [ ! -e /var/run/agentjobs/git ] \
   && [ "$(git -C /workspace/service log -1 --format=%s)" = "Graded work" ]; then
  echo 'GRADE_RESULT: {"result": "satisfied", "explanation": "The diff has the change."}'
else
  echo 'GRADE_RESULT: {"result": "failed", "explanation": "No diff or the wrong checkout."}'
fi
echo GRADE_RESULT_END
"""


def test_a_grader_sees_the_graded_attempts_changes_as_a_diff(
    kubectl: Kubectl, namespace: str, git_operator: OperatorProcess, git_server: GitServer,
) -> None:  # fmt: skip
    secret(kubectl, namespace, PLAIN.value)
    graded = phase("one", "Graded work", "src/app.py") | {
        "outcome": {
            "rubric": "- the change is in the diff\n",
            "grader": {"image": PYTHON_GIT, "command": ["sh", "-c"], "args": [GRADER]},
        }
    }
    status = apply(kubectl, namespace, "graded", git_server, [graded])
    assert status["status"] == "completed", status["conditions"]
    outcome = phase_status(kubectl, namespace, "graded-0-one")["outcome"]
    assert outcome["result"] == "satisfied", outcome


def test_a_retried_attempt_starts_from_the_failed_attempts_commits(
    kubectl: Kubectl, namespace: str, git_operator: OperatorProcess, s3: Minio,
    git_server: GitServer,
) -> None:  # fmt: skip
    secret(kubectl, namespace, PLAIN.value)
    flaky = phase("one", "Attempt $AGENTJOBS_ATTEMPT", "ATTEMPTS.md")
    flaky["command"] = ["sh", "-c", "set -e\nWORK=$(eval echo \"$WORK\")\n" + COMMIT + (
        '[ "$AGENTJOBS_ATTEMPT" = 1 ] && { echo "The first attempt broke."; exit 1; }\n'
    ) + FINISH]  # fmt: skip
    flaky["retry"] = {"limit": 1, "backoffSeconds": 1}
    status = apply(kubectl, namespace, "again", git_server, [flaky], push={})
    assert status["status"] == "completed", status["conditions"]
    [entry] = phase_status(kubectl, namespace, "again-0-one")["repositories"]
    assert (entry["commits"], entry["pushed"]) == (2, True), entry
    assert git_server.commits("service", "agentjobs/again")[:2] == ["Attempt 2", "Attempt 1"]
