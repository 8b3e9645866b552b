"""An Execution's reconciler: its next Phase, cancels, its status."""
