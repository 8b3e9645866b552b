"""Who is asking, and whether Kubernetes lets them: the console's two ways to know (R72).

- With the user's own kubeconfig (``agentjobs console`` on their machine), the
  console reads as the user, so the API server already refuses what they may
  not see; each page still asks first (SelfSubjectAccessReview), so a refusal
  is a clear 403 page rather than an error half-way through.
- Installed in the cluster (``--user-tokens``), each request must carry the
  user's bearer token (an ``Authorization`` header, or the cookie the login
  page sets): a TokenReview says who they are (401 otherwise), and a
  SubjectAccessReview for that user answers every question before the
  console reads with its own service account. Cancel and interrupt are sent
  with the user's token, so the API server decides them as the user's and
  audits them under their name.

Answers are kept for ``ANSWER_SECONDS``, as the API server's own webhook
authorizer does, so a page of a thousand rows asks once per namespace.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol

from agentjobs.adapters import paths
from agentjobs.adapters.kube import Kube
from agentjobs.console.permissions import Check

ANSWER_SECONDS = 10.0
ANSWERS_KEPT = 10_000


class Refused(Exception):
    """A request the console turns away: 401 (who are you?) or 403 (not allowed)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class User:
    name: str
    uid: str = ""
    groups: tuple[str, ...] = ()
    extra: dict[str, list[str]] = field(default_factory=dict, hash=False, compare=False)
    token: str | None = field(default=None, repr=False)  # to act as them; None: the console is them


class Access(Protocol):
    kube: Kube

    async def user(self, token: str | None) -> User:
        """Who sent the request; Refused(401) when the console cannot tell."""

    async def allowed(self, user: User, check: Check) -> bool:
        """Whether Kubernetes lets ``user`` do what ``check`` asks."""


class _Answers:
    """Answers kept for a while, the oldest dropped first once too many are kept."""

    def __init__(self, seconds: float) -> None:
        self._seconds = seconds
        self._kept: dict[object, tuple[float, object]] = {}

    def get(self, key: object) -> object | None:
        found = self._kept.get(key)
        if found is None or found[0] < time.monotonic():
            return None
        return found[1]

    def put(self, key: object, answer: object) -> None:
        if len(self._kept) >= ANSWERS_KEPT:
            del self._kept[next(iter(self._kept))]
        self._kept[key] = (time.monotonic() + self._seconds, answer)


async def require(access: Access, user: User, checks: tuple[Check, ...]) -> None:
    """Refused(403), naming the first question Kubernetes said no to."""
    for check in checks:
        if not await access.allowed(user, check):
            raise Refused(403, f"{user.name} may not {check}")


def acting_kube(access: Access, user: User) -> Kube:
    """The connection to change something with, as ``user``."""
    return access.kube if user.token is None else access.kube.as_bearer(user.token)


async def _review(kube: Kube, kind: str, spec: Mapping[str, object]) -> bool:
    """Whether the API server's authorizer allows what an access review of ``kind`` asks."""
    path = {
        "SelfSubjectAccessReview": paths.self_subject_access_reviews(),
        "SubjectAccessReview": paths.subject_access_reviews(),
    }[kind]
    review = {"apiVersion": "authorization.k8s.io/v1", "kind": kind, "spec": spec}
    answer = await kube.review(path, review)
    return (answer.get("status") or {}).get("allowed") is True


class OwnKubeconfig:
    """The console on the user's machine, reading with their kubeconfig."""

    def __init__(self, kube: Kube) -> None:
        self.kube = kube
        self._answers = _Answers(ANSWER_SECONDS)

    async def user(self, token: str | None) -> User:
        return User("you")

    async def allowed(self, user: User, check: Check) -> bool:
        known = self._answers.get(check)
        if isinstance(known, bool):
            return known
        spec = {"resourceAttributes": check.attributes}
        allowed = await _review(self.kube, "SelfSubjectAccessReview", spec)
        self._answers.put(check, allowed)
        return allowed


class UserTokens:
    """The console in the cluster: each request's bearer token says who, RBAC says what."""

    def __init__(self, kube: Kube) -> None:
        self.kube = kube
        self._users = _Answers(ANSWER_SECONDS)
        self._answers = _Answers(ANSWER_SECONDS)

    async def user(self, token: str | None) -> User:
        if not token:
            raise Refused(401, "sign in: send your Kubernetes bearer token")
        digest = hashlib.sha256(token.encode()).hexdigest()  # never the token itself as a key
        known = self._users.get(digest)
        if isinstance(known, User):
            return known
        review = {
            "apiVersion": "authentication.k8s.io/v1",
            "kind": "TokenReview",
            "spec": {"token": token},
        }
        status = (await self.kube.review(paths.token_reviews(), review)).get("status") or {}
        if status.get("authenticated") is not True:
            raise Refused(401, "the token was not accepted: sign in again")
        info = status.get("user") or {}
        user = User(
            name=str(info.get("username") or ""),
            uid=str(info.get("uid") or ""),
            groups=tuple(str(group) for group in info.get("groups") or ()),
            extra={str(k): [str(v) for v in vs] for k, vs in (info.get("extra") or {}).items()},
            token=token,
        )
        self._users.put(digest, user)
        return user

    async def allowed(self, user: User, check: Check) -> bool:
        key = (user.name, user.uid, user.groups, check)
        known = self._answers.get(key)
        if isinstance(known, bool):
            return known
        spec = {
            "resourceAttributes": check.attributes,
            "user": user.name,
            "uid": user.uid,
            "groups": list(user.groups),
            "extra": user.extra,
        }
        allowed = await _review(self.kube, "SubjectAccessReview", spec)
        self._answers.put(key, allowed)
        return allowed
