# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The action of every module of the collection: meta/runtime.yml routes each module here (plugin_routing,
modules, action_plugin), and the plugin finds the module's class from the task (plugin_utils/in_process.py)."""

from __future__ import annotations

from ansible_collections.planetscale.cloud.plugins.plugin_utils.in_process import InProcessAction


class ActionModule(InProcessAction):
    pass
