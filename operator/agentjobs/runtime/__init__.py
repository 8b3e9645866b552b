"""What every controller of the operator process uses: settings, error sorting, Events, the
watches' cache, leadership, backoff.
"""
