# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The roles and playbooks of the collection, run with ansible-playbook against the platform emulator.

One emulator per test session (per worker under pytest-xdist), reset before every test. The
harness (tests/harness) starts it (with .venv/emulator's Python, or EMULATOR_PYTHON) and runs
ansible-playbook from beside the Python that runs pytest (make content-tests uses .venv/new),
from the test's tmp_path, with the emulator's credentials in the PLANETSCALE_* environment
variables a user would set; the collection is the working tree. No run may show a secret.
"""

from __future__ import annotations

import glob
import json
import os
import subprocess
import sys
import textwrap

import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tests/, where the harness is

from harness import ROOT, Ansible, Emulator, HarnessError, SecretWatch  # noqa: E402  pylint: disable=wrong-import-position


@pytest.fixture(scope="session")
def emulator(tmp_path_factory):
    try:
        running = Emulator(str(tmp_path_factory.mktemp("emulator") / "emulator.log"), ready_delay=1).start()
    except HarnessError as error:
        pytest.fail(str(error))
    yield running
    running.stop()


@pytest.fixture(scope="session")
def installed(tmp_path_factory):
    """The collection built into a tarball with ansible-galaxy and installed from it into an empty path, once per
    test session (per worker): the path, for ANSIBLE_COLLECTIONS_PATH, which holds planetscale.cloud alone."""
    base = tmp_path_factory.mktemp("installed-collection")
    env = dict((k, v) for k, v in os.environ.items() if not k.startswith(("ANSIBLE_", "PLANETSCALE_")))
    env.update(ANSIBLE_HOME=str(base / "home"), ANSIBLE_COLLECTIONS_PATH=str(base / "installed"))

    def galaxy(*args):
        done = subprocess.run([os.path.join(os.path.dirname(sys.executable), "ansible-galaxy"), "collection"] +
                              list(args), cwd=str(base), env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True, timeout=600, check=False)
        assert done.returncode == 0, done.stdout

    galaxy("build", "--output-path", str(base / "dist"), ROOT)
    tarballs = glob.glob(str(base / "dist" / "planetscale-cloud-*.tar.gz"))
    assert len(tarballs) == 1
    galaxy("install", "--collections-path", str(base / "installed"), tarballs[0])
    assert os.listdir(str(base / "installed" / "ansible_collections")) == ["planetscale"]
    return str(base / "installed")


@pytest.fixture
def ansible(emulator, tmp_path):
    """ansible-playbook from tmp_path against a freshly reset emulator; fails the test if any run showed a
    secret (the emulator's, one a test names with ansible.assert_no_secret, or any the platform issues)."""
    emulator.reset()
    watch = SecretWatch(by_design=())
    watch.learn(*emulator.secrets())
    try:
        runner = Ansible(tmp_path / "harness", emulator=emulator, credentials="environment", watch=watch,
                         cwd=tmp_path)
    except HarnessError as error:
        pytest.fail(str(error))
    yield runner
    watch.assert_no_leak()


def role_play(cwd, role, role_vars, name="play.yml", after=""):
    """Write a playbook that includes a role of the collection with these variables; return its path."""
    text = textwrap.dedent("""\
        - name: Run the role {role}
          hosts: localhost
          connection: local
          gather_facts: false
          vars: {vars}
          tasks:
            - name: Include the role
              ansible.builtin.include_role:
                name: planetscale.cloud.{role}
        """).format(role=role, vars=json.dumps(role_vars)) + textwrap.indent(textwrap.dedent(after), "    ")
    path = os.path.join(str(cwd), name)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)
    return path


def mode(path):
    return oct(os.stat(str(path)).st_mode & 0o777)
