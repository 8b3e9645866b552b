"""The operator's settings, from ``agentjobs run``'s flags."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from agentjobs.kube.pod_security import PodSecurity
from agentjobs.models.kubernetes import ResourceRequirements
from agentjobs.models.limits import PriceTable
from agentjobs.models.output import DEFAULT_HARVEST_LIMITS, HarvestLimits
from agentjobs.runtime.schedule_clock import ScheduleClock

# R58: how much of one attempt's log is spooled and stored: generous for any real agent, and
# 32 runners at it still fit the chart's 2 GiB /tmp.
DEFAULT_MAX_TRANSCRIPT_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True)
class LeaderElection:
    """The Lease through which replicas elect the one that acts, and this replica's name."""

    name: str
    namespace: str
    identity: str


@dataclass(frozen=True)
class CredentialsEndpoint:
    """Where the operator serves presigned URLs to phase sidecars.

    ``host`` and ``port`` are where it listens, alone (port 0: any free port, which a restart
    would not get again; a port another process holds stops the operator from starting);
    ``url`` the URL pods use (None: ``https://<host>:<bound port>``, so an operator outside the
    cluster listens on an address its pods reach, such as the node network's gateway);
    without ``tls_cert`` and ``tls_key`` the certificate is derived from the operator's
    secret, and clients trust ``tls_ca`` (default: the certificate itself).
    """

    host: str = "127.0.0.1"
    port: int = 0
    url: str | None = None
    tls_cert: Path | None = None
    tls_key: Path | None = None
    tls_ca: Path | None = None


@dataclass(frozen=True)
class OperatorConfig:
    """How the operator runs phases.

    ``pending_timeout`` is how long a phase's pod may wait for its agent to
    start while something stands in its way (an image that cannot be pulled, a
    missing Secret, no room to schedule, a sidecar that keeps failing: R61)
    before the phase fails; ``cancel_grace_seconds`` is
    the grace period a cancelled phase's pod gets; ``image`` is the operator's
    own image, which phase pods run as their input fetcher and harvester;
    ``namespaces`` are the watched namespaces (empty: every namespace);
    ``leader_election`` None means this replica runs alone and always leads.
    """

    pending_timeout: float = 300.0
    cancel_grace_seconds: int = 30
    image: str = "ghcr.io/agentjobs/agentjobs:0.1.0"
    harvest_interval_seconds: float = 10.0
    # How much each phase may store (files, bytes per file, bytes per phase).
    harvest_limits: HarvestLimits = DEFAULT_HARVEST_LIMITS
    # R58: the bytes of each attempt's (or grader's) log spooled and stored; the rest is read.
    max_transcript_bytes: int = DEFAULT_MAX_TRANSCRIPT_BYTES
    security: PodSecurity = field(default_factory=PodSecurity)
    namespaces: tuple[str, ...] = ()
    leader_election: LeaderElection | None = None
    credentials: CredentialsEndpoint = field(default_factory=CredentialsEndpoint)
    # Buckets (or shell patterns) an Execution may name besides the operator's own.
    allowed_buckets: tuple[str, ...] = ()
    # Requests and limits of the harvester and the input fetcher in every phase pod.
    sidecar_resources: ResourceRequirements | None = None
    # Secrets (by name) for pulling images into phase pods, e.g. the sidecars' own.
    image_pull_secrets: tuple[str, ...] = ()
    # R49: URL patterns (--webhook-allow) the operator may call, and the one Secret name per
    # namespace it reads signing keys from (None: webhooks are off, every notify refused).
    webhook_allow: tuple[str, ...] = ()
    # R63: shell-style globs of the plain-http repository URLs a phase may clone (https
    # always may): http sends the credentials in the clear.
    git_allow: tuple[str, ...] = ()
    webhook_secret_name: str | None = None
    # R51: the wait after a webhook's first failed attempt, doubled after each next one.
    webhook_backoff_seconds: float = 10.0
    # An Execution without its own ttlSecondsAfterFinished is deleted this long after it
    # finished (None: kept until someone deletes it).
    default_ttl: int | None = None
    # R68: what each model's tokens cost, for CLIs that report tokens only (None: no table).
    price_table: PriceTable | None = None
    # R74: the time CronExecutions run by (tests make it run faster: --cron-clock-speed).
    schedule_clock: ScheduleClock = field(default_factory=ScheduleClock)
