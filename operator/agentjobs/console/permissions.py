"""R72: what the console asks Kubernetes before it shows or does anything, one question each.

Every page is a read Kubernetes already has a verb for, asked of the user
(a SubjectAccessReview, or a SelfSubjectAccessReview with the user's own
kubeconfig):

- the Executions list: ``list executions`` in the namespace (the cluster-wide
  question for all namespaces; without it, each namespace's own);
- an Execution and its timeline: ``get executions`` and ``get phases``;
- a conversation: ``get pods/log``, since a transcript is the agent pod's log
  and outlives it only in storage;
- an artifact download: ``get executions/artifacts``, a sub-permission RBAC
  grants like any other (``resources: ["executions/artifacts"]``), so that
  seeing a run does not by itself mean reading what it made;
- cancel and interrupt: ``patch executions``, and the patch is sent with the
  user's own credential.
"""

from __future__ import annotations

from typing import NamedTuple

GROUP = "agentjobs.io"


class Check(NamedTuple):
    """One question: may the user ``verb`` ``resource`` (``/subresource``) in ``namespace``
    ("" for every namespace)?"""

    verb: str
    resource: str
    namespace: str
    subresource: str = ""
    group: str = GROUP

    @property
    def attributes(self) -> dict[str, str]:
        """The review's ``resourceAttributes``."""
        attributes = {
            "verb": self.verb,
            "group": self.group,
            "resource": self.resource,
            "namespace": self.namespace,
        }
        if self.subresource:
            attributes["subresource"] = self.subresource
        return attributes

    def __str__(self) -> str:
        what = f"{self.resource}/{self.subresource}" if self.subresource else self.resource
        where = f"namespace {self.namespace}" if self.namespace else "all namespaces"
        return f"{self.verb} {what} in {where}"


def list_executions(namespace: str) -> Check:
    return Check("list", "executions", namespace)


def execution_page(namespace: str) -> tuple[Check, ...]:
    return (Check("get", "executions", namespace), Check("get", "phases", namespace))


def conversation(namespace: str) -> tuple[Check, ...]:
    return (*execution_page(namespace), Check("get", "pods", namespace, "log", group=""))


def artifacts(namespace: str) -> tuple[Check, ...]:
    return (*execution_page(namespace), Check("get", "executions", namespace, "artifacts"))


def act(namespace: str) -> tuple[Check, ...]:
    return (Check("patch", "executions", namespace),)
