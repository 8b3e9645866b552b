# syntax=docker/dockerfile:1
# One image for the operator (`agentjobs run`) and for the containers it adds to phase pods:
# the input fetcher (`agentjobs fetch-inputs`) and the artifact harvester (`agentjobs harvest`).
#   docker build -t ghcr.io/agentjobs/agentjobs:0.1.0 .

ARG PYTHON_IMAGE=python:3.11.11-slim-bookworm

# Build a wheel of the package and install it, with its dependencies, into a virtualenv.
FROM ${PYTHON_IMAGE} AS build
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_NO_CACHE_DIR=1 \
    PYTHONDONTWRITEBYTECODE=1
WORKDIR /src
RUN python -m venv /opt/agentjobs
COPY pyproject.toml README.md ./
COPY operator ./operator
RUN python -m pip wheel --no-deps --wheel-dir /wheels . \
 && /opt/agentjobs/bin/pip install /wheels/*.whl \
 && /opt/agentjobs/bin/agentjobs --help > /dev/null

# The runtime: the virtualenv only, no compiler, no pip cache, a non-root user.
FROM ${PYTHON_IMAGE}
LABEL org.opencontainers.image.title="agentjobs" \
      org.opencontainers.image.description="Kubernetes operator for AI-agent jobs" \
      org.opencontainers.image.licenses="Apache-2.0"
RUN groupadd --system --gid 65532 agentjobs \
 && useradd --system --uid 65532 --gid 65532 --home-dir /nonexistent --no-create-home \
      --shell /usr/sbin/nologin agentjobs
# git for the harvester's last sync, which saves a phase's unpushed commits as patches (R52).
RUN apt-get update \
 && apt-get install -y --no-install-recommends git \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /opt/agentjobs /opt/agentjobs
ENV PATH=/opt/agentjobs/bin:$PATH \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1
# Numeric, so that the kubelet can check runAsNonRoot.
USER 65532:65532
WORKDIR /tmp
ENTRYPOINT ["agentjobs"]
CMD ["run"]
