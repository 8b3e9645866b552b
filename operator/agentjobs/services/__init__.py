"""Services the controllers call: the credentials endpoint, the artifact store, completion
webhooks.
"""
