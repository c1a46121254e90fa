# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The secret watch: every run's output searched for every secret, and for tracebacks."""

from __future__ import annotations

import re

# Every secret the emulator issues carries one of these prefixes (service tokens, client secrets,
# OAuth access and refresh tokens, password plain texts), so the watch finds secrets no test learned.
ISSUED_SECRET = re.compile(r"pscale_(?:tkn|app_secret|oauth|ref|pw)_[A-Za-z0-9]+")
# Where a module returns a secret by design: (result key, key inside it).
BY_DESIGN = frozenset((("password", "plain_text"), ("connection", "password"), ("token", "access_token"),
                       ("token", "refresh_token"), ("token_record", "token"),
                       ("token_record", "plain_text_refresh_token"), ("service_token", "token"),
                       ("role", "password")))
# The suites name the tasks that return a secret by design and have no no_log, for the reader.
REVEALS = "(returns its secret by design)"
NO_LOG_MASK = "VALUE_SPECIFIED_IN_NO_LOG_PARAMETER"
SECRET_KEYS = ("plain_text", "password", "access_token", "refresh_token", "client_secret", "service_token", "token",
               "code", "plain_text_refresh_token")


class SecretWatch:
    """Every run's output is searched for every secret: those the emulator issued (by their
    prefixes) and those the tests passed or learned (by value).

    With by_design (the reliability suite), a secret may show only in the printed result of a
    task (so one without no_log), at a key in BY_DESIGN, where a module returns it by design;
    anywhere else (a message, a warning, an invocation, a debug task, Ansible's own lines) it
    is a leak; results are found as -vvv and more print them. Without (SecretWatch(by_design=())),
    every occurrence is a leak, at any verbosity.
    """

    def __init__(self, by_design=BY_DESIGN):
        self.by_design = frozenset(by_design)
        self.known = set()
        self.runs = []
        self.leaks = []
        self.tracebacks = []  # (log, what) of every run that showed one
        self.shown_by_design = 0
        self._seen = set()  # (run number, position) of every occurrence judged

    def learn(self, *values):
        """Add secrets (strings of 8 characters or more); earlier runs are searched again for them."""
        new = set(value for value in values if isinstance(value, str) and len(value) >= 8) - self.known
        if not new:
            return
        self.known |= new
        for number, run in enumerate(self.runs):
            self._search(number, run, new)

    def learn_from(self, value):
        """Learn every string at a secret-looking key of a nested result."""
        if isinstance(value, dict):
            for key, item in value.items():
                if isinstance(item, str) and key in SECRET_KEYS:
                    self.learn(item)
                else:
                    self.learn_from(item)
        elif isinstance(value, list):
            for item in value:
                self.learn_from(item)

    def check(self, run):
        """Search a run's output (harness.ansible.Run) for every secret, and note its tracebacks."""
        self.runs.append(run)
        self._search(len(self.runs) - 1, run, None)
        self.tracebacks += [(run.where, found) for found in run.tracebacks()]

    def _search(self, number, run, values):
        output = run.output
        found = []
        for value in (values if values is not None else self.known):
            start = output.find(value)
            while start >= 0:
                found.append((start, value))
                start = output.find(value, start + 1)
        if values is None:
            found += [(match.start(), match.group(0)) for match in ISSUED_SECRET.finditer(output)]
        for position, value in sorted(set(found)):
            if (number, position) in self._seen:
                continue
            self._seen.add((number, position))
            reason = self._disallowed(run, position, value)
            if reason:
                line = output.count("\n", 0, position) + 1
                self.leaks.append("%s (%s, line %d): %s...%s" % (reason, run.where, line, value[:14], value[-4:]))
            else:
                self.shown_by_design += 1

    def _disallowed(self, run, position, value):
        """None where the secret shows by design, else why it must not show there."""
        for shown in run.printed():
            if shown.span[0] <= position < shown.span[1]:
                if shown.status == "skipping" or not _by_design(shown.result, value, self.by_design):
                    return "in the result of task %r, not where a module returns a secret by design" % shown.name
                return None
        return "outside any task result"

    def assert_no_leak(self):
        assert self.leaks == [], "secrets in the output:\n%s" % "\n".join(self.leaks[:10])


def _by_design(result, value, by_design):
    """Whether value shows in result only at the keys that return secrets by design."""
    places = []

    def walk(node, trail):
        if isinstance(node, dict):
            for key, item in node.items():
                walk(item, trail + (key,))
        elif isinstance(node, list):
            for item in node:
                walk(item, trail)
        elif isinstance(node, str) and value in node:
            places.append(trail)

    walk(result, ())
    return bool(places) and all(len(trail) == 2 and trail in by_design and result[trail[0]][trail[1]] == value
                                for trail in places)
