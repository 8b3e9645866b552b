"""The life of a phase's pod: its prompt, the pod itself (with its storage access from
:mod:`pod_storage`), and stopping it. Every object is created owned by the Phase; one
of the same name that another owner left behind is waited on (``RetryLater``), never
used."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Callable
from dataclasses import dataclass

import aiohttp

from agentjobs.adapters import agent_stop, paths
from agentjobs.adapters.kube import ApiError, JsonObject, Kube
from agentjobs.contract.grading.revision import Revision
from agentjobs.contract.limits import guard
from agentjobs.contract.repositories import checkout
from agentjobs.controllers.phase import pod_storage
from agentjobs.controllers.phase.phase_context import Attempt, PhaseContext
from agentjobs.kube import admission, naming, ownership, pods, prompts
from agentjobs.models.contract import FailureKind, SystemFailure
from agentjobs.models.kubernetes import KeySelector
from agentjobs.models.resources import API_VERSION, PhaseSpec
from agentjobs.runtime import backoff
from agentjobs.runtime.errors import RetryLater, log_retry

logger = logging.getLogger(__name__)
REPOSITORIES_NEED_STORAGE = "RepositoriesNeedStorage"
PLAIN_HTTP = "PlainHttpRepository"


async def create_owned(
    ctx: PhaseContext, path: Callable[..., str], body: JsonObject
) -> JsonObject | None:
    """Create ``body`` (``path`` builds its kind's paths), or find it already there and ours
    (a restart); another owner's object of that name is a leftover still being removed: wait
    for it. What the creation returned; None when it was there already."""
    created = await ctx.kube.create(path(ctx.namespace), body)
    if created is not None:
        return created
    existing = await ctx.kube.get(path(ctx.namespace, body["metadata"]["name"]))
    if existing is None:
        raise RetryLater(f"{body['kind']} {body['metadata']['name']!r} was just removed")
    if not ownership.owned_by(existing, ctx.uid):
        raise RetryLater(ownership.describe_foreign(existing))
    return None


@dataclass(frozen=True)
class GraderPod:
    """R38: a grader's pod, built from its own spec: its name, its ConfigMap's files (the
    description and the rubric) and its token Secret's name."""

    spec: PhaseSpec
    pod_name: str
    files: dict[str, str]
    secret_name: str


def _owner(ctx: PhaseContext) -> pods.Owner:
    return pods.Owner(API_VERSION, "Phase", ctx.name, ctx.uid)


async def create_pod(
    ctx: PhaseContext, attempt: Attempt, *, revision: Revision | None = None
) -> SystemFailure | None:
    """The attempt's ConfigMap, Secret and pod; a failure when the phase cannot run at all."""
    spec = ctx.spec
    owner = _owner(ctx)
    # R71: a retry or a revision is not started once the runs have used up a limit of the
    # Execution's (the status counts this phase's earlier attempts and graders).
    spent_out = guard.budget_spent(guard.Budget.of(spec.budget, ctx.status.usage))
    if spent_out is not None:
        return spent_out.not_started(f"attempt {attempt.number} of phase {spec.name!r}")
    prompt = spec.prompt
    if prompt is None and spec.prompt_from is not None:
        prompt, failure = await _referenced_prompt(ctx)
        if failure is not None:
            return failure
    refused = _repositories_refused(ctx)
    if refused is not None:
        return refused
    if spec.repositories and attempt.number > 1:
        # A retry or a revision starts from where the last attempt left off; its sidecars'
        # token may read that attempt's bundles.
        continued = checkout.continued(spec.repositories, ctx.status.repositories or [])
        spec = spec.model_copy(update={"repositories": continued})
    sidecars = await pod_storage.prepare(
        ctx, attempt, owner, previous=revision.previous if revision else None, spec=spec
    )
    if isinstance(sidecars, SystemFailure):
        return sidecars
    if sidecars is not None and spec.repositories:
        sidecars = dataclasses.replace(sidecars, repositories=tuple(spec.repositories))
    config_map_name = None
    files = None
    if revision is not None:
        prompt = (prompt or "").rstrip("\n") + "\n\n" + revision.section
        config_map_name = naming.pod_config_map(attempt.pod_name)
        files = {revision.feedback_key: revision.feedback}
        if sidecars is not None:
            sidecars = dataclasses.replace(
                sidecars, previous=revision.previous, feedback_key=revision.feedback_key
            )
    carried = prompts.carried(prompt or "", files)
    config_map = None
    if carried is None:
        config_map = prompts.prompt_config_map(
            phase_resource=ctx.name,
            namespace=ctx.namespace,
            owner=owner,
            prompt=prompt or "",
            name=config_map_name,
            files=files,
        )
    stopper: pods.Stopper | None = None
    if guard.watched(spec.limits, spec.budget):
        made = await _stop_token(ctx, attempt, owner)
        if isinstance(made, SystemFailure):
            return made
        stopper = made
    pod = pods.phase_pod(
        spec,
        phase_resource=ctx.name,
        namespace=ctx.namespace,
        owner=owner,
        attempt=attempt.number,
        sidecars=sidecars,
        security=ctx.config.security,
        pull_secrets=ctx.config.image_pull_secrets,
        config_map_name=config_map_name,
        stopper=stopper,
        prompt=carried,
    )
    return await _create_all(ctx, config_map, pod)


async def _stop_token(
    ctx: PhaseContext, attempt: Attempt, owner: pods.Owner
) -> pods.Stopper | SystemFailure:
    """R70: the Secret that gives the attempt's timekeeper its stop token (the Phase's UID
    and the attempt are in its name, so an AlreadyExists is this attempt's own)."""
    name = naming.stop_secret(ctx.name, ctx.uid, attempt.number)
    secret = pods.stop_secret(
        name=name,
        namespace=ctx.namespace,
        owner=owner,
        token=agent_stop.token(ctx.uid, attempt.pod_name),
    )
    try:
        await ctx.kube.create(paths.secret(ctx.namespace), secret)
    except ApiError as error:
        refused = _refusal_blocker(error, "Secret")
        if refused is None:
            raise
        return refused
    return pods.Stopper(ctx.config.image, name, ctx.config.sidecar_resources)


def _repositories_refused(ctx: PhaseContext) -> SystemFailure | None:
    """R63: why the phase's repositories cannot be checked out at all, if they cannot: the
    checkout, the hand-off and the push all go through the attempt's storage, and plain
    http only where the operator allows it."""
    repositories = ctx.spec.repositories or []
    if repositories and ctx.storage is None:
        return SystemFailure(
            kind=FailureKind.CONFIG,
            code=REPOSITORIES_NEED_STORAGE,
            message="spec.repositories needs artifact storage, and the operator has none "
            "configured: the work is handed from phase to phase through it",
        )
    for repository in repositories:
        refusal = checkout.http_refusal(repository.url, ctx.config.git_allow)
        if refusal is not None:
            return SystemFailure(kind=FailureKind.CONFIG, code=PLAIN_HTTP, message=refusal)
    return None


async def create_grader_pod(
    ctx: PhaseContext, attempt: Attempt, grader: GraderPod
) -> SystemFailure | None:
    """R38: the grader's ConfigMap, token and pod, beside the attempt it grades (same
    hardening, sidecars and storage as an agent pod; the grader's own storage root)."""
    owner = _owner(ctx)
    assert ctx.storage is not None and attempt.bucket is not None and attempt.root is not None
    root = ctx.storage.grader_root(ctx.spec, namespace=ctx.namespace, attempt=attempt.number)
    sidecars = await pod_storage.prepare(
        ctx,
        Attempt(grader.pod_name, attempt.number, attempt.bucket, root),
        owner,
        spec=grader.spec,
        secret_name=grader.secret_name,
    )
    if isinstance(sidecars, SystemFailure):
        return sidecars
    if sidecars is not None and grader.spec.repositories:
        sidecars = dataclasses.replace(sidecars, repositories=tuple(grader.spec.repositories))
    config_map_name = naming.pod_config_map(grader.pod_name)
    config_map = prompts.config_map(
        name=config_map_name,
        phase_resource=ctx.name,
        namespace=ctx.namespace,
        owner=owner,
        data=grader.files,
    )
    pod = pods.phase_pod(
        grader.spec,
        phase_resource=ctx.name,
        namespace=ctx.namespace,
        owner=owner,
        attempt=attempt.number,
        sidecars=sidecars,
        security=ctx.config.security,
        pull_secrets=ctx.config.image_pull_secrets,
        pod_name=grader.pod_name,
        config_map_name=config_map_name,
        container=pods.GRADER_CONTAINER,
    )
    return await _create_all(ctx, config_map, pod)


async def _create_all(
    ctx: PhaseContext, config_map: JsonObject | None, pod: JsonObject
) -> SystemFailure | None:
    """The pod's ConfigMap (when its prompt needs one), then the pod."""
    made = [("ConfigMap", paths.config_map, config_map)] if config_map is not None else []
    for subject, path, body in [*made, ("pod", paths.pod, pod)]:
        try:
            created = await create_owned(ctx, path, body)
        except ApiError as error:
            refused = _refusal_blocker(error, subject)
            if refused is None:
                raise
            return refused
        if created is not None and path is paths.pod:
            ctx.pod_created(created)
    return None


def _refusal_blocker(error: ApiError, subject: str) -> SystemFailure | None:
    """Admission's "no" to what the phase asked for is its blocker; anything else (the
    operator's own RBAC, an outage) is raised by the caller, logged and retried."""
    return admission.refusal_blocker(
        code=error.status, reason=error.reason, message=error.message, subject=subject
    )


async def _referenced_prompt(ctx: PhaseContext) -> tuple[str | None, SystemFailure | None]:
    assert ctx.spec.prompt_from is not None
    ref = ctx.spec.prompt_from.config_map_key_ref
    found = await config_map_value(ctx.kube, ctx.namespace, ref, what="prompt")
    return (None, found) if isinstance(found, SystemFailure) else (found, None)


async def config_map_value(
    kube: Kube, namespace: str, ref: KeySelector, *, what: str
) -> str | SystemFailure:
    """The value under ``ref``'s key of the ConfigMap it names in ``namespace``, or the
    phase's blocker (``what``: "prompt", "rubric") when it is not there. A name that is
    none (R53: the schema refuses it, unless it was admitted before the schema did) is the
    same blocker, and nothing is read."""
    code = f"{what.capitalize()}NotFound"
    try:
        config_map = await kube.get(paths.config_map(namespace, ref.name))
    except paths.InvalidName as error:
        return SystemFailure(
            kind=FailureKind.CONFIG, code=code, message=f"the {what}'s ConfigMap: {error}"
        )
    value = ((config_map or {}).get("data") or {}).get(ref.key)
    if value is None:
        return SystemFailure(
            kind=FailureKind.CONFIG,
            code=code,
            message=f"the {what} is not in ConfigMap {ref.name!r} under key {ref.key!r}",
        )
    return str(value)


async def delete_pod(ctx: PhaseContext, pod: JsonObject, *, grace_seconds: int) -> None:
    """Stop the phase's own pod (by its UID), retrying until the API server takes it."""
    ctx.deleted_by_operator = True
    name, uid = pod["metadata"]["name"], pod["metadata"]["uid"]
    delays = backoff.API.delays()
    while True:
        try:
            await ctx.kube.delete(
                paths.pod(ctx.namespace, name), grace_period_seconds=grace_seconds, uid=uid
            )
            return
        except (ApiError, aiohttp.ClientError, TimeoutError) as error:
            delay = next(delays)
            log_retry(
                logger, f"phase {ctx.namespace}/{ctx.name}: stopping pod {name}", error, delay
            )
            await asyncio.sleep(delay)


async def delete_finished_pods(ctx: PhaseContext) -> None:
    """Remove an ended phase's pods (every attempt's and grader's, by the Phase's UID): their
    logs are stored and their run recorded, so they only hold the node's resources."""
    ctx.deleted_by_operator = True
    selector = f"{naming.LABEL_PHASE}={ctx.name}"
    for pod in await ctx.kube.list(paths.pod(ctx.namespace), label_selector=selector):
        if ownership.owned_by(pod, ctx.uid):
            meta = pod["metadata"]
            await ctx.kube.delete(paths.pod(ctx.namespace, meta["name"]), uid=meta["uid"])


async def delete_secret(ctx: PhaseContext, attempts: int) -> None:
    """The tokens of every attempt (and of its grader) are needed no more once the phase
    has ended."""
    for number in range(1, attempts + 1):
        name = naming.storage_secret(ctx.name, ctx.uid, number)
        await ctx.kube.delete(paths.secret(ctx.namespace, name))
        if ctx.spec.outcome is not None:
            grader = naming.grader_storage_secret(ctx.name, ctx.uid, number)
            await ctx.kube.delete(paths.secret(ctx.namespace, grader))
