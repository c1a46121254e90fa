# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the workflow and workflow_info modules share: where a database's MoveTables workflows are, and how one is
found by its number or by its name.

A workflow's number is its sequence number in the database, so numbers grow: of the workflows that share a name (one
cancelled, then created again), the newest is the one with the highest number.
"""

from __future__ import annotations


def workflow_path(module, *segments):
    """The path of the workflows of a module's database (its database option), or of what follows it: a workflow's
    number, and below that an action (verify-data, switch-replicas, ...)."""
    return module.org_path("databases", module.params["database"], "workflows", *[str(part) for part in segments])


def read_workflow(module, number):
    """The workflow numbered number of a module's database, or None when there is none; the list is read then, so that
    a missing database or organization fails (with its 404) rather than pass for a missing workflow."""
    found = module.client.get(workflow_path(module, number), missing_ok=True)
    if found is None:
        module.client.get(workflow_path(module), params=dict(per_page=1))
    return found


def newest_named(module, name):
    """The newest workflow of a module's database with this name (every page read), or None when there is none."""
    named = [found for found in module.client.paginate(workflow_path(module)) if found.get("name") == name]
    return max(named, key=lambda found: int(found.get("number") or 0)) if named else None
