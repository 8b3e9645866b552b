"""The kopf handlers and the two controllers they drive: an Execution's reconciler and a
Phase's runner.
"""
