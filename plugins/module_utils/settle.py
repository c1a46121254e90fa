# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Writes that survive a lost answer, and waits for a resource to reach a state.

write_and_settle() is the one place that decides when a write is sent again: only after an
unknown outcome (the request was sent, the answer lost) that reading back shows was not
applied, after one backoff policy (the server's Retry-After, else exponential with jitter),
ATTEMPTS times in all, or more where the user's api_retries allows more. Waiter is the one waiter: Waiter.wait() polls a read with growing intervals until a
predicate holds, ends early on a state that can never get there, and fails with the last state
it saw when the user's timeout passes; it tells each state it sees change to the running task's
progress (base.progress: a line at -v).
"""

from __future__ import annotations

import time

from ansible_collections.planetscale.cloud.plugins.module_utils.base import ModuleFailure, progress
from ansible_collections.planetscale.cloud.plugins.module_utils.client import ApiError, backoff

ATTEMPTS = 3
# A create refused because the name is taken: another run may have created it meanwhile.
CONFLICT_STATUSES = frozenset((409, 422))


def write_and_settle(send, read_back=None, on_conflict=None, attempts=None):
    """Send a write; after an unknown outcome, read back rather than write twice: (answer, applied).

    send() writes and returns the answer; it is called again for each attempt, so it may send
    what is still missing. read_back(error) is called after an unknown outcome: it returns
    (value, applied) when the write (or another writer) already took effect, or None when
    nothing was applied, which sends the write again after the backoff. Without read_back
    (a write that cannot be read back, such as an OAuth grant) the write is sent again as is.
    A write proven not applied is sent ATTEMPTS times in all, or as often as any request may be
    where the client's api_retries (which the error carries) allows more, unless attempts bounds
    the sends in all.
    on_conflict(error) is called when the API refuses the write as a conflict (409, 422): it
    returns (value, applied) when what exists is the wanted result, or None to let the
    refusal stand. Any other error, and the last unknown outcome, is raised.
    """
    attempt = 0
    while True:
        attempt += 1
        try:
            return send(), True
        except ApiError as error:
            if error.outcome_unknown:
                found = read_back(error) if read_back else None
                if found is not None:
                    return found
                if attempt < (attempts or _allowed(error)):
                    time.sleep(backoff(attempt, error.retry_after))
                    continue
            elif on_conflict is not None and error.status in CONFLICT_STATUSES:
                found = on_conflict(error)
                if found is not None:
                    return found
            raise


def _allowed(error):
    """How many times in all a write may be sent: ATTEMPTS, or once and api_retries more where the user allows more
    (the client that sent it tells). A resend proven safe by reading back is not what api_retries: 0 turns off."""
    return max(ATTEMPTS, 1 + (error.resends or 0))


def poll(read, done, timeout, current=None, first=1.0, factor=1.5, longest=15.0, failed=None):
    """Read until done(value), waiting longer each time, for at most timeout seconds: (value, done).

    When current is given it is judged first, so the first read comes after the first wait.
    failed(value) may return a sentence for a state from which done() can never be reached:
    the poll ends at once with a ModuleFailure carrying it.
    """
    deadline = time.monotonic() + timeout
    delay = first
    value = current if current is not None else read()
    while True:
        sentence = failed(value) if failed else None
        if sentence:
            raise ModuleFailure(sentence)
        if done(value):
            return value, True
        left = deadline - time.monotonic()
        if left <= 0:
            return value, False
        time.sleep(min(delay, left))
        delay = min(delay * factor, longest)
        value = read()


class Waiter:
    """Wait, for at most the user's timeout, until done(value), polling read() with growing intervals.

    what names the wait in sentences ("branch 'dev' to be ready"); state(value) tells the
    state a failure reports; failed(value) returns a sentence for a state from which done()
    can never be reached (the wait ends at once with it), or None. A failure's result carries
    the last value read under key (e.g. "branch"). timed_out(value, timeout) may give the sentence
    for the timeout instead of the one built from what and state.
    A wait that is not over at once tells the task's progress (a line at -v) the first state it sees and each change,
    with the seconds since it began.
    """

    def __init__(self, what, done, state, failed=None, key="last", timed_out=None, first=1.0, factor=1.5,
                 longest=15.0):
        self.what = what
        self.timed_out = timed_out
        self.key = key
        self.done = done
        self.state = state
        self.failed = failed
        self.intervals = dict(first=first, factor=factor, longest=longest)
        self.reads = 0
        self.last = None
        self._shown = self._began = None

    def wait(self, read, timeout, current=None, **result):
        """The value once done; ModuleFailure (with result and the last value) on a failed state or the timeout.

        When current is given it is judged first, so the first read comes after the first wait.
        """
        self._shown, self._began = None, time.monotonic()
        try:
            value, done = poll(self._read(read), self._done, timeout, current=current, failed=self._failed,
                               **self.intervals)
        except ModuleFailure as failure:
            raise ModuleFailure(failure.msg, **dict(result, **{self.key: self.last}))
        if not done:
            sentence = self.timed_out(value, timeout) if self.timed_out else (
                "Waited %s seconds for %s; the last state was %s. Raise wait_timeout, or set wait to false and check "
                "later." % (timeout, self.what, _state(self.state(value))))
            raise ModuleFailure(sentence, **dict(result, **{self.key: value}))
        return value

    def _read(self, read):
        def counted():
            self.reads += 1
            return read()
        return counted

    def _done(self, value):
        """done(value); a state other than the last one shown is told, unless the wait is over at its first look."""
        over = self.done(value)
        if not over or self._shown is not None:
            state = _state(self.state(value))
            if state != self._shown:
                self._shown = state
                progress("Waiting for %s: %s after %d s." % (self.what, state, time.monotonic() - self._began))
        return over

    def _failed(self, value):
        self.last = value
        return self.failed(value) if self.failed else None


def _state(value):
    return "%r" % value if isinstance(value, str) else "unknown" if value is None else str(value)
