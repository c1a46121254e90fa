# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The secret watch of the integration passes (hack/integration.sh runs ansible-test at -vvvv through
`python -m harness emulator exec --watch-secrets`): a secret the emulator issued that the command prints
outside the result of a task returning it by design, or a traceback, fails the command, whose own exit code
is 0; a clean output keeps it. The integration passes run anyway, so this is where every target's output is
searched (it was a fifth pass of every target here before)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from harness import ROOT

CLEAN = 'echo "TASK [a task] ***"; echo "ok: [testhost]"'
LEAK = 'echo "TASK [a task] ***"; echo "msg: pscale_tkn_abcdefgh12345678abcdefgh"'
TRACEBACK = 'echo "TASK [a task] ***"; echo "The full traceback is:"; echo "  File \\"x.py\\", line 1, in <module>"'


def watched(script):
    return subprocess.run([sys.executable, "-m", "harness", "emulator", "exec", "--watch-secrets", "--", "sh", "-c",
                           script], cwd=ROOT, env=dict(os.environ, PYTHONPATH=os.path.join(ROOT, "tests")),
                          capture_output=True, text=True, timeout=300, check=False)


@pytest.mark.parametrize("script, code, found", [(CLEAN, 0, "0 leaks, 0 tracebacks"), (LEAK, 1, "1 leaks"),
                                                 (TRACEBACK, 1, "1 tracebacks")], ids=["clean", "leak", "traceback"])
def test_the_watch_fails_a_pass_that_shows_a_secret_or_a_traceback(script, code, found):
    run = watched(script)
    assert run.returncode == code, run.stdout + run.stderr
    assert found in run.stdout
    assert "pscale_tkn_abcdefgh12345678abcdefgh" not in run.stdout.split("secret watch:", 1)[1]
