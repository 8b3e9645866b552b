# The commands a newcomer and CI run. Everything installs into .venv from PyPI.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: install example test lint unit chaos

$(BIN)/agentjobs: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $@

install: $(BIN)/agentjobs

# Read a shipped agent log and print the verdict as JSON.
example: install
	$(BIN)/agentjobs report manifests/examples/transcripts/fix-parser.log

lint: install
	$(BIN)/ruff check operator devcluster tests benchmarks
	$(BIN)/ruff format --check operator devcluster tests benchmarks
	$(BIN)/mypy operator
	$(BIN)/mypy --strict devcluster
	$(BIN)/lint-imports

unit: install
	$(BIN)/pytest tests/unit

# Two lanes: most tests wait on pods far more than they compute, so two workers share one
# cluster (each test has its own namespace and operator); then, on a cluster of their own, the
# tests that take it down, change its nodes or measure latency, one at a time.
test: lint
	$(BIN)/pytest -n 2 --dist loadfile -m "not exclusive"
	$(BIN)/pytest -m exclusive

# The chaos suite at full strength: 100 operator kills over 50 Executions, with API server and
# S3 restarts, cut log streams and deletions from outside (make test runs 10 kills).
chaos: install
	AGENTJOBS_CHAOS_KILLS=100 AGENTJOBS_CHAOS_EXECUTIONS=50 $(BIN)/pytest -s tests/chaos

# --- Install and try it (issue 6) ------------------------------------------------------------
.PHONY: demo demo-outcome chart manifests kind-up

# The whole path on this machine, no Docker: the local control plane and S3 store (built the
# first time, which needs `go`), the CRDs and the chart's RBAC, the operator with that RBAC,
# and the multi-phase example with the example agent, watched live. The cluster stays up.
demo: install
	$(BIN)/python -m devcluster.demo

# The outcome example (manifests/examples/outcome.yaml) the same way: each attempt graded by the
# example grader in its own pod, each evaluation shown as it starts, runs and ends.
demo-outcome: install
	$(BIN)/python -m devcluster.demo outcome

# Lint the chart, validate what it renders against the Kubernetes schemas, check its values.
chart: install
	$(BIN)/pytest -q tests/chart

# Everything generated from the models and the chart, in one command: crds/ (`agentjobs crds`),
# the chart's CRD templates and Argo CD patch, and manifests/install.yaml (for users without Helm).
manifests: install
	$(BIN)/agentjobs crds
	$(BIN)/python -m devcluster.manifests

# The same with Docker and kind: a kind cluster, both images built and loaded, MinIO from its
# Helm chart, the agentjobs chart, and the example. Needs docker, kind, helm and kubectl.
KIND_CLUSTER ?= agentjobs
IMAGE ?= ghcr.io/agentjobs/agentjobs:0.1.0
AGENT_IMAGE ?= ghcr.io/agentjobs/example-agent:0.1.0
S3_ACCESS_KEY ?= agentjobs
S3_SECRET_KEY ?= agentjobs-example-only

kind-up:
	kind get clusters | grep -qx '$(KIND_CLUSTER)' || kind create cluster --name '$(KIND_CLUSTER)'
	kubectl config use-context 'kind-$(KIND_CLUSTER)'
	docker build -t '$(IMAGE)' .
	docker build -t '$(AGENT_IMAGE)' manifests/examples/agent
	kind load docker-image --name '$(KIND_CLUSTER)' '$(IMAGE)' '$(AGENT_IMAGE)'
	helm repo add minio https://charts.min.io/ --force-update
	helm upgrade --install minio minio/minio --namespace minio --create-namespace --wait \
	  --set mode=standalone,replicas=1,persistence.enabled=false \
	  --set resources.requests.memory=256Mi \
	  --set rootUser='$(S3_ACCESS_KEY)',rootPassword='$(S3_SECRET_KEY)'
	kubectl create namespace agentjobs-system --dry-run=client -o yaml | kubectl apply -f -
	kubectl -n agentjobs-system create secret generic agentjobs-s3 --dry-run=client -o yaml \
	  --from-literal=accessKey='$(S3_ACCESS_KEY)' --from-literal=secretKey='$(S3_SECRET_KEY)' \
	  | kubectl apply -f -
	helm upgrade --install agentjobs charts/agentjobs --namespace agentjobs-system --wait \
	  --set image.repository='$(firstword $(subst :, ,$(IMAGE)))' \
	  --set image.tag='$(lastword $(subst :, ,$(IMAGE)))' \
	  --set s3.endpoint=http://minio.minio.svc:9000,s3.existingSecret=agentjobs-s3
	kubectl apply -n default -f manifests/examples/multi-phase.yaml
	kubectl wait -n default --for=condition=Finished execution/fix-flaky-test --timeout=300s
	kubectl get -n default executions,phases
	@echo 'Delete it all with: kind delete cluster --name $(KIND_CLUSTER)'
