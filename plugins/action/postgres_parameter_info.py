# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The module's name among the action plugins, so that ansible-playbook's own process loads the collection's code
once, when it plans the task, and every worker it forks has it imported (CONTRIBUTING.md, "The action plugin").
The task runs through planetscale.cloud.in_process, where meta/runtime.yml routes the module."""

from __future__ import annotations

from ansible_collections.planetscale.cloud.plugins.action.in_process import ActionModule
from ansible_collections.planetscale.cloud.plugins.plugin_utils.in_process import prepare

__all__ = ("ActionModule",)

prepare(__name__)  # in ansible-playbook's own process: the module's code and the run's first-use work, once
