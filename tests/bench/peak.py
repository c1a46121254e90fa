# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Run a command and write the peak resident memory of its largest process, in KiB, to a file.

    python tests/bench/peak.py OUT COMMAND...

The peak is ru_maxrss of this process's children (Linux: KiB): the largest of the command and every descendant
waited for, so of ansible-playbook and each of its workers (a worker is forked from it and holds a task's result).
The command's output and exit code pass through.
"""

from __future__ import annotations

import resource
import subprocess
import sys


def main(argv):
    out, command = argv[0], argv[1:]
    code = subprocess.call(command)
    with open(out, "w", encoding="utf-8") as handle:
        handle.write("%d\n" % resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
