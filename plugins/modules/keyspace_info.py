#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: keyspace_info
short_description: List the keyspaces of a branch, with their resize requests and rollout status
version_added: 0.3.0
description:
  - Returns every keyspace of a branch of a MySQL (Vitess) database, walking all pages of the list, or the one named
    by O(name); with each, by default, its resize requests (every page) and its rollout status.
  - A keyspace that does not exist is not an error; RV(keyspaces) is then empty. A branch, database or organization
    that does not exist is an error.
author:
  - planetscale.cloud contributors (@planetscale-ansible)
options:
  database:
    description: The name of the database.
    type: str
    required: true
  branch:
    description: The name of the branch.
    type: str
    required: true
  name:
    description: The name of one keyspace to read. RV(keyspaces) then holds that keyspace, or nothing.
    type: str
  resize_requests:
    description: Read each keyspace's resize requests into RV(keyspaces[].resize_requests); one more request a keyspace.
    type: bool
    default: true
  rollout_status:
    description: Read each keyspace's rollout status into RV(keyspaces[].rollout_status); one more request a keyspace.
    type: bool
    default: true
extends_documentation_fragment:
  - planetscale.cloud.api
  - planetscale.cloud.api.connection
  - planetscale.cloud.api.organization
  - planetscale.cloud.attributes.info
seealso:
  - module: planetscale.cloud.keyspace
  - module: planetscale.cloud.vschema
"""

EXAMPLES = r"""
- name: The keyspaces of main, each with its resize requests and rollout status
  planetscale.cloud.keyspace_info:
    organization: acme
    database: app
    branch: main
  register: found

- name: Their names and shards
  ansible.builtin.debug:
    msg: "{{ found.keyspaces | items2dict(key_name='name', value_name='shards') }}"

- name: The default keyspace alone, without the extra reads
  planetscale.cloud.keyspace_info:
    organization: acme
    database: app
    branch: main
    name: app
    resize_requests: false
    rollout_status: false
"""

RETURN = r"""
keyspaces:
  description:
    - The keyspaces, as the platform answers them (the platform's records may carry only C(id), C(name), C(shards),
      C(sharded) and their times). With O(name), a list of the one keyspace, or an empty list.
  returned: success
  type: list
  elements: dict
  contains:
    id:
      description: The ID of the keyspace.
      type: str
    name:
      description: The name of the keyspace.
      type: str
    shards:
      description: The number of shards.
      type: int
    sharded:
      description: Whether the keyspace is sharded.
      type: bool
    cluster_name:
      description: The cluster size of each shard (from C(cluster_rate_name) where the platform's record names it so).
      type: str
    default:
      description: Whether it is the branch's default keyspace.
      type: bool
    resize_requests:
      description:
        - The keyspace's resize requests, newest first, each with C(id), C(state) (V(queued), V(pending),
          V(resizing), V(completed) or V(canceled)), C(cluster_name), C(extra_replicas), C(replicas) and their
          C(previous_) ones.
      returned: O(resize_requests=true)
      type: list
      elements: dict
    rollout_status:
      description:
        - The keyspace's rollout status (C(state), such as V(complete), and C(shards), each with its C(name), such as
          V(-80) or V(80-), and C(state)), or null when the platform has none.
      returned: O(rollout_status=true)
      type: dict
"""

from ansible_collections.planetscale.cloud.plugins.module_utils.adapter import run_module
from ansible_collections.planetscale.cloud.plugins.module_utils.base import InfoModule
from ansible_collections.planetscale.cloud.plugins.module_utils.branches import with_cluster_name
from ansible_collections.planetscale.cloud.plugins.module_utils.options import CONNECTION, CREDENTIALS, ORGANIZATION


class KeyspaceInfo(InfoModule):
    """A keyspace named that is absent is an empty list; its branch being absent is a failure."""

    option_sets = (CREDENTIALS, CONNECTION, ORGANIZATION)
    argument_spec = dict(
        database=dict(type="str", required=True),
        branch=dict(type="str", required=True),
        name=dict(type="str"),
        resize_requests=dict(type="bool", default=True),
        rollout_status=dict(type="bool", default=True),
    )
    path_options = ("database", "branch", "name")
    must_exist = ("database", "branch")

    def run(self):
        def url(*segments):
            return self.org_path("databases", self.params["database"], "branches", self.params["branch"], "keyspaces",
                                 *segments)
        keyspaces = url()
        if self.params["name"] is not None:
            found = self.client.get(url(self.params["name"]), missing_ok=True)
            if found is None:
                self.client.get(keyspaces, params=dict(per_page=1))  # a missing branch or database fails
            found = [found] if found is not None else []
        else:
            found = self.items(keyspaces)
        for keyspace in found:
            with_cluster_name(keyspace)
            if self.params["resize_requests"]:
                keyspace["resize_requests"] = self.items(url(keyspace.get("name"), "resizes"))
            if self.params["rollout_status"]:
                keyspace["rollout_status"] = self.client.get(url(keyspace.get("name"), "rollout-status"),
                                                             missing_ok=True)
        return dict(keyspaces=found)


def main():
    run_module(KeyspaceInfo)


if __name__ == "__main__":
    main()
