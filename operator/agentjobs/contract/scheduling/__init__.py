"""When runs start: CronExecution schedules (issue 28)."""
