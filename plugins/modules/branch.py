#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: branch
short_description: Create, wait for and delete database branches
version_added: 0.1.0
description:
  - Ensures that a branch of a database exists, and by default waits until it is ready to serve queries.
  - Ensures that a branch does not exist.
  - O(parent_branch) and O(region) can only be chosen when the branch is created; a difference on an existing
    branch fails and names the field (a field the branch's record does not state is not compared).
  - It serves MySQL and PostgreSQL databases alike. O(backup_id), O(restore_point), O(seed_data), O(major_version) and
    O(cluster_size) only shape a new branch. The first four are never compared with an existing branch (the API does
    not return them); an existing branch of another cluster size is left as it is, with a warning.
author:
  - planetscale.cloud contributors (@planetscale-ansible)
options:
  database:
    description: The name of the database.
    type: str
    required: true
  name:
    description:
      - The name of the branch.
      - A name the platform accepts for a branch, 1 to 63 lower-case letters, digits, V(-) and V(_), starting with a
        letter or digit; another name (here, in O(parent_branch) or in any module's option that names a branch) is
        refused before any request, also in check mode and with O(state=absent), since no branch has one.
    type: str
    required: true
  state:
    description:
      - V(present) creates the branch if it does not exist.
      - V(absent) deletes the branch; a branch that does not exist is not a change.
      - A production branch is not deleted; the task fails, also in check mode, and says to demote it first.
      - A protected branch (O(deletion_protected)) is not deleted unless the task sets O(deletion_protected=false),
        which lifts the protection first; otherwise the task fails before any write, also in check mode.
    type: str
    choices: [present, absent]
    default: present
  parent_branch:
    description:
      - The branch the new branch is created from. Required to create a branch.
      - It names an existing branch, so the rule for new names does not apply; a branch that does not exist fails
        the task, also in check mode.
    type: str
  region:
    description:
      - The slug of the region to create the branch in. By default the database's default region.
      - See M(planetscale.cloud.region_info) for the regions a database can use.
    type: str
  backup_id:
    description: Restore the schema and data of this backup into the new branch. Requires O(cluster_size).
    type: str
  restore_point:
    description: A point in time (ISO 8601) to restore into the new branch. PostgreSQL only; on MySQL the task fails.
    type: str
  major_version:
    description:
      - The PostgreSQL major version of the new branch, for example V(17); by default its parent's. PostgreSQL
        databases only, like O(restore_point). The platform ignores it for a branch restored from a backup.
    type: str
    version_added: 0.2.0
  seed_data:
    description: Restore the schema and data of the last successful backup into the new branch.
    type: str
    choices: [last_successful_backup]
  cluster_size:
    description:
      - The cluster size of the new branch, of the form V(SIZE_10) (or the platform's spelling V(PS_10)).
      - Required with O(backup_id).
    type: str
  production:
    description:
      - V(true) promotes the branch to production, V(false) demotes it to development; the task waits until the
        branch's record shows it. Promoting waits for the branch to be ready first, whatever O(wait) says.
        The database's default branch is not demoted; the task fails before any write, also in check mode.
    type: bool
  safe_migrations:
    description:
      - Enable (V(true)) or disable safe migrations, which let the schema of a production branch change only through
        deploy requests. Enabling waits for the branch to be ready, and comes after a promotion in the same task.
      - While the branch's schema has lint errors (see M(planetscale.cloud.branch_schema_info)), enabling fails
        before any write, also in check mode, and lists them.
    type: bool
  deletion_protected:
    description:
      - Protect the branch from deletion (V(true)) or lift the protection. See O(state) for V(false) with V(absent).
    type: bool
  wait:
    description: Wait until the branch is ready to serve queries, polling with growing intervals.
  wait_timeout:
    description:
      - Seconds to wait for the branch to be ready, and for a promotion or demotion to be done. The task fails after
        that, with the branch's last state.
    default: 600
extends_documentation_fragment:
  - planetscale.cloud.api
  - planetscale.cloud.api.connection
  - planetscale.cloud.api.organization
  - planetscale.cloud.api.wait
  - planetscale.cloud.attributes.resource
seealso:
  - module: planetscale.cloud.branch_info
  - module: planetscale.cloud.branch_schema_info
"""

EXAMPLES = r"""
- name: Create a preview branch from main and wait until it is ready
  planetscale.cloud.branch:
    organization: acme
    database: app
    name: preview-42
    parent_branch: main
  register: preview

- name: A branch of a PostgreSQL database as it was an hour ago
  planetscale.cloud.branch:
    organization: acme
    database: pgapp
    name: before-migration
    parent_branch: main
    restore_point: "{{ '%Y-%m-%dT%H:%M:%SZ' | strftime(now().timestamp() - 3600, utc=true) }}"

- name: Restore the newest successful backup of main into a new branch
  planetscale.cloud.branch:
    organization: acme
    database: app
    name: restored
    parent_branch: main
    seed_data: last_successful_backup
    wait_timeout: 1800

- name: Promote main to production, protected, with safe migrations
  planetscale.cloud.branch:
    organization: acme
    database: app
    name: main
    production: true
    safe_migrations: true
    deletion_protected: true

- name: Delete the preview branch
  planetscale.cloud.branch:
    organization: acme
    database: app
    name: preview-42
    state: absent
"""

RETURN = r"""
branch:
  description:
    - The branch. In check mode, when it would be created, the fields that are known before creating it.
  returned: O(state=present)
  type: dict
  contains:
    id:
      description: The ID of the branch.
      type: str
    name:
      description: The name of the branch.
      type: str
    parent_branch:
      description: The branch it was created from.
      type: str
    state:
      description: V(pending), V(sleep_in_progress), V(sleeping), V(awakening) or V(ready).
      type: str
    ready:
      description: Whether the branch is ready to serve queries.
      type: bool
    kind:
      description: V(mysql) or V(postgresql), the kind of its database.
      type: str
      version_added: 0.2.0
    region:
      description: The region of the branch (slug, display_name, and so on).
      type: dict
    mysql_edge_address:
      description: The address to connect to.
      type: str
    production:
      description: Whether it is a production branch.
      type: bool
    safe_migrations:
      description: Whether safe migrations are enabled.
      type: bool
    deletion_protected:
      description: Whether the branch is protected from deletion.
      type: bool
    cluster_name:
      description: The cluster size of the branch (from C(cluster_rate_name) where the platform's record names it so).
      type: str
    html_url:
      description: The branch in the web application.
      type: str
"""

from ansible_collections.planetscale.cloud.plugins.module_utils.adapter import run_module
from ansible_collections.planetscale.cloud.plugins.module_utils.branches import LIFECYCLE, BranchResource
from ansible_collections.planetscale.cloud.plugins.module_utils.options import (
    CONNECTION, CREDENTIALS, ORGANIZATION, WAIT)


class Branch(BranchResource):
    """Create-only: parent_branch, region. Changed in place: production, safe_migrations, deletion_protected."""

    option_sets = (CREDENTIALS, CONNECTION, ORGANIZATION, WAIT)
    argument_spec = dict(
        database=dict(type="str", required=True),
        name=dict(type="str", required=True),
        parent_branch=dict(type="str"),
        region=dict(type="str"),
        backup_id=dict(type="str"),
        restore_point=dict(type="str"),
        major_version=dict(type="str"),
        seed_data=dict(type="str", choices=["last_successful_backup"]),
        cluster_size=dict(type="str"),
        production=dict(type="bool"),
        safe_migrations=dict(type="bool"),
        deletion_protected=dict(type="bool"),
        wait_timeout=dict(type="int", default=600),
    )
    required_by = dict(backup_id="cluster_size")
    path_options = ("database", "name", "parent_branch")
    kind = "branch"
    api_path = ("databases", "{database}", "branches")
    key = "name"
    fields = ("name", "parent_branch", "region") + LIFECYCLE
    create_only = ("parent_branch", "region")
    required_to_create = ("parent_branch",)


def main():
    run_module(Branch)


if __name__ == "__main__":
    main()
