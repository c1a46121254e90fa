# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The test harness of planetscale.cloud (README.md): the platform emulator in a child process and
its control API (harness.emulator), ansible-playbook runs with their recap and JSON results
(harness.ansible), plays of the modules run in this Python (harness.direct), what the collection
takes from the emulator (harness.collection), the output as printed (harness.output) and the
secret watch (harness.secrets).

Import it with tests/ on sys.path (the suites' conftest.py put it there; `PYTHONPATH=tests` for
`python -m harness`). harness.emulator needs the standard library only.
"""

from __future__ import annotations

from .ansible import DB_COLLECTIONS_PATH, Ansible, Run
from .direct import Direct
from .output import TaskResult
from .collection import (FQCN, MODULES, ORG_MODULES, credentials_env, demo_vars, emulator_vars, integration_vars,
                         module_classes, module_defaults, play, task)
from .emulator import EMULATOR_PYTHON, ROOT, TESTS, Emulator, HarnessError
from .secrets import BY_DESIGN, ISSUED_SECRET, NO_LOG_MASK, REVEALS, SecretWatch

__all__ = ["DB_COLLECTIONS_PATH", "Ansible", "Run", "Direct", "TaskResult", "FQCN", "MODULES", "ORG_MODULES", "credentials_env", "demo_vars",
           "emulator_vars", "integration_vars", "module_classes", "module_defaults", "play", "task", "EMULATOR_PYTHON", "ROOT", "TESTS",
           "Emulator", "HarnessError", "BY_DESIGN", "ISSUED_SECRET", "NO_LOG_MASK", "REVEALS", "SecretWatch"]
