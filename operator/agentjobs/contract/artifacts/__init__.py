"""What a phase leaves behind and where the next one finds it (R28-R35, R52)."""
