"""The outcome contract's rules (R1-R61), one subpackage per rule family: pure, no I/O."""
