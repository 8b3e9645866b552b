"""Pure decisions of the outcome contract: no I/O, plain values in and out."""
