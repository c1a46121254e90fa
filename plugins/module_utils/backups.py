# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the modules of backups and backup policies know of the platform's records and rules."""

from __future__ import annotations

from ansible_collections.planetscale.cloud.plugins.module_utils.base import ModuleFailure

RETENTION_UNITS = ["hour", "day", "week", "month", "year"]
MAX_RETENTION = 1000


def check_retention(params):
    """Refuse, before any request, a retention the platform refuses."""
    value = params.get("retention_value")
    if value is not None and not 1 <= value <= MAX_RETENTION:
        raise ModuleFailure("retention_value must be from 1 to %d (in retention_unit), not %s." % (
            MAX_RETENTION, value))
