# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The two profiles of the benchmark: how the playbooks reach the emulator, and who counts connections.

- local: the emulator on this machine over plain HTTP (a round trip of about a millisecond); the
  emulator counts the connections it accepts.
- wan: the emulator over TLS behind the latency proxy (latency_proxy.py), a one-way delay in each
  direction (default 25 ms, a 50 ms round trip), as users reach the platform over the internet; the
  proxy counts the connections. The harness's own calls (reset, seed, request log) go to the emulator
  directly, never through the proxy, so they cost the runs nothing and are not counted.
"""

from __future__ import annotations

from latency_proxy import DEFAULT_DELAY, LatencyProxy

PROFILES = ("local", "wan")


class LocalLink:
    name = "local"
    rtt = 0.0  # not added to the floor: a round trip here costs about what the emulator's answer does

    def __init__(self, emulator):
        self.emulator = emulator
        self.api_url, self.ca_path = emulator.api_url, None

    def clear(self):
        """Start counting (the emulator's count was cleared with its request log)."""

    def connections(self):
        return self.emulator.connections()["accepted"] - 1  # less the connection of this question

    def close(self):
        pass


class WanLink:
    name = "wan"

    def __init__(self, emulator, delay=DEFAULT_DELAY):
        if not emulator.tls:
            raise ValueError("the WAN profile needs the emulator over TLS (Emulator(tls=True))")
        self.emulator = emulator
        host, port = emulator.url.split("://", 1)[1].rsplit(":", 1)
        self.proxy = LatencyProxy(host, int(port), delay=delay).start()
        self.rtt = 2 * delay
        self.api_url = "https://%s:%d/v1" % (host, self.proxy.port)
        self.ca_path = emulator.ca

    def clear(self):
        self.proxy.reset()

    def connections(self):
        return self.proxy.connections

    def close(self):
        self.proxy.stop()
