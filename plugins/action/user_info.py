# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The action of every module of the collection, the one action plugin file.

plugins/action/<module>.py of every other module is a relative symlink to this file (ansible-galaxy keeps them
links): ansible-core finds a module's action by the module's name and loads this file under that name. It is named
after user_info only because ansible-test's sanity wants a module of the same name for each action plugin file.
What the action does, the module's class on the controller or the module process, is plugin_utils/in_process.py
(CONTRIBUTING.md, "The action plugin").

ansible-playbook's own process loads a task's action to plan it: prepare() then does there, once a run, what every
worker forked for a task would do again, the module's code imported first."""

from __future__ import annotations

from ansible_collections.planetscale.cloud.plugins.plugin_utils.in_process import InProcessAction, prepare


class ActionModule(InProcessAction):
    pass


prepare(__name__)  # in ansible-playbook's own process: the module's code and the run's first-use work, once
