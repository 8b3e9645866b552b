"""The operator: kopf handlers (thin) and the loops they start.

Importing :mod:`agentjobs.handlers.registration` registers the handlers with kopf.
"""
