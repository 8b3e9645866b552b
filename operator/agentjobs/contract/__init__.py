"""The outcome contract's rules (R1-R66), one subpackage per rule family: pure, no I/O."""
