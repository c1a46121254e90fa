# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The WAN profile's proxy is a faithful link: it counts connections, passes bytes unchanged and in order,
and schedules every byte no sooner than a real link of its round trip would deliver it.

No time is measured: the delays are checked by arithmetic on the proxy's own schedule (when it read
each chunk, and when it set it to be written), so that only a proxy that schedules bytes too early
can fail, whatever the speed of the machine.
"""

from __future__ import annotations

import socket
import socketserver
import threading

import pytest

from latency_proxy import LatencyProxy

DELAY = 0.05  # one way
EPSILON = 1e-9  # the schedule is sums of floats: (opened + 2 * DELAY) + DELAY may round below opened + 3 * DELAY


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
    proxy = LatencyProxy("127.0.0.1", server.server_address[1], delay=DELAY, trace=True).start()
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


def test_a_new_connection_pays_the_tcp_handshake_then_each_chunk_one_way(proxy):
    with socket.create_connection(("127.0.0.1", proxy.port)) as connection:
        assert _exchange(connection, b"hello") == b"hello"
        payload = bytes(range(256)) * 1024
        assert _exchange(connection, payload) == payload  # unchanged and in order, across chunks
    assert proxy.connections == 1
    chunks = [entry for entry in proxy.schedule if entry[5]]  # the end of a stream has no bytes
    up = [entry for entry in chunks if entry[1] == "up"]
    down = [entry for entry in chunks if entry[1] == "down"]
    assert up and down
    _number, _direction, opened, _read, due, _size = up[0]
    # the client's first bytes: sent one round trip after it began to connect (SYN, SYN-ACK), then one way
    assert due >= opened + 3 * DELAY - EPSILON
    for _number, _direction, _opened, read, due, _size in chunks:
        assert due >= read + DELAY - EPSILON  # every byte waits the one-way delay
    assert down[0][4] >= opened + 4 * DELAY - EPSILON  # the first answer: the handshake's round trip and the request's
    later = up[1:]
    assert later and all(abs(due - (read + DELAY)) < EPSILON for _n, _d, _o, read, due, _s in later if read >= opened + 2 * DELAY)
    for stream in (up, down):
        assert [entry[4] for entry in stream] == sorted(entry[4] for entry in stream)  # in order


def test_connections_are_counted_and_reset(proxy):
    for _attempt in range(3):
        with socket.create_connection(("127.0.0.1", proxy.port)) as connection:
            assert _exchange(connection, b"x") == b"x"
    assert proxy.connections == 3
    proxy.reset()
    assert proxy.connections == 0
