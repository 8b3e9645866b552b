#!/bin/sh
# The example agent: how to wrap an agent CLI for agentjobs.
#
# The operator gives every phase's agent container:
#   AGENTJOBS_PROMPT_FILE   the prompt, followed by the instruction to end with a TASK_RESULT block
#   AGENTJOBS_OUTPUT_DIR    where the deliverable goes (/workspace/artifacts/output); the
#                           harvester stores everything in it as the phase's artifacts
#   AGENTJOBS_PHASE, AGENTJOBS_EXECUTION, AGENTJOBS_TRANSCRIPT_FORMAT
# and, from the second phase on, the previous phase's artifacts under
# /workspace/artifacts/input. Whatever the agent prints is its transcript: the operator reads
# it live and takes the verdict from the TASK_RESULT block that must come last.
#
# EXAMPLE_AGENT_PACE (seconds, default 1) slows the stand-in down so progress can be watched.
set -eu

# `agent.sh grade` runs the example grader installed beside it: the image's entrypoint stays
# the agent, and an outcome's grader in the same image needs only `args: [grade]`.
if [ "${1:-}" = grade ]; then
    exec sh "$(dirname "$0")/grade.sh"
fi

prompt_file=${AGENTJOBS_PROMPT_FILE:?the operator sets AGENTJOBS_PROMPT_FILE}
output_dir=${AGENTJOBS_OUTPUT_DIR:-/workspace/artifacts/output}
input_dir=/workspace/artifacts/input
phase=${AGENTJOBS_PHASE:-phase}
pace=${EXAMPLE_AGENT_PACE:-1}

mkdir -p "$output_dir"
task=$(head -n 1 "$prompt_file")
echo "[$phase] task: $task"

inputs=""
if [ -d "$input_dir" ]; then
    inputs=$(cd "$input_dir" && find . -type f | sed 's|^\./||' | sort)
fi
if [ -n "$inputs" ]; then
    echo "[$phase] reading the previous phase's artifacts:"
    echo "$inputs" | sed 's/^/  - /'
fi

# --- The agent call. ---------------------------------------------------------------------
# A real image runs its agent CLI here on the whole prompt file, in /workspace, and lets it
# write the deliverable under $output_dir. For example, with Claude Code installed in the
# image (and `transcriptFormat: jsonl` on the phase, since it prints JSON events):
#
#   exec claude -p "$(cat "$prompt_file")" --output-format stream-json --verbose
#
# The prompt already tells the agent to end with a TASK_RESULT block, so a real agent writes
# it itself and nothing below this comment is needed.
#
# STAND-IN for the demo: pretend to work, write a deliverable, and report.
echo "[$phase] thinking..."
sleep "$pace"
report="$output_dir/$phase.md"
{
    echo "# $phase"
    echo
    echo "Task: $task"
    echo
    if [ -n "$inputs" ]; then
        echo "Built on the previous phase's artifacts:"
        echo "$inputs" | sed 's/^/- /'
    else
        echo "No earlier artifacts: this is the first phase."
    fi
} > "$report"
# A revision (R42): the prompt ends with what the grader found. The stand-in copies each unmet
# criterion's feedback into its deliverable, as a real agent would act on it.
feedback=$(awk '/^### Criteria not met$/ { on = 1; next }
    on && /^- / { print; seen = 1; next }
    on && seen && !/^  / { on = 0 }' "$prompt_file")
if [ -n "$feedback" ]; then
    echo "[$phase] revising after the grader's feedback"
    { echo; echo "## Revised after the grader's feedback"; echo; echo "$feedback"; } >> "$report"
fi
echo "[$phase] wrote $(basename "$report") with $(wc -l < "$report") lines"
sleep "$pace"
echo "[$phase] I finished the task and wrote my notes to $(basename "$report") for the next phase."
# ------------------------------------------------------------------------------------------

# The report: one line of JSON after `TASK_RESULT:`, then TASK_RESULT_END, as the last output.
printf 'TASK_RESULT: {"success": true, "side_effects": "none", "comments": "%s written"}\n' \
    "$(basename "$report")"
echo "TASK_RESULT_END"
