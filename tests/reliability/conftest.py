# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Fixtures of the reliability suite: one emulator per session (per xdist worker), reset before
each test; one isolated Ansible configuration; the secret watch every run goes through; the
figures the suite reports at the end (build/reliability/figures-*.json, summed in the summary).

Run with the Python of a virtualenv that has ansible-core, requests, pytest and hypothesis
(make test-reliability uses .venv/new); the emulator runs with .venv/emulator's Python.
"""

from __future__ import annotations

import glob
import json
import os
import sys
from collections import Counter

import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tests/, where the harness is

from harness import ROOT, Ansible, Direct, Emulator, SecretWatch  # noqa: E402  pylint: disable=wrong-import-position

LOGS = os.path.join(ROOT, "build", "reliability")

# faults_injected = faults_survived (the task went on to the right end) + faults_reported (a failure by design:
# persistent faults, and grants whose tokens were lost, each with a sentence that says so).
FIGURES = ("runs", "faults_injected", "faults_survived", "faults_reported", "rate_limited_answers_survived",
           "writes_with_unknown_outcome", "duplicates", "bad_inputs", "tracebacks", "requests_for_local_errors",
           "secret_occurrences_by_design", "secret_leaks")


def _figures_files():
    return glob.glob(os.path.join(LOGS, "figures-*.json"))


def pytest_sessionstart(session):
    if not hasattr(session.config, "workerinput"):  # the controller (or a run without xdist)
        os.makedirs(LOGS, exist_ok=True)
        for path in _figures_files() + glob.glob(os.path.join(LOGS, "*.log")):
            os.remove(path)


def pytest_terminal_summary(terminalreporter):
    totals = Counter()
    for path in _figures_files():
        with open(path, encoding="utf-8") as handle:
            totals.update(json.load(handle))
    if totals:
        terminalreporter.section("reliability figures")
        for name in FIGURES:
            terminalreporter.write_line("%-32s %s" % (name.replace("_", " "), totals.get(name, 0)))
        terminalreporter.write_line("(run logs at -vvvv: %s)" % LOGS)


@pytest.fixture(scope="session")
def figures():
    counts = Counter()
    yield counts
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    with open(os.path.join(LOGS, "figures-%s.json" % worker), "w", encoding="utf-8") as handle:
        json.dump(counts, handle)


@pytest.fixture(scope="module", autouse=True)
def response_shapes(request):
    """The emulator answers a test file in the lean shapes of the real platform (bare lists,
    cluster_rate_name, "type" keys) when the file sets LEAN_SHAPES = True, or every file with
    RELIABILITY_LEAN=1; otherwise in the full shapes of the published OpenAPI."""
    lean = os.environ.get("RELIABILITY_LEAN") == "1" or getattr(request.module, "LEAN_SHAPES", False)
    Emulator.reset_settings = dict(lean=True) if lean else {}
    yield
    Emulator.reset_settings = {}


@pytest.fixture(scope="session")
def workdir(tmp_path_factory):
    return str(tmp_path_factory.mktemp("reliability"))


@pytest.fixture(scope="session")
def watch(figures):
    secrets = SecretWatch()
    yield secrets
    figures["secret_occurrences_by_design"] += secrets.shown_by_design
    figures["secret_leaks"] += len(secrets.leaks)
    figures["tracebacks"] += len(secrets.tracebacks)
    figures["runs"] += len(secrets.runs)


@pytest.fixture(autouse=True)
def no_leak(watch):
    """Every test fails when a run it made shows a traceback, or a secret (also one it taught the watch later)."""
    leaks, tracebacks = len(watch.leaks), len(watch.tracebacks)
    yield
    assert watch.tracebacks[tracebacks:] == []
    assert watch.leaks[leaks:] == []


@pytest.fixture(scope="session")
def ansible(workdir, watch):
    """ansible-playbook at -vvvv; a run given emulator= gets its credentials as the variables
    harness.module_defaults() templates; every run is logged in LOGS and searched by the watch."""
    return Ansible(os.path.join(workdir, "ansible"), credentials="variables", logs=LOGS, watch=watch, verbosity=4,
                   hosts=("localhost",), log_prefix=os.environ.get("PYTEST_XDIST_WORKER", "main") + "-")


@pytest.fixture(scope="session")
def direct(watch):
    """Plays whose modules' classes run in this process against the emulator, as the in-process action runs them
    (harness.direct): what the ansible fixture runs, at unit speed; every run is searched by the watch."""
    return Direct(watch=watch, logs=LOGS, log_prefix=os.environ.get("PYTEST_XDIST_WORKER", "main") + "-")


def started(workdir, watch, name, **options):
    """An emulator (its log in workdir), whose seeded secrets the watch knows."""
    emulator = Emulator(os.path.join(workdir, "emulator-%s.log" % name), **options).start()
    watch.learn(*emulator.secrets())
    return emulator


@pytest.fixture(scope="session")
def session_emulator(workdir, watch):
    emulator = started(workdir, watch, "plain", ready_delay=0.5)
    yield emulator
    emulator.stop()


@pytest.fixture
def emulator(session_emulator):
    """The session's emulator, back to its seeded world (state, log, faults, clock, settings)."""
    session_emulator.reset()
    return session_emulator


@pytest.fixture(scope="session")
def tls_emulator(workdir, watch):
    emulator = started(workdir, watch, "tls", ready_delay=0.5, tls=True, cert_dir=os.path.join(workdir, "tls"))
    yield emulator
    emulator.stop()
