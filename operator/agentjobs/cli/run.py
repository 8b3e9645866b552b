"""`agentjobs run`: start the operator."""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import secrets
import socket
import sys
from datetime import UTC, datetime
from pathlib import Path

from agentjobs.adapters import log_records, metrics
from agentjobs.adapters.log_records import LogFormat
from agentjobs.cli import option_types
from agentjobs.contract.artifacts.bucket_policy import ALLOWED_BUCKETS_FLAG
from agentjobs.kube.pod_security import RESTRICTED_CONTAINER, RESTRICTED_POD, PodSecurity
from agentjobs.models.kubernetes import PodSecurityContext, ResourceRequirements, SecurityContext
from agentjobs.models.output import HarvestLimits
from agentjobs.runtime.config import CredentialsEndpoint, LeaderElection, OperatorConfig
from agentjobs.runtime.schedule_clock import ScheduleClock

HELP = "run the operator"
DESCRIPTION = "Watch Executions and run their phases (kopf underneath)."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    scope = parser.add_mutually_exclusive_group()
    scope.add_argument(
        "--namespace", "-n", action="append", metavar="NS", help="watch this namespace (repeatable)"
    )
    scope.add_argument(
        "--all-namespaces", "-A", action="store_true", help="watch every namespace (the default)"
    )
    parser.add_argument(
        "--pending-timeout",
        type=float,
        default=OperatorConfig.pending_timeout,
        metavar="SECONDS",
        help="how long a phase's pod may wait for its agent to start while something "
        "stands in its way (an image pull, a missing Secret, no room) before the phase "
        "fails (default: %(default)s)",
    )
    parser.add_argument(
        "--cancel-grace-seconds",
        type=int,
        default=OperatorConfig.cancel_grace_seconds,
        metavar="SECONDS",
        help="grace period of a cancelled phase's pod (default: %(default)s)",
    )
    parser.add_argument(
        "--image",
        default=os.environ.get("AGENTJOBS_IMAGE", OperatorConfig.image),
        help="the operator's own image, run in phase pods as the input fetcher and the "
        "harvester (default: $AGENTJOBS_IMAGE or %(default)s)",
    )
    parser.add_argument(
        "--harvest-interval",
        type=float,
        default=OperatorConfig.harvest_interval_seconds,
        metavar="SECONDS",
        help="seconds between the harvester's periodic syncs (default: %(default)s)",
    )
    limits = OperatorConfig.harvest_limits
    for flag, default, what in (
        ("--max-files", limits.max_files, "files"),
        ("--max-file-bytes", limits.max_file_bytes, "bytes per file"),
        ("--max-phase-bytes", limits.max_phase_bytes, "bytes in all"),
    ):
        parser.add_argument(
            flag,
            type=option_types.positive,
            default=default,
            metavar="N",
            help=f"each phase stores at most N {what}; the rest of its output is recorded as "
            "skipped, with a warning (default: %(default)s)",
        )
    parser.add_argument(
        "--max-transcript-bytes",
        type=option_types.positive,
        default=OperatorConfig.max_transcript_bytes,
        metavar="N",
        help="each attempt's agent (or grader) log is stored up to N bytes and marked "
        "truncated past them; the verdict is still read from all of it (default: %(default)s)",
    )
    parser.add_argument(
        "--pod-security-context",
        type=option_types.json_model(PodSecurityContext),
        default=RESTRICTED_POD,
        metavar="JSON",
        help="phase pods' securityContext unless a phase overrides fields of it "
        "(default: the restricted profile)",
    )
    parser.add_argument(
        "--security-context",
        type=option_types.json_model(SecurityContext),
        default=RESTRICTED_CONTAINER,
        metavar="JSON",
        help="phase containers' securityContext unless a phase overrides fields of it "
        "(default: the restricted profile)",
    )
    parser.add_argument(
        "--sidecar-resources",
        type=option_types.json_model(ResourceRequirements),
        metavar="JSON",
        help="requests and limits of the harvester and input fetcher in phase pods, e.g. "
        '\'{"limits": {"cpu": "500m", "memory": "256Mi"}}\' (default: none)',
    )
    parser.add_argument(
        "--image-pull-secret",
        action="append",
        default=[],
        metavar="NAME",
        help="a Secret in the phase's namespace for pulling phase pods' images, the sidecars' "
        "among them (repeatable)",
    )
    parser.add_argument(
        "--leader-election",
        metavar="NAME",
        help="elect the one acting replica through the coordination.k8s.io Lease of this name "
        "(for more than one replica); without it the operator runs alone and always acts",
    )
    parser.add_argument(
        "--leader-election-namespace",
        metavar="NS",
        help="the Lease's namespace (default: $POD_NAMESPACE, else the first --namespace, "
        "else default)",
    )
    parser.add_argument(
        "--liveness",
        metavar="URL",
        help="serve a liveness endpoint there, e.g. http://0.0.0.0:8080/healthz",
    )
    parser.add_argument(
        ALLOWED_BUCKETS_FLAG,
        action="append",
        default=[],
        metavar="NAME",
        help="a bucket (or shell pattern, e.g. 'team-*') Executions may name in "
        "spec.artifacts.bucket besides the operator's own (AGENTJOBS_S3_BUCKET); repeatable",
    )
    webhooks = parser.add_argument_group(
        "completion webhooks", "spec.notify[] of Executions: which receivers the operator calls"
    )
    webhooks.add_argument(
        "--webhook-allow",
        action="append",
        type=option_types.webhook_pattern,
        default=[],
        metavar="PATTERN",
        help="a shell-style glob over the whole URL the operator may call, e.g. "
        "'https://hooks.example.com/*' (repeatable; http only where a pattern says http://; "
        "loopback only where a pattern names it, e.g. 'http://127.0.0.1:*/*'; link-local "
        "and metadata addresses never, in any IPv6 form)",
    )
    parser.add_argument(
        "--price-table",
        type=option_types.price_table,
        metavar="FILE",
        help="what each model's tokens cost (YAML: models: {NAME: {input, output, cacheRead, "
        "cacheWrite}} in dollars per million tokens), for agent CLIs that report tokens only "
        "(R68); a model it does not list has no cost",
    )
    parser.add_argument(
        "--git-allow",
        action="append",
        default=[],
        metavar="PATTERN",
        help="a shell-style glob over a plain-http repository URL phases may clone and push "
        "to, e.g. 'http://127.0.0.1:*/*' (repeatable; https needs none: http sends the "
        "credentials in the clear)",
    )
    webhooks.add_argument(
        "--webhook-secret-name",
        metavar="NAME",
        help="the one Secret name, in each Execution's namespace, the operator reads signing "
        "keys from (the RBAC allows get on it alone); without it webhooks are off and every "
        "notify is refused",
    )
    webhooks.add_argument(
        "--webhook-backoff-seconds",
        type=option_types.positive_float,
        default=OperatorConfig.webhook_backoff_seconds,
        metavar="SECONDS",
        help="wait after a webhook's first failed attempt, doubled after each next one up to "
        "1 h, for 24 h in all (default: %(default)s)",
    )
    clock = parser.add_argument_group("schedule clock (R74; for tests)")
    clock.add_argument(
        "--cron-clock-speed",
        type=option_types.positive_float,
        default=1.0,
        metavar="TIMES",
        help="run CronExecutions' clock this many times as fast as the wall clock, counting "
        "from --cron-clock-start (default: %(default)s, the wall clock)",
    )
    clock.add_argument(
        "--cron-clock-start",
        type=option_types.moment,
        metavar="TIME",
        help="the real moment a fast clock counts from: give every operator process of a "
        "test the same one (default: when this one starts)",
    )
    credentials = parser.add_argument_group(
        "credentials endpoint",
        "phase sidecars hold no storage credentials: they trade a per-attempt token for "
        "presigned URLs at this HTTPS endpoint of the operator",
    )
    credentials.add_argument(
        "--credentials-listen",
        type=option_types.listen_address,
        default=(CredentialsEndpoint.host, CredentialsEndpoint.port),
        metavar="HOST:PORT",
        help="the address to serve it on, held by this process alone: a port already taken "
        "stops the operator (default: "
        f"{CredentialsEndpoint.host}:{CredentialsEndpoint.port}, a free port on loopback; an "
        "operator outside the cluster needs an address its pods reach)",
    )
    credentials.add_argument(
        "--credentials-url",
        metavar="URL",
        help="the URL phase pods use to reach it, e.g. https://agentjobs.agentjobs.svc:8443 "
        "(default: https://HOST:PORT of --credentials-listen)",
    )
    credentials.add_argument(
        "--credentials-tls-cert",
        type=Path,
        metavar="FILE",
        help="its certificate (PEM); without it and --credentials-tls-key, one is derived "
        "from the operator's S3 secret key, the same on every replica and restart",
    )
    credentials.add_argument("--credentials-tls-key", type=Path, metavar="FILE")
    credentials.add_argument(
        "--credentials-tls-ca",
        type=Path,
        metavar="FILE",
        help="the CA phase pods trust for it (default: the certificate itself)",
    )
    parser.add_argument(
        "--metrics-port",
        type=option_types.positive,
        metavar="PORT",
        help="serve Prometheus metrics on http://0.0.0.0:PORT/metrics (default: none)",
    )
    parser.add_argument(
        "--ttl-seconds-after-finished",
        type=option_types.non_negative,
        metavar="SECONDS",
        help="delete a finished Execution, with everything it owns, this long after it "
        "finished, unless it sets its own ttlSecondsAfterFinished (default: never)",
    )
    parser.add_argument("--verbose", "-v", action="store_true", help="log at debug level")
    parser.add_argument(
        "--log-format",
        type=LogFormat,
        choices=list(LogFormat),
        default=LogFormat.TEXT,
        help="text lines, or one JSON object per line, each line of a phase with its "
        "namespace, execution, phase and attempt (default: %(default)s)",
    )


