"""What a failed git command printed, read as one fault and the server's own words.

Cases: each fault from the lines git 2.39 prints for it (a 401, a user name it cannot ask
for, a 403, a forge's protected-branch and workflow refusals, a missing repository, branch
or commit, a moved branch, an unreachable host, a 5xx, a cut connection); the forge's
``remote:`` words are the message when it gave any, else git's last fatal line; colours and
carriage-return progress do not hide a refusal; only network faults are worth retrying.
"""

from __future__ import annotations

import pytest

from agentjobs.contract.repositories.git_errors import GitFault, classify

URL = "https://git.example.com/team/service.git/"


@pytest.mark.parametrize(
    ("stderr", "fault"),
    [
        (f"fatal: Authentication failed for '{URL}'\n", GitFault.AUTH),
        (
            "fatal: could not read Username for 'https://git.example.com': "
            "terminal prompts disabled\n",
            GitFault.AUTH,
        ),
        (
            f"remote: Invalid username or password.\nfatal: Authentication failed for '{URL}'\n",
            GitFault.AUTH,
        ),
        (
            "remote: Write access to repository not granted.\n"
            f"fatal: unable to access '{URL}': The requested URL returned error: 403\n",
            GitFault.PERMISSION,
        ),
        (
            "remote: error: GH006: Protected branch update failed for refs/heads/main.\n"
            " ! [remote rejected] HEAD -> main (pre-receive hook declined)\n"
            f"error: failed to push some refs to '{URL}'\n",
            GitFault.PERMISSION,
        ),
        (
            "remote: refusing to allow a Personal Access Token to create or update workflow "
            "`.github/workflows/ci.yml` without `workflow` scope\n"
            " ! [remote rejected] HEAD -> work (pre-receive hook declined)\n",
            GitFault.WORKFLOW,
        ),
        (
            " ! [remote rejected] work -> work (refusing to allow a GitHub App to create or "
            "update workflow `.github/workflows/ci.yml` without `workflows` permission)\n",
            GitFault.WORKFLOW,
        ),
        (
            f"remote: Repository not found.\nfatal: repository '{URL}' not found\n",
            GitFault.NOT_FOUND,
        ),
        (
            "warning: Could not find remote branch nope to clone.\n"
            "fatal: Remote branch nope not found in upstream origin\n",
            GitFault.NOT_FOUND,
        ),
        ("fatal: couldn't find remote ref refs/heads/nope\n", GitFault.NOT_FOUND),
        (
            "error: Server does not allow request for unadvertised object "
            "0123456789abcdef0123456789abcdef01234567\n",
            GitFault.NOT_FOUND,
        ),
        (
            " ! [rejected]        HEAD -> work (fetch first)\n"
            f"error: failed to push some refs to '{URL}'\n"
            "hint: Updates were rejected because the remote contains work that you do\n",
            GitFault.MOVED,
        ),
        (" ! [rejected]        HEAD -> work (non-fast-forward)\n", GitFault.MOVED),
        (
            f"fatal: unable to access '{URL}': Could not resolve host: git.example.com\n",
            GitFault.NETWORK,
        ),
        (
            f"fatal: unable to access '{URL}': Failed to connect to git.example.com port 443 "
            "after 3 ms: Connection refused\n",
            GitFault.NETWORK,
        ),
        (
            f"fatal: unable to access '{URL}': The requested URL returned error: 502\n",
            GitFault.NETWORK,
        ),
        (
            "error: RPC failed; curl 18 transfer closed with outstanding read data remaining\n"
            "fatal: early EOF\n",
            GitFault.NETWORK,
        ),
        ("fatal: not a git repository (or any of the parent directories): .git\n", GitFault.OTHER),
        ("", GitFault.OTHER),
    ],
    ids=[
        "401",
        "no-user-name",
        "forge-invalid-password",
        "403-read-only",
        "protected-branch",
        "workflow-token",
        "workflow-app",
        "no-repository",
        "no-branch",
        "no-ref",
        "no-commit",
        "fetch-first",
        "non-fast-forward",
        "unresolvable",
        "refused",
        "502",
        "cut",
        "other",
        "nothing",
    ],
)
def test_each_fault_is_read_from_what_git_printed(stderr: str, fault: GitFault) -> None:
    failure = classify(stderr.encode())
    assert failure.fault is fault
    assert failure.retryable is (fault is GitFault.NETWORK)


def test_the_forges_own_words_are_the_message() -> None:
    failure = classify(
        b"remote: error: GH006: Protected branch update failed for refs/heads/main.\n"
        b"remote: error: Changes must be made through a pull request.\n"
        b" ! [remote rejected] HEAD -> main (protected branch hook declined)\n"
        b"error: failed to push some refs to 'https://git.example.com/s.git'\n"
    )
    assert failure.message == (
        "error: GH006: Protected branch update failed for refs/heads/main. "
        "error: Changes must be made through a pull request."
    )


def test_without_a_remote_line_the_message_is_gits_last_fatal_line() -> None:
    failure = classify(
        b"Cloning into 'service'...\n"
        b"fatal: unable to access 'https://git.example.com/s.git/': Could not resolve host: "
        b"git.example.com\n"
    )
    assert failure.message == (
        "unable to access 'https://git.example.com/s.git/': Could not resolve host: git.example.com"
    )


def test_colour_and_progress_do_not_hide_a_refusal() -> None:
    failure = classify(
        b"Enumerating objects: 5, done.\rWriting objects:  50%\rWriting objects: 100%\n"
        b"remote: \x1b[1;31merror\x1b[m: GH006: Protected branch update failed for "
        b"refs/heads/main.\x1b[K\n"
    )
    assert failure.fault is GitFault.PERMISSION
    assert failure.message == "error: GH006: Protected branch update failed for refs/heads/main."


def test_a_hostile_message_is_cut_and_made_printable() -> None:
    failure = classify(b"remote: " + b"\x07\x1b]0;title\x07" + "é".encode() * 4000 + b"\n")
    assert len(failure.message.encode()) <= 1024
    assert failure.message.isprintable()
