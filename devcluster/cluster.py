"""Bring the local cluster up, take it down, and describe how to reach it."""

from __future__ import annotations

import contextlib
import fcntl
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from typing import TextIO

from devcluster import dns, images, kwok, processes, stores
from devcluster.build import all_binary_names, ensure_binaries, link_unversioned
from devcluster.components import (
    ALL,
    APISERVER,
    CONTROLLER_MANAGER,
    ETCD,
    KUBECONFIG_CLIENTS,
    LEAVES,
    S3,
    Component,
)
from devcluster.kubelet import node as real_node
from devcluster.layout import (
    APISERVER_URL,
    REAL_NODE_NAME,
    REPO_ROOT,
    Layout,
    default_layout,
    s3_credentials,
)
from devcluster.pki import ensure_pki, write_kubeconfig
from devcluster.probes import api_get

START_TIMEOUT_SECONDS = 120.0
# A stopped MinIO's port has been seen still listening just after its process was gone, and a
# restart then refused to start it; a stop waits this long for its ports to close.
PORT_RELEASE_SECONDS = 5.0


class ClusterError(RuntimeError):
    """The cluster could not be brought into the requested state."""


def environment(layout: Layout | None = None, store: str | None = None) -> dict[str, str]:
    """The variables a client needs to use the cluster, with PATH already extended; the S3
    ones point at `store`, by default the first store `up` was asked for."""
    layout = layout or default_layout()
    credentials = s3_credentials(layout)
    store = store or stores.chosen_stores(layout)[0]
    return {
        "KUBECONFIG": str(layout.admin_kubeconfig),
        "PATH": f"{layout.bin}{os.pathsep}{os.environ.get('PATH', '')}",
        "AGENTJOBS_S3_ENDPOINT": stores.S3_ENDPOINTS[store],
        "AGENTJOBS_S3_ACCESS_KEY": credentials.access_key,
        "AGENTJOBS_S3_SECRET_KEY": credentials.secret_key,
    }


def _process_environment(layout: Layout, component: Component) -> dict[str, str]:
    env = dict(os.environ)
    env.update(component.environment(layout))
    env[processes.MARKER_VARIABLE] = str(layout.root)
    env.pop("KUBECONFIG", None)
    return env


def _log_tail(layout: Layout, component: Component, lines: int = 15) -> str:
    try:
        text = layout.log_file(component.name).read_text(errors="replace")
    except OSError:
        return "(no log)"
    return "\n".join(text.splitlines()[-lines:])


def _wait_until(
    description: str, check: Callable[[], bool], layout: Layout, component: Component
) -> None:
    deadline = time.monotonic() + START_TIMEOUT_SECONDS
    while not check():
        if processes.alive(layout.pid_file(component.name)) is None:
            raise ClusterError(
                f"{component.name} exited while waiting for {description}; "
                f"last lines of {layout.log_file(component.name)}:\n" + _log_tail(layout, component)
            )
        if time.monotonic() > deadline:
            raise ClusterError(
                f"timed out waiting for {description}; see {layout.log_file(component.name)}"
            )
        time.sleep(0.25)


def _wait_healthy(layout: Layout, component: Component) -> None:
    _wait_until(f"{component.name} health", lambda: component.healthy(layout), layout, component)


def _prepare(layout: Layout, log: TextIO, s3: tuple[str, ...]) -> None:
    # A store's binary is named after it; one not started need not be built (MinIO's first
    # build takes minutes), nor kwok until the simulated nodes are asked for.
    unchosen = {name for name in stores.S3_STORES if name not in s3} | {kwok.KWOK.name}
    binaries = ensure_binaries(log, [name for name in all_binary_names() if name not in unchosen])
    link_unversioned(binaries, layout.bin)
    ensure_pki(layout.pki, LEAVES)
    for client in KUBECONFIG_CLIENTS:
        write_kubeconfig(layout.kubeconfig(client), APISERVER_URL, layout.pki, client)
    s3_credentials(layout)
    real_node.prepare(layout, images.PAUSE_IMAGE)


def _start(layout: Layout, component: Component, log: TextIO) -> None:
    if processes.alive(layout.pid_file(component.name)) is not None:
        return
    taken = processes.listening_ports(component.ports)
    if taken:
        raise ClusterError(
            f"cannot start {component.name}: port(s) {sorted(taken)} already in use by a "
            "process without a pid file here; `python -m devcluster down` stops strays of this "
            "cluster, anything else must be stopped by hand"
        )
    print(f"starting {component.name}", file=log, flush=True)
    processes.start(
        component.argv(layout),
        pid_file=layout.pid_file(component.name),
        log_file=layout.log_file(component.name),
        env=_process_environment(layout, component),
        cwd=REPO_ROOT,
    )


