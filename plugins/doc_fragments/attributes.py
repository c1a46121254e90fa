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
  action_group:
    description: Use C(group/planetscale.cloud.all) in C(module_defaults) to set defaults for this module.
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
  action_group:
    description: Use C(group/planetscale.cloud.all) in C(module_defaults) to set defaults for this module.
    support: full
    membership:
      - planetscale.cloud.all
"""
