#!/bin/sh
# Claude Code on the phase's prompt, its events (stream-json) on stdout, its exit code ours.
#
# From the phase's env: ANTHROPIC_API_KEY (from a Secret), and optionally ANTHROPIC_BASE_URL,
# ANTHROPIC_MODEL and CLAUDE_CODE_MAX_RETRIES, which Claude Code reads itself. Arguments are
# passed on to `claude`.
set -eu
prompt_file=${AGENTJOBS_PROMPT_FILE:?the operator sets AGENTJOBS_PROMPT_FILE}
# The pod is the sandbox, so the agent's tools run unasked; Claude Code allows that only to
# a user other than root, which the image's is.
exec claude -p --output-format stream-json --verbose --dangerously-skip-permissions "$@" \
    < "$prompt_file"
