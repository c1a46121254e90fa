# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A TCP proxy on localhost that delays every byte by a one-way delay in each direction, and counts
the connections it accepts: the benchmark's WAN profile puts it in front of the emulator (over TLS,
which passes through untouched), so a round trip costs 2 x delay as over the internet.

Each direction is a queue of (due time, chunk): a chunk read at t is written at t + delay, in order,
so the link keeps its bandwidth and only its latency grows, and a TLS handshake pays the round trip it
needs. The TCP handshake happens on localhost, where the kernel completes it at once; over a real link
a client can send its first byte only one round trip after it began to connect (SYN, SYN-ACK), so the
proxy holds a new connection's first bytes from the client until then: a new connection costs the
round trip of its TCP handshake as over the internet. Standard library only (asyncio, in a thread of
its own).

    proxy = LatencyProxy("127.0.0.1", 8443, delay=0.025).start()   # proxy.port: where clients connect
    proxy.connections                                               # accepted since start or reset()
    proxy.stop()

With trace=True, proxy.schedule lists every chunk's (connection, direction, opened, read, due, size):
when its connection was accepted, when the chunk was read and when it is due to be written, in the
proxy's clock, so that tests check the delays the proxy imposes by arithmetic, never by timing.
"""

from __future__ import annotations

import asyncio
import threading

DEFAULT_DELAY = 0.025  # seconds one way: a 50 ms round trip
CHUNK = 65536


class LatencyProxy:
    def __init__(self, target_host, target_port, delay=DEFAULT_DELAY, host="127.0.0.1", port=0, trace=False):
        self.target = (target_host, target_port)
        self.schedule = [] if trace else None  # (connection, "up" or "down", opened, read, due, size) per chunk
        self.delay = delay
        self.host = host
        self.port = port
        self.connections = 0  # accepted since start or reset()
        self._lock = threading.Lock()
        self._loop = None
        self._server = None
        self._thread = None
        self._ready = threading.Event()
        self._error = None
        self._serving = set()  # the connections' tasks, held until they end (the loop holds tasks weakly only)

    def reset(self):
        with self._lock:
            self.connections = 0

    def start(self, timeout=10):
        self._thread = threading.Thread(target=self._run, name="latency-proxy", daemon=True)
        self._thread.start()
        if not self._ready.wait(timeout) or self._error:
            raise RuntimeError("the latency proxy did not start: %s" % (self._error or "timed out"))
        return self

    def stop(self):
        if self._loop is not None and self._loop.is_running():
            self._loop.call_soon_threadsafe(self._loop.stop)
        if self._thread is not None:
            self._thread.join(10)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc_info):
        self.stop()

    def _run(self):
        self._loop = asyncio.new_event_loop()
        asyncio.set_event_loop(self._loop)  # this thread's loop (gather() without tasks looks it up)
        try:
            self._server = self._loop.run_until_complete(asyncio.start_server(self._serve, self.host, self.port))
            self.port = self._server.sockets[0].getsockname()[1]
        except OSError as error:
            self._error = error
            self._ready.set()
            return
        self._ready.set()
        try:
            self._loop.run_forever()
        finally:
            self._server.close()
            pending = asyncio.all_tasks(self._loop)
            for task in pending:
                task.cancel()
            if pending:
                self._loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
            self._loop.close()

    async def _serve(self, client_reader, client_writer):
        serving = asyncio.current_task()
        self._serving.add(serving)
        try:
            await self._link(client_reader, client_writer)
        finally:
            self._serving.discard(serving)

    async def _link(self, client_reader, client_writer):
        with self._lock:
            self.connections += 1
            number = self.connections
        opened = asyncio.get_running_loop().time()
        # over a real link the client's connect() returns one round trip after it began (SYN, SYN-ACK)
        handshake_done = opened + 2 * self.delay
        try:
            upstream_reader, upstream_writer = await asyncio.open_connection(*self.target)
        except OSError:
            client_writer.close()
            return
        await asyncio.gather(self._pipe(client_reader, upstream_writer, (number, "up", opened), handshake_done),
                             self._pipe(upstream_reader, client_writer, (number, "down", opened)),
                             return_exceptions=True)
        for writer in (client_writer, upstream_writer):
            writer.close()

    async def _pipe(self, reader, writer, label, not_before=0.0):
        """Copy reader to writer, each chunk delay seconds after it was read (or after not_before, when the
        sender could not have sent it earlier); end with the sender's end."""
        queue = asyncio.Queue()
        loop = asyncio.get_running_loop()

        async def deliver():
            while True:
                due, chunk = await queue.get()
                wait = due - loop.time()
                if wait > 0:
                    await asyncio.sleep(wait)
                if not chunk:
                    if writer.can_write_eof():
                        writer.write_eof()
                    return
                writer.write(chunk)
                await writer.drain()

        delivering = asyncio.ensure_future(deliver())
        try:
            while True:
                chunk = await reader.read(CHUNK)
                read = loop.time()
                due = max(read, not_before) + self.delay
                if self.schedule is not None:
                    self.schedule.append(label + (read, due, len(chunk)))
                queue.put_nowait((due, chunk))
                if not chunk:
                    break
            await delivering
        except (ConnectionError, OSError):
            # the sender broke the connection: break the other side's too, so that its own pipe ends
            delivering.cancel()
            await asyncio.gather(delivering, return_exceptions=True)
            writer.close()
