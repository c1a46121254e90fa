# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Writes that survive a lost answer, and waits for a resource to reach a state.

write_and_settle() is the one place that decides when a write is sent again: only after an
unknown outcome (the request was sent, the answer lost) that reading back shows was not
applied, after one backoff policy (the server's Retry-After, else exponential with jitter),
ATTEMPTS times in all. wait_until() is the one waiter: it polls a read with growing
intervals until a predicate holds, ends early on a state that can never get there, and fails
with the last state it saw when the user's timeout passes.
"""

from __future__ import annotations

import time

from ansible_collections.planetscale.cloud.plugins.module_utils.base import ModuleFailure
from ansible_collections.planetscale.cloud.plugins.module_utils.client import ApiError, backoff

ATTEMPTS = 3
# A create refused because the name is taken: another run may have created it meanwhile.
CONFLICT_STATUSES = frozenset((409, 422))


def write_and_settle(send, read_back=None, on_conflict=None, attempts=ATTEMPTS):
    """Send a write; after an unknown outcome, read back rather than write twice: (answer, applied).

    send() writes and returns the answer; it is called again for each attempt, so it may send
    what is still missing. read_back(error) is called after an unknown outcome: it returns
    (value, applied) when the write (or another writer) already took effect, or None when
    nothing was applied, which sends the write again after the backoff. Without read_back
    (a write that cannot be read back, such as an OAuth grant) the write is sent again as is.
    on_conflict(error) is called when the API refuses the write as a conflict (409, 422): it
    returns (value, applied) when what exists is the wanted result, or None to let the
    refusal stand. Any other error, and the last unknown outcome, is raised.
    """
    for attempt in range(1, attempts + 1):
        try:
            return send(), True
        except ApiError as error:
            if error.outcome_unknown:
                found = read_back(error) if read_back else None
                if found is not None:
                    return found
                if attempt < attempts:
                    time.sleep(backoff(attempt, error.retry_after))
                    continue
            elif on_conflict is not None and error.status in CONFLICT_STATUSES:
                found = on_conflict(error)
                if found is not None:
                    return found
            raise
    raise AssertionError("unreachable: the last attempt returns or raises")  # pragma: no cover


class Waiter:
    """Poll read() until done(value), with growing intervals, for at most timeout seconds.

    what names the wait in sentences ("branch 'dev' to be ready"); state(value) tells the
    state a failure reports; failed(value) returns a sentence for a state from which done()
    can never be reached (the wait ends at once with it), or None. A failure's result carries
    the last value read under key (e.g. "branch").
    """

    def __init__(self, what, done, state, failed=None, key="last", first=1.0, factor=1.5, longest=15.0):
        self.what = what
        self.key = key
        self.done = done
        self.state = state
        self.failed = failed
        self.first, self.factor, self.longest = first, factor, longest
        self.reads = 0

    def wait(self, read, timeout, current=None, **result):
        """The value once done; ModuleFailure (with result and the last value) on a failed state or the timeout.

        When current is given it is judged first, so the first read comes after the first wait.
        """
        deadline = time.monotonic() + timeout
        delay = self.first
        value = current if current is not None else self._read(read)
        while True:
            sentence = self.failed(value) if self.failed else None
            if sentence:
                raise ModuleFailure(sentence, **dict(result, **{self.key: value}))
            if self.done(value):
                return value
            left = deadline - time.monotonic()
            if left <= 0:
                raise ModuleFailure("Waited %s seconds for %s; the last state was %s. Raise wait_timeout, or set "
                                    "wait to false and check later." % (timeout, self.what, _state(self.state(value))),
                                    **dict(result, **{self.key: value}))
            time.sleep(min(delay, left))
            delay = min(delay * self.factor, self.longest)
            value = self._read(read)

    def _read(self, read):
        self.reads += 1
        return read()


def _state(value):
    return "%r" % value if isinstance(value, str) else "unknown" if value is None else str(value)