def credentials_endpoint(args: argparse.Namespace) -> CredentialsEndpoint:
    if (args.credentials_tls_cert is None) != (args.credentials_tls_key is None):
        raise SystemExit("agentjobs: error: give --credentials-tls-cert and -key together")
    host, port = args.credentials_listen
    return CredentialsEndpoint(
        host=host,
        port=port,
        url=args.credentials_url,
        tls_cert=args.credentials_tls_cert,
        tls_key=args.credentials_tls_key,
        tls_ca=args.credentials_tls_ca,
    )


def leader_election(args: argparse.Namespace) -> LeaderElection | None:
    """The Lease and this replica's identity, from the flags; None: no leader election."""
    if args.leader_election is None:
        return None
    namespace = (
        args.leader_election_namespace
        or os.environ.get("POD_NAMESPACE")
        or (args.namespace or ["default"])[0]
    )
    # The pod's name says which replica leads; the suffix tells a restarted one from its past.
    identity = f"{os.environ.get('HOSTNAME') or socket.gethostname()}_{secrets.token_hex(4)}"
    return LeaderElection(name=args.leader_election, namespace=namespace, identity=identity)


def schedule_clock(args: argparse.Namespace) -> ScheduleClock:
    if args.cron_clock_speed == 1.0:
        return ScheduleClock()
    return ScheduleClock(args.cron_clock_start or datetime.now(UTC), args.cron_clock_speed)


