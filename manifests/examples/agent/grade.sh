#!/bin/sh
# The example grader: how to write a grader for an outcome (R37-R39).
#
# The operator runs the grader in a pod of its own, apart from the agent, and gives it:
#   AGENTJOBS_RUBRIC_FILE   the outcome's rubric (markdown)
#   AGENTJOBS_PROMPT_FILE   the outcome's description: what the result must be
# and, under /workspace/artifacts/input, the artifacts of the iteration being graded; never the
# agent's prompt, transcript or workspace. The grader's verdict is the GRADE_RESULT block it
# prints last: result satisfied, needs_revision or failed, an explanation, and per criterion
# whether it is met, with feedback the agent gets in its next iteration.
#
# A real grader runs an agent CLI here on the rubric and the files. This stand-in checks each
# rubric line "- ..." that quotes words in backticks mechanically: the criterion is met when
# some artifact contains those words. Lines without backticks cannot be checked by a script and
# are skipped. EXAMPLE_GRADER_INPUT_DIR points it at another directory (for tests).
set -eu

rubric_file=${AGENTJOBS_RUBRIC_FILE:?the operator sets AGENTJOBS_RUBRIC_FILE}
input_dir=${EXAMPLE_GRADER_INPUT_DIR:-/workspace/artifacts/input}

json_string() {
    printf '"%s"' "$(printf '%s' "$1" | sed 's/\\/\\\\/g; s/"/\\"/g' | tr '\t' ' ')"
}

grade() {  # result explanation criteria-json
    printf 'GRADE_RESULT: {"result": "%s", "explanation": %s, "criteria": [%s]}\n' \
        "$1" "$(json_string "$2")" "$3"
    echo "GRADE_RESULT_END"
}

files=$(find "$input_dir" -type f 2>/dev/null | sort || true)
if [ -z "$files" ]; then
    echo "[grader] no artifacts to grade under $input_dir"
    grade failed "The iteration left no artifacts to grade." ""
    exit 0
fi
echo "[grader] grading $(echo "$files" | wc -l) file(s) against $(basename "$rubric_file")"

criteria=""
checked=0
unmet=0
# Each bullet of the rubric, without its "- " (a line holding only "-" is not a criterion).
bullets=$(sed -n 's/^[[:space:]]*[-*][[:space:]]\{1,\}\(.*[^[:space:]]\).*$/\1/p' "$rubric_file")
while IFS= read -r criterion; do
    [ -n "$criterion" ] || continue
    phrase=$(printf '%s' "$criterion" | sed -n 's/^[^`]*`\([^`]*\)`.*$/\1/p')
    if [ -z "$phrase" ]; then
        echo "[grader] skipped (nothing to check mechanically): $criterion"
        continue
    fi
    checked=$((checked + 1))
    name=$(json_string "$criterion")
    if grep -rqF -- "$phrase" "$input_dir"; then
        echo "[grader] met: $criterion"
        entry="{\"name\": $name, \"met\": true}"
    else
        unmet=$((unmet + 1))
        echo "[grader] not met: $criterion"
        feedback=$(json_string "no artifact contains \`$phrase\`: add it")
        entry="{\"name\": $name, \"met\": false, \"feedback\": $feedback}"
    fi
    criteria="${criteria:+$criteria, }$entry"
done <<BULLETS
$bullets
BULLETS

if [ "$checked" -eq 0 ]; then
    grade failed "The rubric has no criterion this grader can check: quote the words it \
must find in backticks." ""
elif [ "$unmet" -eq 0 ]; then
    grade satisfied "All $checked criteria are met." "$criteria"
else
    grade needs_revision "$unmet of $checked criteria are not met." "$criteria"
fi
