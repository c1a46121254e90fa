#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: database_info
short_description: List the databases of an organization, or read one
version_added: 0.2.0
description:
  - Returns every database of the organization, walking all pages of the list, or those whose name contains O(q),
    or the one database named by O(name).
  - A database that does not exist is not an error; RV(databases) is then empty. An organization that does not
    exist is an error.
author:
  - planetscale.cloud contributors (@planetscale-ansible)
options:
  name:
    description:
      - The name of one database to read. RV(databases) then holds that database, or nothing if it does not exist.
    type: str
  q:
    description:
      - Return only the databases whose name contains this text (the API's search). Not with O(name).
    type: str
  limit:
    description:
      - Return at most this many databases. By default every database is returned.
    type: int
extends_documentation_fragment:
  - planetscale.cloud.api
  - planetscale.cloud.api.connection
  - planetscale.cloud.api.organization
  - planetscale.cloud.attributes.info
seealso:
  - module: planetscale.cloud.database
"""

EXAMPLES = r"""
- name: List every database of the organization
  planetscale.cloud.database_info:
    organization: acme
  register: result

- name: Show the databases that are not ready
  ansible.builtin.debug:
    msg: "{{ result.databases | rejectattr('state', 'eq', 'ready') | map(attribute='name') | list }}"

- name: List the databases whose name contains staging
  planetscale.cloud.database_info:
    organization: acme
    q: staging
  register: staging

- name: Read one database
  planetscale.cloud.database_info:
    organization: acme
    name: app
  register: app_database

- name: Fail unless the database exists and is ready
  ansible.builtin.assert:
    that:
      - app_database.databases | length == 1
      - app_database.databases[0].state == 'ready'
    fail_msg: The database app does not exist or is not ready.
"""

RETURN = r"""
databases:
  description:
    - The databases, in the order the API lists them.
    - With O(name), a list of the one database, or an empty list when the database does not exist.
  returned: success
  type: list
  elements: dict
  contains:
    id:
      description: The ID of the database.
      type: str
    name:
      description: The name of the database.
      type: str
      sample: shop
    state:
      description: V(pending), V(importing), V(sleep_in_progress), V(sleeping), V(awakening), V(import_ready) or V(ready).
      type: str
      sample: ready
    ready:
      description: Whether the database is ready to be used.
      type: bool
    kind:
      description: V(mysql) or V(postgresql).
      type: str
    region:
      description: The region of the database (slug, display_name, and so on).
      type: dict
    default_branch:
      description: The database's default branch.
      type: str
      sample: main
    deletion_protected:
      description: Whether the platform refuses to delete the database.
      type: bool
    multiple_admins_required_for_deletion:
      description: Whether deleting it needs several administrators of the organization.
      type: bool
    html_url:
      description: The database in the web application.
      type: str
"""

from ansible_collections.planetscale.cloud.plugins.module_utils.adapter import run_module
from ansible_collections.planetscale.cloud.plugins.module_utils.base import InfoModule
from ansible_collections.planetscale.cloud.plugins.module_utils.options import CONNECTION, CREDENTIALS, ORGANIZATION


class DatabaseInfo(InfoModule):
    """A named database that is absent is an empty list; the organization being absent is a failure."""

    option_sets = (CREDENTIALS, CONNECTION, ORGANIZATION)
    argument_spec = dict(
        name=dict(type="str"),
        q=dict(type="str"),
        limit=dict(type="int"),
    )
    mutually_exclusive = (("name", "q"),)
    path_options = ("name",)
    must_exist = ()

    def run(self):
        name = self.params["name"]
        if name is None:
            params = None if self.params["q"] is None else dict(q=self.params["q"])
            return dict(databases=self.items(self.org_path("databases"), params, self.params["limit"]))
        database = self.client.get(self.org_path("databases", name), missing_ok=True)
        if database is None:
            self.client.get(self.org_path("databases"), params=dict(per_page=1))  # a missing organization fails here
            return dict(databases=[])
        return dict(databases=[database])


def main():
    run_module(DatabaseInfo)


if __name__ == "__main__":
    main()