def _has_default_service_account(layout: Layout) -> bool:
    return api_get(layout, "/api/v1/namespaces/default/serviceaccounts/default") is not None


def _has_root_ca_config_map(layout: Layout) -> bool:
    return api_get(layout, "/api/v1/namespaces/default/configmaps/kube-root-ca.crt") is not None


@contextlib.contextmanager
def _exclusive(layout: Layout) -> Iterator[None]:
    """Serialise `up` and `down`, e.g. two test sessions starting the same cluster at once."""
    layout.root.mkdir(parents=True, exist_ok=True)
    with open(layout.root / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def up(
    layout: Layout | None = None,
    log: TextIO = sys.stderr,
    s3: Iterable[str] | None = None,
    *,
    simulated_nodes: bool = False,
) -> None:
    """Build what is missing, start what is not running, and wait until all of it is ready.

    `s3` names the S3 stores to start besides those already chosen since the last `down`
    (by default the chosen ones, or versitygw when none is). `simulated_nodes` also starts
    the kwok nodes (devcluster.kwok).
    """
    layout = layout or default_layout()
    with _exclusive(layout):
        chosen = stores.choose_stores(layout, stores.chosen_stores(layout) if s3 is None else s3)
        _up(layout, log, chosen)
        if simulated_nodes:
            _up_simulated_nodes(layout, log)


def up_simulated_nodes(layout: Layout | None = None, log: TextIO = sys.stderr) -> None:
    """Start the kwok nodes beside a running cluster (building kwok the first time)."""
    layout = layout or default_layout()
    with _exclusive(layout):
        _up_simulated_nodes(layout, log)


def _up_simulated_nodes(layout: Layout, log: TextIO) -> None:
    link_unversioned(ensure_binaries(log, ["kwok"]), layout.bin)
    for component in kwok.COMPONENTS:
        _start(layout, component, log)
    for component in kwok.COMPONENTS:
        _wait_healthy(layout, component)
    kwok.register_nodes(layout)
    _wait_until(
        "the simulated nodes to be Ready", lambda: kwok.nodes_ready(layout), layout, kwok.KWOK
    )


def _up(layout: Layout, log: TextIO, s3: tuple[str, ...]) -> None:
    _prepare(layout, log, s3)
    # Each of these needs the one before it to answer.
    for component in (ETCD, APISERVER):
        _start(layout, component, log)
        _wait_healthy(layout, component)
    _forget_nodes(layout)
    unchosen = [store for name, store in stores.S3_STORES.items() if name not in s3]
    rest = [c for c in ALL if c not in (ETCD, APISERVER, *unchosen)]
    for component in rest:
        _start(layout, component, log)
    for component in rest:
        _wait_healthy(layout, component)
    _wait_until(
        "the default service account",
        lambda: _has_default_service_account(layout),
        layout,
        CONTROLLER_MANAGER,
    )
    _wait_until(
        "the kube-root-ca.crt config map",
        lambda: _has_root_ca_config_map(layout),
        layout,
        CONTROLLER_MANAGER,
    )
    _up_real_node(layout, log)
    print(f"cluster is up; KUBECONFIG={layout.admin_kubeconfig}", file=log, flush=True)


def _forget_nodes(layout: Layout) -> None:
    """Delete the Node objects whose node is not running, which an earlier run (or an older
    checkout, with other nodes) registered, so that each registers afresh with the taints and
    labels it has now: a kubelet never changes them on a Node it finds."""
    running = {
        name
        for names, component in (
            ((REAL_NODE_NAME,), real_node.KUBELET),
            (kwok.SIMULATED_NODES, kwok.KWOK),
        )
        if processes.alive(layout.pid_file(component.name)) is not None
        for name in names
    }
    kubectl = [str(layout.bin / "kubectl")]
    env = {"KUBECONFIG": str(layout.admin_kubeconfig)}
    listed = subprocess.run(
        [*kubectl, "get", "nodes", "-o", "name"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    stale = [n for n in listed.stdout.split() if n.removeprefix("node/") not in running]
    if stale:
        subprocess.run([*kubectl, "delete", *stale], env=env, capture_output=True, check=True)


def _up_real_node(layout: Layout, log: TextIO) -> None:
    archives = images.node_images(log)
    _start(layout, real_node.CONTAINERD, log)
    _wait_healthy(layout, real_node.CONTAINERD)
    real_node.import_images(layout, archives, log)
    dns.grant_reads(layout)
    for component in (dns.DNS, real_node.KUBELET, real_node.KUBE_PROXY):
        _start(layout, component, log)
    for component in (dns.DNS, real_node.KUBELET, real_node.KUBE_PROXY):
        _wait_healthy(layout, component)


# The real node's processes and the cluster DNS its pods use, in start order.
REAL_NODE_SERVICES = (dns.DNS, *real_node.COMPONENTS)

# The names `restart` takes: the short ones the chaos tests use, and every component's own.
RESTARTABLE = {
    "apiserver": APISERVER,
    "s3": S3,
    **{component.name: component for component in (*ALL, *REAL_NODE_SERVICES)},
}


def stop_component(name: str, layout: Layout | None = None, log: TextIO = sys.stderr) -> None:
    """Stop one component (SIGTERM, SIGKILL after its grace period); the rest keeps running."""
    layout = layout or default_layout()
    component = RESTARTABLE[name]
    with _exclusive(layout):
        print(f"stopping {component.name}", file=log, flush=True)
        _stop(layout, component)


def _stop(layout: Layout, component: Component) -> None:
    pid_file = layout.pid_file(component.name)
    running = processes.alive(pid_file) is not None
    processes.stop(pid_file, component.grace_seconds)
    if not running:
        return
    deadline = time.monotonic() + PORT_RELEASE_SECONDS
    while processes.listening_ports(component.ports) and time.monotonic() < deadline:
        time.sleep(0.1)


def start_component(name: str, layout: Layout | None = None, log: TextIO = sys.stderr) -> None:
    """Start one stopped component and wait until it is healthy."""
    layout = layout or default_layout()
    component = RESTARTABLE[name]
    with _exclusive(layout):
        _start(layout, component, log)
        _wait_healthy(layout, component)


def restart(name: str, layout: Layout | None = None, log: TextIO = sys.stderr) -> None:
    """Stop one component and start it again, waiting until it is healthy."""
    stop_component(name, layout, log)
    start_component(name, layout, log)


def down(layout: Layout | None = None, log: TextIO = sys.stderr) -> None:
    """Stop every process of the cluster, including strays that lost their pid files."""
    layout = layout or default_layout()
    with _exclusive(layout):
        _down(layout, log)


def _down(layout: Layout, log: TextIO) -> None:
    for component in reversed((*ALL, *kwok.COMPONENTS, *REAL_NODE_SERVICES)):
        pid_file = layout.pid_file(component.name)
        if processes.alive(pid_file) is not None:
            print(f"stopping {component.name}", file=log, flush=True)
        _stop(layout, component)
    real_node.stop_pods(layout)
    strays = processes.kill_marked(str(layout.root))
    if strays:
        print(f"killed {len(strays)} leftover process(es): {strays}", file=log, flush=True)
    real_node.teardown(layout)
    left = real_node.leftovers(layout)
    if left:
        raise ClusterError(f"the real node left behind after down: {'; '.join(left)}")
    still_listening = processes.listening_ports(
        p for c in (*ALL, *kwok.COMPONENTS) for p in c.ports
    )
    if still_listening:
        raise ClusterError(f"ports still listening after down: {sorted(still_listening)}")
    stores.forget_stores(layout)
    print("cluster is down", file=log, flush=True)


def status(layout: Layout | None = None, out: TextIO = sys.stdout) -> bool:
    """Print each process's state; True when every expected process runs and is healthy."""
    layout = layout or default_layout()
    all_healthy = True
    chosen = stores.chosen_stores(layout)
    for component in (*ALL, *REAL_NODE_SERVICES):
        pid = processes.alive(layout.pid_file(component.name))
        if pid is None and component.name in stores.S3_STORES and component.name not in chosen:
            print(f"{component.name:24} not chosen (up --s3 {component.name})", file=out)
            continue
        healthy = pid is not None and component.healthy(layout)
        all_healthy = all_healthy and healthy
        if pid is None:
            state = "stopped"
        else:
            state = f"running (pid {pid}), {'healthy' if healthy else 'NOT healthy'}"
        print(f"{component.name:24} {state}", file=out)
    for component in kwok.COMPONENTS:
        pid = processes.alive(layout.pid_file(component.name))
        if pid is None:
            print(f"{component.name:24} not started (up --kwok)", file=out)
            continue
        healthy = component.healthy(layout)
        all_healthy = all_healthy and healthy
        state = f"running (pid {pid}), {'healthy' if healthy else 'NOT healthy'}"
        print(f"{component.name:24} {state}", file=out)
    print(f"state directory: {layout.root}", file=out)
    return all_healthy
