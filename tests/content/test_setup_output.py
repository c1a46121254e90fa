# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What `make demo` (or any target) on a fresh clone prints while it prepares: hack/venv.sh and
hack/db-collections.py say, before each long step, what it does and then how long it took. A stand-in
Python and pip make the steps instant and offline; no emulator is started."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import textwrap

from harness import ROOT

FAKE_PYTHON = """\
#!/usr/bin/env bash
# a stand-in interpreter: its version, `-m venv DIR` (copies itself there), `-m pip ...` (recorded)
case $1 in
    -c) echo 3.99 ;;
    -m) case $2 in
            venv) mkdir -p "$3/bin" && cp "$0" "$3/bin/python" ;;
            pip) echo "$*" >>"$(dirname "$0")/../pip.log" ;;
        esac ;;
esac
"""

FAKE_PIP = """\
#!{python}
# a stand-in `pip download -d DIR`: a wheel holding the three database collections
import sys, zipfile
target = sys.argv[sys.argv.index("-d") + 1]
with zipfile.ZipFile(target + "/ansible-1.0-py3-none-any.whl", "w") as wheel:
    for name in ("ansible/mysql", "community/mysql", "community/postgresql"):
        wheel.writestr("ansible_collections/%s/MANIFEST.json" % name, "{{}}")
"""


def executable(path, text):
    path.write_text(text)
    path.chmod(0o755)
    return str(path)


def venv(tmp_path, *requirements):
    done = subprocess.run([os.path.join(ROOT, "hack", "venv.sh"), ".venv/x", str(tmp_path / "python")]
                          + list(requirements), cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stdout
    return done.stdout.splitlines()


def test_venv_says_which_python_how_many_requirements_and_how_long(tmp_path):
    executable(tmp_path / "python", FAKE_PYTHON)
    (tmp_path / "a.txt").write_text(textwrap.dedent("""\
        # pinned
        -c ../constraints.txt
        ansible-core==2.21.5 \\
            --hash=sha256:00
        requests==2.32.5

        """))
    (tmp_path / "b.txt").write_text("PyMySQL==1.2.4\n")

    first = venv(tmp_path, "a.txt", "b.txt")
    assert len(first) == 4, first
    assert first[0] == "venv .venv/x: creating with Python 3.99 (%s)" % (tmp_path / "python")
    assert re.fullmatch(r"venv \.venv/x: created in \d+s", first[1]), first
    assert first[2] == ("venv .venv/x: installing 2 from a.txt, 1 from b.txt "
                        "(pip, quiet: a minute or more the first time)")
    assert re.fullmatch(r"venv \.venv/x: installed in \d+s, ready", first[3]), first
    assert (tmp_path / ".venv" / "x" / "pip.log").read_text().count("pip install") == 1

    assert venv(tmp_path, "a.txt", "b.txt") == ["venv .venv/x: up to date (Python 3.99)"]

    (tmp_path / "b.txt").write_text("PyMySQL==1.2.4\ntyping_extensions==4.16.0\n")
    again = venv(tmp_path, "a.txt", "b.txt")
    assert again[:2] == ["venv .venv/x: requirements changed since the last install",
                         "venv .venv/x: installing 2 from a.txt, 2 from b.txt "
                         "(pip, quiet: a minute or more the first time)"], again
    assert re.fullmatch(r"venv \.venv/x: installed in \d+s, ready", again[2]) and len(again) == 3, again


def test_db_collections_says_what_it_downloads_and_how_long(tmp_path):
    # a copy of the script in a tree of its own: its build/collections is tmp_path's, not the clone's
    (tmp_path / "hack").mkdir()
    (tmp_path / "requirements").mkdir()
    shutil.copy(os.path.join(ROOT, "hack", "db-collections.py"), str(tmp_path / "hack"))
    (tmp_path / "requirements" / "db-collections.txt").write_text("# the pin\nansible==1.0 --hash=sha256:00\n")
    pip = executable(tmp_path / "pip", FAKE_PIP.format(python=sys.executable))

    def run():
        done = subprocess.run([sys.executable, str(tmp_path / "hack" / "db-collections.py"), pip],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=60, check=False)
        assert done.returncode == 0, done.stdout
        return done.stdout.splitlines()

    first = run()
    assert first[0] == ("db-collections: downloading ansible==1.0 with pip (requirements/db-collections.txt), "
                        "for ansible/mysql, community/mysql, community/postgresql"), first
    assert re.fullmatch(r"db-collections: ansible/mysql, community/mysql, community/postgresql unpacked into "
                        r"build/collections in \d+s", first[1]) and len(first) == 2, first
    assert (tmp_path / "build" / "collections" / "ansible_collections" / "community" / "postgresql").is_dir()
    assert run() == ["db-collections: up to date (ansible/mysql, community/mysql, community/postgresql)"]
