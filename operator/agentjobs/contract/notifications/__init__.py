"""Completion webhooks (R49-R51): which targets are called, the signed CloudEvent, delivery."""
