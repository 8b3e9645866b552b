"""`python -m devcluster.images`: build every image that is not cached, print name -> archive."""

from __future__ import annotations

import sys
import time

from devcluster.images.build import build
from devcluster.images.catalog import RECIPES


def main() -> None:
    started = time.monotonic()
    archives = build(RECIPES, sys.stderr)
    for recipe, archive in archives.items():
        for name in recipe.names:
            print(f"{name} -> {archive}")
    print(f"images: {time.monotonic() - started:.1f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
