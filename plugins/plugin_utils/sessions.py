# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The requests sessions of one worker process, kept across the items of a loop (in-process path only).

Ansible runs every item of a loop in one worker process. Each item builds its own Client, and
without this each item would open a new connection: over TLS and a real network that is three
round trips or more before the request. Here a Client borrows the worker's session for its key
and gives it back when the task item ends, so its kept-alive connections serve the next item.

The rules, each tested in tests/unit/plugins/plugin_utils/test_sessions.py:
- the key is everything that makes a session safe to share (the Client computes it: API URL,
  a digest of the credentials, TLS settings, the CA file and its identity, the retries, the proxy
  and CA bundle environment variables); two keys never share a session;
- a session a fault touched (a dropped connection, a TLS error, anything other than an HTTP answer)
  is closed and forgotten, never lent again;
- a session is lent to one Client at a time; a second borrower of the same key gets its own;
- the sessions are closed when the worker ends (multiprocessing's finalizers run at a worker's exit,
  atexit at the controller's), and a process forked from one that holds sessions never uses them;
- with a keeper (`keeper`, set per task; persist.py), a session's connections are the keeper's kept ones, so they
  outlive the worker too; a session a fault touched tells the keeper to discard them.
The module path (a module process per task) never sees this: there a Client owns its session.
"""

from __future__ import annotations

import atexit
import os
import threading
from multiprocessing import util as multiprocessing_util


class SessionPool:
    """Idle sessions by key, for the Clients of this process."""

    def __init__(self):
        self._lock = threading.Lock()
        self._idle = {}
        self._pid = os.getpid()
        self.built = 0  # sessions made, for tests and the benchmark's notes
        self.discarded = 0  # sessions closed because a fault touched them
        self.keeper = None  # the run's connection keeper (persist.Link), or None: the sessions connect by themselves

    def _own(self):
        """Forget, without closing, what a parent process left: its sockets are not this process's to use."""
        if self._pid != os.getpid():
            self._idle, self._pid = {}, os.getpid()

    def borrow(self, key, build):
        """The idle session of this key, or a new one from build()."""
        with self._lock:
            self._own()
            session = self._idle.pop(key, None)
        if session is None:
            session = build()
            self.built += 1
        return session

    def give_back(self, key, session, suspect=False):
        """Keep the session for the next Client of its key; close it instead if a fault touched it."""
        with self._lock:
            self._own()
            if not suspect and key not in self._idle:
                self._idle[key] = session
                return
            if suspect:
                self.discarded += 1
        if suspect:
            for adapter in session.adapters.values():
                getattr(adapter, "discard", lambda: None)()  # the keeper never lends its connections again
        session.close()

    def adapter(self, key, **kwargs):
        """The transport adapter of a new session of this key: relayed by the keeper when there is one, and no proxy
        is named (requests then connects through the proxy itself)."""
        # imported here: requests is only needed once a Client is built (the action checks HAS_REQUESTS first)
        from requests.adapters import HTTPAdapter  # pylint: disable=import-outside-toplevel

        if self.keeper is None or self.keeper.off:
            return HTTPAdapter(**kwargs)
        from ansible_collections.planetscale.cloud.plugins.plugin_utils import persist  # pylint: disable=C0415

        if persist.proxied():
            return HTTPAdapter(**kwargs)
        return persist.KeptAdapter(self.keeper, key, **kwargs)

    def close(self):
        """Close every idle session (at the worker's end)."""
        with self._lock:
            self._own()
            idle, self._idle = list(self._idle.values()), {}
        for session in idle:
            try:
                session.close()
            except Exception:  # closing at exit: nothing is left to report it to
                pass

    def __len__(self):
        return len(self._idle)


POOL = SessionPool()
atexit.register(POOL.close)


def worker_pool():
    """The pool of this process, closed when the process ends: a worker runs multiprocessing's finalizers at its
    exit (and never atexit's), so the pool registers there too the first time a worker asks for it."""
    if getattr(POOL, "_finalized_in", None) != os.getpid():
        POOL._finalized_in = os.getpid()
        multiprocessing_util.Finalize(POOL, POOL.close, exitpriority=10)
    return POOL