def run(args: argparse.Namespace) -> int:
    log_records.configure(args.log_format, verbose=args.verbose)
    if args.metrics_port is not None:
        try:
            metrics.serve(args.metrics_port)
        except OSError as error:
            print(
                f"agentjobs: error: the metrics endpoint cannot listen on port "
                f"{args.metrics_port}: {error.strerror or error}; another process (another "
                "operator?) may hold it: give --metrics-port a free port",
                file=sys.stderr,
            )
            return 1
    if not args.verbose:
        logging.getLogger("kopf.objects").setLevel(logging.WARNING)  # one line per event is noise
    config = OperatorConfig(
        pending_timeout=args.pending_timeout,
        cancel_grace_seconds=args.cancel_grace_seconds,
        image=args.image,
        harvest_interval_seconds=args.harvest_interval,
        harvest_limits=HarvestLimits(
            max_files=args.max_files,
            max_file_bytes=args.max_file_bytes,
            max_phase_bytes=args.max_phase_bytes,
        ),
        max_transcript_bytes=args.max_transcript_bytes,
        security=PodSecurity(pod=args.pod_security_context, container=args.security_context),
        sidecar_resources=args.sidecar_resources,
        image_pull_secrets=tuple(args.image_pull_secret),
        namespaces=tuple(args.namespace or ()),
        leader_election=leader_election(args),
        credentials=credentials_endpoint(args),
        allowed_buckets=tuple(args.allowed_bucket),
        webhook_allow=tuple(args.webhook_allow),
        git_allow=tuple(args.git_allow),
        webhook_secret_name=args.webhook_secret_name,
        webhook_backoff_seconds=args.webhook_backoff_seconds,
        default_ttl=args.ttl_seconds_after_finished,
        price_table=args.price_table,
        schedule_clock=schedule_clock(args),
    )
    # Imported here, not at the top: kopf is heavy, and the sidecar commands must start fast.
    import kopf

    from agentjobs.controllers import registration
    from agentjobs.runtime import garbage_collection

    assert registration.start is not None  # importing the module registers the handlers
    garbage_collection.tune()
    try:
        asyncio.run(
            kopf.operator(
                # Never kopf's peering: it pauses kopf's handlers but not the runners they start.
                standalone=True,
                clusterwide=not args.namespace,
                namespaces=args.namespace or [],
                memo=kopf.Memo(config=config),
                liveness_endpoint=args.liveness,
            )
        )
    except Exception as error:
        # kopf raises its own (private) ActivityError from a startup handler's PermanentError:
        # the operator cannot start (the credentials endpoint's port is taken).
        if not isinstance(error.__cause__, kopf.PermanentError):
            raise
        print(f"agentjobs: error: {error.__cause__}", file=sys.stderr)
        return 1
    return 0
