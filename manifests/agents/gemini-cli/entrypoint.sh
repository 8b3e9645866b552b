#!/bin/sh
# Gemini CLI on the phase's prompt, its events (stream-json) on stdout, its exit code ours.
#
# From the phase's env: GEMINI_API_KEY (from a Secret), and optionally
# GOOGLE_GEMINI_BASE_URL and GEMINI_MODEL, which Gemini CLI reads itself, and
# GEMINI_MAX_ATTEMPTS (default 3). With no $HOME/.gemini/settings.json of the phase's own,
# one is written. Arguments are passed on to `gemini`.
set -eu
prompt_file=${AGENTJOBS_PROMPT_FILE:?the operator sets AGENTJOBS_PROMPT_FILE}
settings="$HOME/.gemini/settings.json"
if [ ! -e "$settings" ]; then
    mkdir -p "$(dirname "$settings")"
    # An API key, which is what lets a base URL of one's own be used; no telemetry, usage
    # statistics or updates.
    cat > "$settings" <<JSON
{
  "security": {"auth": {"selectedType": "gemini-api-key"}},
  "general": {"maxAttempts": ${GEMINI_MAX_ATTEMPTS:-3}, "disableAutoUpdate": true},
  "telemetry": {"enabled": false},
  "privacy": {"usageStatisticsEnabled": false}
}
JSON
fi
# The pod is the sandbox, so tools run unasked (--yolo). With stdin not a terminal, Gemini
# CLI runs once on what it reads there.
exec gemini --output-format stream-json --yolo "$@" < "$prompt_file"
