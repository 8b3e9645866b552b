"""CronExecutions (R74)."""
