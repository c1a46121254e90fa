# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Pages of one list read side by side: a few threads, one gate that a rate limit closes for all of them.

Client.paginate uses this once the first page of a page-based list says how many pages there are
(total_pages or total_count). The threads share the Client's requests Session: its connection pool
(HTTPAdapter pool_maxsize >= PARALLEL_PAGES) gives each request in flight a connection of its own.
When the server asks one of them to wait (429 or 503 with Retry-After, or a transient status's
backoff), _Retry.sleep closes the gate until then, and every thread waits at the gate before its
next request, so the server is not asked again by the others while it said to wait.
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

_THREAD = threading.local()


class Gate:
    """A time before which no request of the list is sent."""

    def __init__(self):
        self._lock = threading.Lock()
        self._opens = 0.0
        self.holds = 0  # times a thread closed the gate (for tests)
        self.waits = []  # (thread name, seconds) of each wait at a closed gate (for tests)

    def hold(self, seconds):
        """Close the gate for seconds from now (a later opening already set wins)."""
        with self._lock:
            self.holds += 1
            self._opens = max(self._opens, time.monotonic() + max(seconds, 0.0))

    def wait(self):
        """Return when the gate is open."""
        while True:
            with self._lock:
                remaining = self._opens - time.monotonic()
            if remaining <= 0:
                return
            self.waits.append((threading.current_thread().name, remaining))
            time.sleep(remaining)


def current_gate():
    """The gate of the list this thread is reading, or None outside a side-by-side read."""
    return getattr(_THREAD, "gate", None)


def read_side_by_side(read, numbers, workers, gate=None):
    """[(number, read(number))] in the order of numbers, read by at most workers threads at a time.

    The first failure (in the order of numbers) is raised once every thread has stopped; the pages
    not yet begun are then not read.
    """
    gate = gate or Gate()

    def one(number):
        _THREAD.gate = gate
        try:
            gate.wait()
            return read(number)
        finally:
            _THREAD.gate = None

    executor = ThreadPoolExecutor(max_workers=max(1, min(workers, len(numbers))))
    futures = [executor.submit(one, number) for number in numbers]
    try:
        return [(number, future.result()) for number, future in zip(numbers, futures)]
    finally:
        for future in futures:
            future.cancel()
        executor.shutdown(wait=True)
