"""A phase pod's access to storage: the bucket checked, a token for just this attempt's
roots in a Secret of its own, and the sidecars that use it (R60)."""

from __future__ import annotations

import time

from agentjobs.adapters import paths
from agentjobs.adapters.kube import ApiError
from agentjobs.contract.artifacts import bucket_policy, credentials, handoff
from agentjobs.controllers.phase.phase_context import Attempt, PhaseContext
from agentjobs.kube import admission, naming, pods
from agentjobs.models.contract import FailureKind, SystemFailure
from agentjobs.models.resources import PhaseSpec
from agentjobs.models.storage import HandoffRef

# A phase without timeoutSeconds may run this long before its token expires.
TOKEN_SECONDS_WITHOUT_TIMEOUT = 30 * 24 * 3600
# R73: a pod that Kueue may hold in its queue gets this much longer to start with its token.
KUEUE_QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
QUEUED_TOKEN_SECONDS = 7 * 24 * 3600


async def prepare(
    ctx: PhaseContext,
    attempt: Attempt,
    owner: pods.Owner,
    *,
    previous: HandoffRef | None = None,
    spec: PhaseSpec | None = None,
    secret_name: str | None = None,
) -> pods.Sidecars | SystemFailure | None:
    """The bucket and this attempt's token Secret; the sidecars that use them. A bucket the
    admin does not allow, or an allowed one that does not exist (R60: only the operator's
    own is created), blocks the phase before anything is created, and so does admission's
    refusal of the Secret. ``previous`` is a
    revised attempt's previous attempt (R42), readable too; ``spec`` a grader's (R38)."""
    spec = spec or ctx.spec
    if ctx.storage is None or attempt.bucket is None or attempt.root is None:
        return None
    if not ctx.storage.policy.allows(attempt.bucket):
        return SystemFailure(
            kind=FailureKind.CONFIG,
            code=bucket_policy.NOT_ALLOWED,
            message=ctx.storage.policy.refusal(attempt.bucket),
        )
    if not await ctx.storage.bucket_ready(attempt.bucket, ctx.report_waiting):
        return SystemFailure(
            kind=FailureKind.CONFIG,
            code=bucket_policy.NOT_FOUND,
            message=ctx.storage.policy.missing(attempt.bucket),
        )
    service = ctx.storage.credentials
    token = service.issue(claims(ctx, spec, attempt, previous))
    # The Phase's UID and the attempt are in the name, so an AlreadyExists is this attempt's
    # own Secret (the operator may create Secrets but never read them).
    secret_name = secret_name or naming.storage_secret(ctx.name, ctx.uid, attempt.number)
    try:
        await ctx.kube.create(
            paths.secret(ctx.namespace),
            pods.storage_secret(
                name=secret_name,
                namespace=ctx.namespace,
                owner=owner,
                token=token,
                ca=service.ca_pem,
            ),
        )
    except ApiError as error:
        refused = admission.refusal_blocker(
            code=error.status, reason=error.reason, message=error.message, subject="Secret"
        )
        if refused is None:
            raise
        return refused
    return pods.Sidecars(
        image=ctx.config.image,
        credentials_url=service.url,
        credentials_secret=secret_name,
        bucket=attempt.bucket,
        attempt_root=attempt.root,
        harvest_interval_seconds=ctx.config.harvest_interval_seconds,
        inputs=spec.inputs,
        harvest_limits=ctx.config.harvest_limits,
        resources=ctx.config.sidecar_resources,
    )


def claims(
    ctx: PhaseContext, spec: PhaseSpec, attempt: Attempt, previous: HandoffRef | None
) -> credentials.Claims:
    """What this attempt's sidecars may do, until well after the phase could still run
    (the credentials endpoint refuses the token as soon as the phase has ended)."""
    assert ctx.storage is not None and attempt.bucket is not None and attempt.root is not None
    readable = handoff.readable_roots(spec, namespace=ctx.namespace)
    if previous is not None:
        earlier = spec.model_copy(update={"inputs": previous})
        readable += handoff.readable_roots(earlier, namespace=ctx.namespace)
    running = ctx.spec.timeout_seconds or TOKEN_SECONDS_WITHOUT_TIMEOUT
    lifetime = ctx.config.pending_timeout + running + pods.STORAGE_GRACE_SECONDS
    if KUEUE_QUEUE_LABEL in (ctx.spec.pod_labels or {}):
        lifetime += QUEUED_TOKEN_SECONDS
    return credentials.Claims(
        namespace=ctx.namespace,
        phase=ctx.name,
        phase_uid=ctx.uid,
        attempt=attempt.number,
        writable=credentials.Root(attempt.bucket, attempt.root),
        readable=readable,
        expires=int(time.time() + lifetime),
    )
