#!/bin/sh
# Codex on the phase's prompt, its events (`exec --json`) on stdout, its exit code ours.
#
# From the phase's env: OPENAI_API_KEY (from a Secret), and optionally OPENAI_BASE_URL
# (default https://api.openai.com/v1), CODEX_MODEL (default gpt-5.5) and
# CODEX_MAX_RETRIES (default 4, for requests and for dropped streams). With no
# $CODEX_HOME/config.toml of the phase's own, one is written from them. Arguments are
# passed on to `codex exec`.
set -eu
prompt_file=${AGENTJOBS_PROMPT_FILE:?the operator sets AGENTJOBS_PROMPT_FILE}
export CODEX_HOME="${CODEX_HOME:-$HOME/.codex}"
mkdir -p "$CODEX_HOME"
if [ ! -e "$CODEX_HOME/config.toml" ]; then
    # No update check or analytics; no plugins, whose start fetches a repository from GitHub.
    cat > "$CODEX_HOME/config.toml" <<TOML
model = "${CODEX_MODEL:-gpt-5.5}"
model_provider = "agentjobs"
check_for_update_on_startup = false

[analytics]
enabled = false

[features]
plugins = false

[model_providers.agentjobs]
name = "OpenAI"
base_url = "${OPENAI_BASE_URL:-https://api.openai.com/v1}"
wire_api = "responses"
env_key = "OPENAI_API_KEY"
request_max_retries = ${CODEX_MAX_RETRIES:-4}
stream_max_retries = ${CODEX_MAX_RETRIES:-4}
TOML
fi
# The pod is the sandbox: Codex's own needs kernel features a restricted pod lacks. The
# workspace need not be a git checkout. `-` reads the prompt from stdin.
exec codex exec --json --skip-git-repo-check --dangerously-bypass-approvals-and-sandbox "$@" - \
    < "$prompt_file"
