# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The collection's one action (plugin_utils/in_process.py), under the name of this file's module.

Every module's plugins/action/<module>.py is this same file, byte for byte (tests/unit/test_collection.py holds them
to it; a new module copies it): ansible-core finds a module's action by the module's name, and ansible-playbook's
own process loads it to plan the task, so prepare() does there, once a run, what every worker forked for a task
would do again, this module's code imported first (CONTRIBUTING.md, "The action plugin"). Not a symbolic link:
antsibull-docs takes a linked action file for a redirect of its module to the linked one."""

from __future__ import annotations

from ansible_collections.planetscale.cloud.plugins.plugin_utils.in_process import InProcessAction as ActionModule
from ansible_collections.planetscale.cloud.plugins.plugin_utils.in_process import prepare

__all__ = ("ActionModule",)

prepare(__name__)  # in ansible-playbook's own process: the module's code and the run's first-use work, once
