"""agentjobs: run AI-agent jobs on Kubernetes and report truthfully what each run delivered."""
