"""The API connections' sockets: the kernel probes an idle peer, and gives up on a vanished
one within a minute of the last data."""

from __future__ import annotations

import socket

from agentjobs.adapters.tcp_keepalive import keepalive_socket


def test_a_connection_socket_probes_an_idle_peer_and_gives_up_within_a_minute() -> None:
    address = socket.getaddrinfo("127.0.0.1", 443, type=socket.SOCK_STREAM)[0]
    with keepalive_socket(address) as sock:
        assert sock.type == socket.SOCK_STREAM
        assert sock.getsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE) == 1
        idle = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPIDLE)
        interval = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPINTVL)
        probes = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPCNT)
    # The kernel's defaults (7,200 s idle, 75 s between 9 probes) would take over two hours.
    assert idle + interval * probes <= 60
