"""The harvester's SIGTERM (sidecars/harvester.run): it always reaches the last sync.

Case: a harvester whose main thread waits on ``stopping`` as often as it can, so that the
signal lands while that thread holds the Event's lock, is stopped by SIGTERM at once,
every time (a signal handler setting the Event there blocked for ever).
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time

PROCESSES = 8

CHILD = """
import sys, threading
from agentjobs.sidecars import harvester

class Busy:
    stopping = threading.Event()
    failure = None

    def run(self, *, interval):
        print("waiting", flush=True)
        while not self.stopping.is_set():
            self.stopping.wait(0)
        print("last sync", flush=True)

sys.exit(0 if harvester.run(Busy(), interval=1, ready_file=None) else 1)
"""


def test_sigterm_always_reaches_the_last_sync() -> None:
    children = [
        subprocess.Popen([sys.executable, "-c", CHILD], stdout=subprocess.PIPE, text=True)
        for _ in range(PROCESSES)
    ]
    try:
        for child in children:
            assert child.stdout is not None
            assert child.stdout.readline() == "waiting\n"
        time.sleep(0.2)
        for child in children:
            child.send_signal(signal.SIGTERM)
        for child in children:
            out, _ = child.communicate(timeout=10)
            assert (child.returncode, out) == (0, "last sync\n")
    finally:
        for child in children:
            child.kill()
