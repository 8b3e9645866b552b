"""Pydantic models: the single source of truth for reports, statuses and outcomes."""
