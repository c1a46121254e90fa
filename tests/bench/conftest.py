# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One emulator and one isolated Ansible configuration for the benchmark's tests.

Run with the Python of a virtualenv that has ansible-core (ansible-playbook is taken from
beside it); the emulator runs with .venv/emulator's Python, or BENCH_EMULATOR_PYTHON.
"""

from __future__ import annotations

import os

import pytest

import run as bench


@pytest.fixture(scope="session")
def emulator(tmp_path_factory):
    python = os.environ.get("BENCH_EMULATOR_PYTHON", os.path.join(bench.ROOT, ".venv", "emulator", "bin", "python"))
    if not os.path.exists(python):
        pytest.fail("No emulator Python at %s: run `make setup-emulator` or set BENCH_EMULATOR_PYTHON." % python)
    with bench.Emulator(python, log_path=str(tmp_path_factory.mktemp("emulator") / "emulator.log")) as running:
        yield running


@pytest.fixture(scope="session")
def runner(tmp_path_factory):
    return bench.Runner(str(tmp_path_factory.mktemp("ansible")))
