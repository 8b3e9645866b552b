"""R67-R71: what a run may spend, what it has spent, and where a limit stops it."""
