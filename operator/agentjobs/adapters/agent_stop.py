"""R70: the operator's stop, told to a pod's timekeeper straight over the pod network.

An attempt's stop token is derived from a key this operator process draws at start, so it
is never stored: a restarted operator, or another replica, cannot tell an earlier process's
timekeepers, and the pod's ``agentjobs.io/stop`` annotation (kube/agent_timeout.py) stops
them instead, a second or so later. So does any failure here, which is only logged.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import logging
import secrets

import aiohttp

from agentjobs.kube import agent_timeout

logger = logging.getLogger(__name__)
_KEY = secrets.token_bytes(32)
# The pod is on the node's network; a timekeeper that takes longer is left to the annotation.
PUSH_SECONDS = 1.0
# A limit passed in a run's first seconds may come before the timekeeper listens (it starts
# after the agent): it is tried again this often, for this long.
RETRY_SECONDS = 0.2
TRYING_SECONDS = 10.0


def token(phase_uid: str, pod_name: str) -> str:
    """The stop token of the attempt that runs in ``pod_name`` of the Phase ``phase_uid``."""
    message = f"{phase_uid}/{pod_name}".encode()
    return hmac.new(_KEY, message, hashlib.sha256).hexdigest()


async def push(pod_ip: str, stop_token: str, reason: str) -> bool:
    """Ask the timekeeper at ``pod_ip`` to fail the agent's next stop probe, trying again
    while nothing listens there yet; whether it took the stop."""
    host = f"[{pod_ip}]" if ":" in pod_ip else pod_ip
    url = f"http://{host}:{agent_timeout.TIMEKEEPER_PORT}{agent_timeout.STOP_PATH}"
    headers = {"Authorization": f"Bearer {stop_token}"}
    deadline = asyncio.get_running_loop().time() + TRYING_SECONDS
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=PUSH_SECONDS)) as session:
        while True:
            try:
                async with session.post(url, data=reason.encode(), headers=headers) as response:
                    if response.status == 202:
                        return True
                    logger.info(
                        "the timekeeper at %s refused the stop: %d", pod_ip, response.status
                    )
                    return False
            except aiohttp.ClientConnectorError as error:
                if asyncio.get_running_loop().time() >= deadline:
                    logger.info("the timekeeper at %s was not told the stop: %s", pod_ip, error)
                    return False
            except (TimeoutError, aiohttp.ClientError) as error:
                logger.info("the timekeeper at %s was not told the stop: %r", pod_ip, error)
                return False
            await asyncio.sleep(RETRY_SECONDS)
