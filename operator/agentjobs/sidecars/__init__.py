"""The programs the operator adds to every phase pod: the input fetcher and the harvester."""
