"""What a phase's agent is asked: its prompt, with the TASK_RESULT instruction after it,
mounted read-only at ``/etc/agentjobs/prompt`` (kube/pods.py).

A prompt of up to 16 KiB that needs no file beside it travels in the pod's own annotation,
shown as the file by a downward-API volume: one request fewer per phase than a ConfigMap,
which at a thousand phases was a twenty-eighth of all the API server was asked. A larger
one, or one with files beside it (a revision's feedback, a grader's rubric), goes into a
ConfigMap: a pod's annotations together may hold 256 KiB, and every pod event carries them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentjobs.kube import in_pod, naming
from agentjobs.kube.pods import Owner

TASK_RESULT_INSTRUCTION = """\

---

When you have finished, end your work with a TASK_RESULT block. It must be
the last thing you write: the line `TASK_RESULT:` followed by one JSON object,
then a line holding only `TASK_RESULT_END`. For example:

TASK_RESULT: {"success": true, "side_effects": "none", "comments": "What you delivered"}
TASK_RESULT_END

- `success` (required): the JSON boolean true if you produced what was asked, false if not.
- `failure_reason` (when `success` is false): one word, `task` (the request was wrong,
  impossible or too big), `platform` (a credential, tool or the workspace failed you),
  `refused` (you could have done it and judged you should not) or `unknown`.
- `side_effects`: `none` (you attempted no external write), `succeeded` (every write went
  through), `denied` (a write was refused) or `failed` (a write broke).
- `comments`: one specific sentence for the people who read the outcome.
- Optional: `blockers`, a list of `{"type": "...", "message": "...", "recoverable": true}`
  for what stood in your way; `confidence`, a number from 0 to 1 saying how sure you are
  of the result; `needs_user_action`, true if a person must act before this can go on.

Write your deliverable as files under /workspace/artifacts/output/.
"""


INLINE_PROMPT_BYTES = 16 * 1024


def compose_prompt(prompt: str) -> str:
    """The phase's prompt followed by the mandatory TASK_RESULT instruction."""
    return prompt.rstrip("\n") + "\n" + TASK_RESULT_INSTRUCTION


def carried(prompt: str, files: Mapping[str, str] | None) -> str | None:
    """The composed prompt when its pod can carry it: no files beside it, and small enough;
    None when it needs a ConfigMap."""
    composed = compose_prompt(prompt)
    if files or len(composed.encode()) > INLINE_PROMPT_BYTES:
        return None
    return composed


def prompt_config_map(
    *,
    phase_resource: str,
    namespace: str,
    owner: Owner,
    prompt: str,
    name: str | None = None,
    files: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """The agent's prompt (with the TASK_RESULT instruction) and ``files`` beside it."""
    data = {**(files or {}), in_pod.PROMPT_KEY: compose_prompt(prompt)}
    return config_map(
        name=name or naming.prompt_config_map(phase_resource),
        phase_resource=phase_resource,
        namespace=namespace,
        owner=owner,
        data=data,
    )


def config_map(
    *, name: str, phase_resource: str, namespace: str, owner: Owner, data: Mapping[str, str]
) -> dict[str, Any]:
    """A ConfigMap mounted read-only at in_pod.PROMPT_DIRECTORY, ``data`` as its files."""
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "labels": {**naming.MANAGED_BY, naming.LABEL_PHASE: phase_resource},
            "ownerReferences": [owner.reference()],
        },
        "data": dict(data),
    }
