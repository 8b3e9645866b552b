"""A process node for the devcluster: it stands in for the kubelet.

Every container of a pod bound to this node runs as a local process in its own
mount (and UTS) namespace; the node registers itself, keeps its Lease fresh,
reports pod status like the kubelet and serves container logs over the
kubelet's HTTPS endpoint. Run it with `python -m devcluster.node --help`.

Modules: `node` (registration, heartbeats, pod watch), `pod`/`podbase` (one
worker per pod: the sync loop, status writes), `containers`, `envvars`,
`volumes`, `images` (turning specs into a launch), `process` and `launch`
(spawning, cgroups, namespaces), `logs` and `server` (log files and the log
endpoint), `status` (the kubelet's status rules, pure), `state` (per-pod state
on disk so a restarted node does not lose track).

State layout under `--state-dir`: `pods/<uid>/state.json` (what the node knows),
`pods/<uid>/volumes/<volume>/` (volume contents), `pods/<uid>/logs/<container>/
<instance>.log` (CRI-style log lines; instance = restartCount).
"""
