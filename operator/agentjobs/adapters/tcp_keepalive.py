"""Sockets that find out for themselves when their peer has gone.

A log follow may stay silent for as long as its agent thinks. The kernel's
keepalive probes tell a silent connection whose peer is still there from one
whose peer vanished without a word (a host lost, a partition), within
``KEEPALIVE_IDLE + KEEPALIVE_PROBES * KEEPALIVE_INTERVAL`` seconds of the last
data, without a timeout that would end (and make the reader read again from
its first byte) every stream that is only quiet.
"""

from __future__ import annotations

import socket
from typing import Any

KEEPALIVE_IDLE = 30
KEEPALIVE_INTERVAL = 10
KEEPALIVE_PROBES = 3


def keepalive_socket(address: tuple[Any, ...]) -> socket.socket:
    """A TCP socket for ``address`` (one of getaddrinfo's answers) that probes an idle peer."""
    family, kind, protocol, _, _ = address
    sock = socket.socket(family=family, type=kind, proto=protocol)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPIDLE, KEEPALIVE_IDLE)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPINTVL, KEEPALIVE_INTERVAL)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPCNT, KEEPALIVE_PROBES)
    return sock
