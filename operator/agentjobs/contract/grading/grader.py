"""R38: what a grader's pod is built from, in its own context apart from the agent.

The grader's pod is a phase pod (:func:`agentjobs.kube.pods.phase_pod`: the
same hardening, placement, sidecars and storage path) built from a spec that
holds only what the grader may see: its own container, the rubric
(``AGENTJOBS_RUBRIC_FILE``), the description as its prompt file, and the
graded attempt's hand-off manifest as its inputs, so the fetcher puts that
attempt's stored artifacts under ``/workspace/artifacts/input/``. Nothing of
the agent's container comes with it: not its prompt, environment, service
account or workspace. A phase that works on repositories has its grader check
each out where the graded attempt left it, push nothing and give the grader no
credentials, and the fetcher writes the attempt's changes (from where the phase
started) as ``/workspace/artifacts/changes/<name>.diff``.

Decisions where the contract is silent: the grader keeps the phase's security
contexts, placement and ``timeoutSeconds`` (a grader that runs past it fails
the evaluation, R40), but never the phase's service account (it needs no
Kubernetes API); its prompt file ends with an instruction on the GRADE_RESULT
block, as an agent's ends with the TASK_RESULT one, so that an agent CLI run as
a grader knows how to answer; a phase without a description tells the grader
to judge the artifacts by the rubric alone.
"""

from __future__ import annotations

from collections.abc import Sequence

from agentjobs.contract.repositories import checkout as repository_checkout
from agentjobs.kube import in_pod
from agentjobs.models.kubernetes import EnvVar
from agentjobs.models.outcomes import OutcomeSpec
from agentjobs.models.repositories import PhaseRepository, RepositoryStatus
from agentjobs.models.resources import PhaseSpec
from agentjobs.models.storage import HandoffRef

RUBRIC_KEY = "rubric.md"
RUBRIC_FILE = f"{in_pod.PROMPT_DIRECTORY}/{RUBRIC_KEY}"
RUBRIC_ENV = "AGENTJOBS_RUBRIC_FILE"
NO_DESCRIPTION = "Judge the artifacts by the rubric alone."

GRADE_RESULT_INSTRUCTION = f"""\

---

You are the grader. The rubric is in the file named by ${RUBRIC_ENV}; the artifacts to
grade are under {in_pod.INPUT}/ (work on a repository: its changes are in
{in_pod.CHANGES}/<name>.diff, the repository at /workspace/<name>). Check each
criterion of the rubric against them, then end with a GRADE_RESULT block. It must be
the last thing you write: the line `GRADE_RESULT:` followed by one JSON object, then
a line holding only `GRADE_RESULT_END`:

GRADE_RESULT: {{"result": "needs_revision", "explanation": "One criterion is not met.",
  "criteria": [{{"name": "Coverage", "met": false, "feedback": "What to change"}}]}}
GRADE_RESULT_END

- `result`: `satisfied` (every criterion is met), `needs_revision` (the agent should revise
  the work) or `failed` (the work cannot be graded).
- `explanation`: why, in a few sentences; `criteria`: each criterion's name, whether it is
  met, and for an unmet one the feedback the agent gets for its revision.
"""


def grader_prompt(outcome: OutcomeSpec) -> str:
    """The grader's prompt file: the outcome's description and the GRADE_RESULT instruction."""
    description = (outcome.description or NO_DESCRIPTION).rstrip("\n")
    return description + "\n" + GRADE_RESULT_INSTRUCTION


def grader_files(outcome: OutcomeSpec, rubric: str) -> dict[str, str]:
    """The grader's ConfigMap: its prompt and the rubric (inline, or read from rubricFrom)."""
    return {in_pod.PROMPT_KEY: grader_prompt(outcome), RUBRIC_KEY: rubric}


def graded_checkouts(
    checkouts: Sequence[PhaseRepository], graded: Sequence[RepositoryStatus]
) -> list[PhaseRepository] | None:
    """The grader's checkouts: each repository where the graded attempt left it, its diff
    from where the phase started, nothing pushed, no credentials for the grader."""
    by_name = {entry.name: entry for entry in graded}
    chosen = []
    for checkout in checkouts:
        entry = by_name.get(checkout.name)
        if entry is None or entry.head_commit is None:
            continue
        chosen.append(
            checkout.model_copy(
                update={
                    "handed": repository_checkout.handed_work(entry),
                    "push": False,
                    "agent_credentials": False,
                    "diff_from": entry.base_commit,
                }
            )
        )
    return chosen or None


def grader_spec(
    spec: PhaseSpec, graded: HandoffRef, repositories: Sequence[RepositoryStatus] = ()
) -> PhaseSpec:
    """The spec of the grader's pod for the attempt whose hand-off manifest is ``graded`` and
    whose repositories' entries are ``repositories``."""
    assert spec.outcome is not None, "only a phase with an outcome is graded"
    grader = spec.outcome.grader
    environment = [EnvVar(name=RUBRIC_ENV, value=RUBRIC_FILE), *(grader.env or [])]
    return spec.model_copy(
        update={
            "image": grader.image or spec.image,
            "command": grader.command,
            "args": grader.args,
            "env": environment,
            "env_from": grader.env_from,
            "resources": grader.resources,
            "transcript_format": grader.transcript_format,
            "service_account_name": None,
            "outcome": None,
            "prompt": None,
            "prompt_from": None,
            "outputs": None,
            "inputs": graded,
            "repositories": graded_checkouts(spec.repositories or [], repositories),
        }
    )
