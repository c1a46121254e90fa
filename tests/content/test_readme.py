# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The README's section on the emulator, run as printed against a running emulator: its shell lines set every
PLANETSCALE_* variable a user sets for it (harness.collection.credentials_env), not the URL alone."""

from __future__ import annotations

import os
import re
import subprocess

from harness import ROOT
from harness.collection import credentials_env

PRINTED = "http://127.0.0.1:8787"  # where the README's make emulator PORT=8787 listens


def shell_lines():
    """The lines of the section's console blocks that set variables (export, eval)."""
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as handle:
        section = handle.read().split("## Testing locally: the emulator", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```console\n(.*?)```", section, re.DOTALL)
    return [line.split("  #", 1)[0] for block in blocks for line in block.splitlines()
            if line.startswith(("export ", "eval "))]


def test_the_readme_sets_every_variable_for_the_emulator_in_one_line(emulator):
    lines = shell_lines()
    assert len(lines) == 1, lines
    script = lines[0].replace(PRINTED, emulator.url) + "\nenv -0"
    env = dict((k, v) for k, v in os.environ.items() if not k.startswith("PLANETSCALE_"))
    done = subprocess.run(["bash", "-euc", script], env=env, capture_output=True, check=True)
    variables = dict(entry.split("=", 1) for entry in done.stdout.decode().split("\0") if entry)
    assert dict((k, v) for k, v in variables.items() if k.startswith("PLANETSCALE_")) == credentials_env(emulator)
