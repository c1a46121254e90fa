# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

from ansible_collections.planetscale.cloud.plugins.modules.postgres_parameter_info import PostgresParameterInfo
from ansible_collections.planetscale.cloud.plugins.plugin_utils.in_process import InProcessAction


class ActionModule(InProcessAction):
    module_class = PostgresParameterInfo
