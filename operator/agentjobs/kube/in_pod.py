"""Where things are inside a phase's pod: the paths its containers, its prompt and the
contract's rules all name, said once."""

from __future__ import annotations

WORKSPACE = "/workspace"
ARTIFACTS = f"{WORKSPACE}/artifacts"
OUTPUT = f"{ARTIFACTS}/output"  # R28: what the agent delivers
INPUT = f"{ARTIFACTS}/input"  # what earlier phases handed on (or, for a grader, the work)
# R42: a revised attempt's previous files and the evaluation that asked for the revision.
PREVIOUS = f"{ARTIFACTS}/previous"
FEEDBACK = f"{ARTIFACTS}/feedback"
# A grader's view of the graded attempt's changes to each repository: <CHANGES>/<name>.diff.
CHANGES = f"{ARTIFACTS}/changes"
# The harvester creates this file once it can take SIGTERM; the fetcher waits for it, so
# the agent never starts (and never ends) before the harvester is ready for its last sync.
HARVESTER_READY_FILE = f"{WORKSPACE}/.agentjobs/harvester-ready"
PROMPT_DIRECTORY = "/etc/agentjobs/prompt"
PROMPT_KEY = "prompt.md"
PROMPT_FILE = f"{PROMPT_DIRECTORY}/{PROMPT_KEY}"
# R63: each repository's credentials, mounted only into our own containers (and into the
# agent's when agentCredentials says so), at <GIT_CREDENTIALS>/<repository>/token.
GIT_CREDENTIALS = "/var/run/agentjobs/git"
# Where the checkout tells the harvester where each repository started: a volume the
# agent's container does not mount, so the agent cannot move the base of its own push.
CHECKOUTS_DIRECTORY = "/var/run/agentjobs/checkouts"
CHECKOUTS_FILE = f"{CHECKOUTS_DIRECTORY}/checkouts.json"
# How the checkout's exit says why a repository could not be checked out (R62's faults).
CHECKOUT_EXIT_CODES = {"auth": 10, "permission": 11, "not_found": 12, "network": 13, "other": 14}
