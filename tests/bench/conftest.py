# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One emulator and one isolated Ansible configuration for the benchmark's tests, from the harness
(tests/harness).

Run with the Python of a virtualenv that has ansible-core (ansible-playbook is taken from
beside it); the emulator runs with .venv/emulator's Python, or EMULATOR_PYTHON.
"""

from __future__ import annotations

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tests/, where the harness is

from harness import Ansible, Emulator, HarnessError  # noqa: E402  pylint: disable=wrong-import-position
from scenarios import READY_DELAY  # noqa: E402  pylint: disable=wrong-import-position

SMOKE_DELAY = 0.005  # the WAN profile's one-way delay in the smoke run: counts are checked, never times


@pytest.fixture(scope="session")
def emulator(tmp_path_factory):
    try:
        running = Emulator(str(tmp_path_factory.mktemp("emulator") / "emulator.log"), ready_delay=READY_DELAY).start()
    except HarnessError as error:
        pytest.fail(str(error))
    yield running
    running.stop()


@pytest.fixture(scope="session")
def ansible(tmp_path_factory):
    return Ansible(str(tmp_path_factory.mktemp("ansible")), results=False)


@pytest.fixture(scope="session")
def tls_emulator(tmp_path_factory):
    """The emulator over TLS, for the WAN profile (behind the latency proxy)."""
    try:
        running = Emulator(str(tmp_path_factory.mktemp("tls-emulator") / "emulator.log"), ready_delay=READY_DELAY,
                           tls=True, cert_dir=str(tmp_path_factory.mktemp("certs"))).start()
    except HarnessError as error:
        pytest.fail(str(error))
    yield running
    running.stop()
