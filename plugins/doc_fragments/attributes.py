# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations


class ModuleDocFragment:
    # An information module: reads only.
    INFO = r"""
attributes:
  check_mode:
    description: Can run in check_mode and return changed status prediction without modifying target.
    support: full
    details: The module only reads, so check mode gives the same result.
  diff_mode:
    description: Will return details on what has changed (or possibly needs changing in diff mode).
    support: N/A
    details: The module never changes anything.
  action:
    description: Indicates this has a corresponding action plugin so some parts of the options can be executed on the controller.
    support: full
    details:
      - The collection's action plugin runs the module's logic on the controller, without a module process, when
        the task's connection is C(local); set the variable C(planetscale_in_process=false) to run the module instead.
      - An C(async) task, a host reached through another connection, or a controller without C(requests) runs the module.
  async:
    description: Supports being used with the C(async) keyword.
    support: full
    details: An C(async) task runs the module process, as C(ansible.builtin.async_status) expects.
  action_group:
    description:
      - Use C(group/planetscale.cloud.all) in C(module_defaults) to set defaults for this module.
      - The options of the group that this module does not take (not listed here) may be set there too; the module
        does not receive them. Given on the task itself, they fail it.
    support: full
    membership:
      - planetscale.cloud.all
"""

    # A module that manages a resource.
    RESOURCE = r"""
attributes:
  check_mode:
    description: Can run in check_mode and return changed status prediction without modifying target.
    support: full
    details: Nothing is written; the result predicts RV(ignore:changed) and the resulting resource.
  diff_mode:
    description: Will return details on what has changed (or possibly needs changing in diff mode).
    support: full
    details: Shows the managed fields before and after; secrets never appear in a diff.
  action:
    description: Indicates this has a corresponding action plugin so some parts of the options can be executed on the controller.
    support: full
    details:
      - The collection's action plugin runs the module's logic on the controller, without a module process, when
        the task's connection is C(local); set the variable C(planetscale_in_process=false) to run the module instead.
      - An C(async) task, a host reached through another connection, or a controller without C(requests) runs the module.
  async:
    description: Supports being used with the C(async) keyword.
    support: full
    details: An C(async) task runs the module process, as C(ansible.builtin.async_status) expects.
  action_group:
    description:
      - Use C(group/planetscale.cloud.all) in C(module_defaults) to set defaults for this module.
      - The options of the group that this module does not take (not listed here) may be set there too; the module
        does not receive them. Given on the task itself, they fail it.
    support: full
    membership:
      - planetscale.cloud.all
"""
