"""A transcript as a conversation: what the console shows of an agent's run (R72)."""
