"""``agentjobs console``: Executions, verdicts, artifacts and conversations in the browser (R72)."""
