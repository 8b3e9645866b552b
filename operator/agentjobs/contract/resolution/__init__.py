"""A phase's status and failure classification from its report and run facts (R14-R22a, R61)."""
