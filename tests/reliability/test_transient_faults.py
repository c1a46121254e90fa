# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Transient faults: with 30 % of the API's and the OAuth server's answers replaced by 429
(Retry-After), 502 or 503 (fixed seeds), the plays that use every module run to the end
without a failed task; every task reports what it reports without faults, and the end state
is the fault-free run's. Each module's class runs in this process (harness.direct) with its real
client and retries; the waits between retries are shortened (Retry-After: 0, a backoff factor of
0.01 s), their number and reasons are the client's. That a 429's Retry-After is waited for, end to
end on both execution paths, is the last test; the every-module plays on both paths without faults are
test_execution_paths.py.
"""

from __future__ import annotations

import importlib

import pytest

from harness import MODULES
from scenarios import end_state, every_module, prepare

# The emulator answers this file as the real platform does when it is lean: bare {"data": [...]} lists,
# cluster_rate_name, "type" keys (conftest.response_shapes).
LEAN_SHAPES = True
SHARE = 0.3
# Three rules, each firing on a share of the requests that reach it, so that together
# 30 % of requests fail, a third each with 429, 502 and 503.
# With faults that independent, a request fails all of its api_retries + 1 attempts with a chance of 0.3 ** (N + 1):
# at the default 5 retries that is 1 in 1,372, and the playbook sends well over a thousand requests, so some
# request would give up now and then, as the client should. The test is about every module surviving what the
# retries absorb, so it gives them 10 (1 in 5.6 million).
RETRIES = 10
# A token grant (POST /oauth/token, or an OAuth application's /token) whose answer is a 502 or 503 may have been
# applied: the code or refresh token it spent cannot be sent again, and the module says so rather than retrying
# (tests/reliability/test_unknown_outcomes.py). Those two endpoints get only 429s, which the server never applied.
ANY = "^/(v1|oauth)/"
NOT_A_GRANT = "^/(v1|oauth)/(?!token$)(?!.*/oauth-applications/[^/]+/token$)"
FAULTS = [
    dict(path=ANY, status=429, retry_after=0, probability=0.1, seed=429),
    dict(path=NOT_A_GRANT, status=502, probability=0.1 / 0.9, seed=502),
    dict(path=NOT_A_GRANT, status=503, retry_after=0, probability=0.1 / 0.8, seed=503),
]
BACKOFF_FACTOR = 0.01  # seconds: the first of the client's exponential waits (0.5 s for users)


@pytest.fixture
def quick_backoff(monkeypatch, direct):
    """The client's backoff, shortened for the runs in this process (its rules unchanged)."""
    assert direct  # the collection is importable once the runner exists
    client = importlib.import_module("ansible_collections.planetscale.cloud.plugins.module_utils.client")
    monkeypatch.setattr(client, "BACKOFF_FACTOR", BACKOFF_FACTOR)


def _reported(run):
    return [(task.name, task.status, task.changed) for task in run.tasks]


def test_every_module_survives_30_percent_transient_faults(emulator, direct, figures, quick_backoff):
    playbook, modules = every_module(emulator)
    assert modules == sorted(MODULES)
    run = direct.run([playbook], prepare(emulator, direct.watch), emulator=emulator,
                     label="every module, no faults").without_failures()
    assert not [entry for entry in emulator.requests() if entry["fault"]]
    reported, state = _reported(run), end_state(emulator)

    emulator.reset()
    extra_vars = prepare(emulator, direct.watch)
    emulator.clear_requests()
    emulator.faults(*FAULTS)
    playbook, _modules = every_module(emulator, api_retries=RETRIES)
    run = direct.run([playbook], extra_vars, emulator=emulator, label="every module, 30% faults")
    log = emulator.requests()
    emulator.clear_faults()
    faults = [entry for entry in log if entry["fault"]]
    figures["faults_injected"] += len(faults)

    run.without_failures()
    figures["faults_survived"] += len(faults)
    share = len(faults) / float(len(log))  # the seeded rules give 30 % of a long run; this run is short
    assert 0.15 < share < 0.45, "%d of %d requests failed" % (len(faults), len(log))
    assert set(entry["status"] for entry in faults) == {429, 502, 503}
    assert _reported(run) == reported
    assert end_state(emulator) == state


@pytest.mark.parametrize("in_process", [True, False], ids=["in_process", "module"])
def test_retries_wait_as_retry_after_says(emulator, ansible, in_process):
    """A 429 with Retry-After: 2 is retried after two seconds, not at once and not given up, on both paths."""
    emulator.faults(dict(method="GET", path="^/v1/user$", status=429, retry_after=2, times=2))
    playbook, _modules = every_module(emulator)
    playbook["tasks"] = playbook["tasks"][:1]
    run = ansible.run([playbook], emulator=emulator, in_process=in_process,
                      label="user_info after two 429s, in_process=%s" % in_process).without_failures()
    log = [entry for entry in emulator.requests() if entry["path"] == "/v1/user"]
    assert [entry["status"] for entry in log] == [429, 429, 200]
    assert run.seconds[playbook["tasks"][0]["name"]]["localhost"] >= 4
