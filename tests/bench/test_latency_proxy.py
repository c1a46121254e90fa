# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The WAN profile's proxy is a faithful link: it counts connections, passes bytes unchanged and in order,
and never delivers an answer sooner than a real link of its round trip would.

The times checked here are lower bounds the proxy must impose (what it exists for), not speeds of the
collection: a faster machine cannot make them fail, only a proxy that lets bytes through too early.
"""

from __future__ import annotations

import socket
import socketserver
import threading
import time

import pytest

from latency_proxy import LatencyProxy

DELAY = 0.05  # one way


class _Echo(socketserver.BaseRequestHandler):
    def handle(self):
        while True:
            data = self.request.recv(65536)
            if not data:
                return
            self.request.sendall(data)


@pytest.fixture(name="proxy")
def fixture_proxy():
    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), _Echo)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    proxy = LatencyProxy("127.0.0.1", server.server_address[1], delay=DELAY).start()
    yield proxy
    proxy.stop()
    server.shutdown()
    server.server_close()


def _exchange(connection, payload):
    connection.sendall(payload)
    received = b""
    while len(received) < len(payload):
        chunk = connection.recv(65536)
        assert chunk, "the proxy closed the connection"
        received += chunk
    return received


def test_a_new_connection_pays_the_tcp_handshake_then_each_exchange_a_round_trip(proxy):
    started = time.monotonic()
    with socket.create_connection(("127.0.0.1", proxy.port)) as connection:
        assert _exchange(connection, b"hello") == b"hello"
        first = time.monotonic() - started
        again = time.monotonic()
        payload = bytes(range(256)) * 1024
        assert _exchange(connection, payload) == payload  # unchanged and in order, across chunks
        second = time.monotonic() - again
    # the first answer: the handshake's round trip, then the request's (4 one-way delays)
    assert first >= 4 * DELAY
    # on the open connection: one round trip (2 one-way delays), no handshake again
    assert second >= 2 * DELAY
    assert proxy.connections == 1


def test_connections_are_counted_and_reset(proxy):
    for _ in range(3):
        with socket.create_connection(("127.0.0.1", proxy.port)) as connection:
            assert _exchange(connection, b"x") == b"x"
    assert proxy.connections == 3
    proxy.reset()
    assert proxy.connections == 0
