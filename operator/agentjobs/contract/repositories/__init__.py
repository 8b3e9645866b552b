"""Git repositories in the workspace: checkouts, hand-offs between phases, pushes (issue 25)."""
