#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: branch_change_info
short_description: List the change and VTGate resize requests of a branch, or read one
version_added: 0.3.0
description:
  - Returns the change requests of a branch (its cluster size, replicas, storage and PostgreSQL parameters) and its
    VTGate resize requests, walking all pages of both lists, or the one request named by O(id).
  - A request goes from V(queued) or V(pending) to V(resizing) and V(completed), or ends V(canceled). O(state) selects
    the requests in some of these states, for example those still running.
  - A request that does not exist is not an error; the lists are then empty. A branch, database or organization that
    does not exist is an error.
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
  id:
    description:
      - The ID of one change or resize request to read. RV(changes) or RV(resizes) then holds that request, and the
        other list is empty; both are empty when the branch has no request of that ID.
    type: str
  kind:
    description:
      - Read only the change requests (V(change)) or only the VTGate resize requests (V(resize)); the list of the
        other kind is then empty. By default both are read.
    type: str
    choices: [change, resize]
  state:
    description:
      - Return only the requests in these states. By default (or with an empty list) every request is returned.
    type: list
    elements: str
    choices: [queued, pending, resizing, canceled, completed]
extends_documentation_fragment:
  - planetscale.cloud.api
  - planetscale.cloud.api.connection
  - planetscale.cloud.api.organization
  - planetscale.cloud.attributes.info
seealso:
  - module: planetscale.cloud.branch
  - module: planetscale.cloud.postgres_parameter_info
"""

EXAMPLES = r"""
- name: List the change and resize requests of a branch that are still running
  planetscale.cloud.branch_change_info:
    organization: acme
    database: app
    branch: main
    state: [queued, pending, resizing]
  register: running

- name: Say whether the branch is being resized
  ansible.builtin.debug:
    msg: "{{ (running.changes + running.resizes) | length }} request(s) still running on main"

- name: List the completed change requests of a PostgreSQL branch
  planetscale.cloud.branch_change_info:
    organization: acme
    database: pgapp
    branch: main
    kind: change
    state: completed
  register: history
"""

RETURN = r"""
changes:
  description:
    - The change requests, as the API lists them. With O(id), a list of the one request, or an empty list.
  returned: success
  type: list
  elements: dict
  contains:
    id:
      description: The ID of the change request, for O(id).
      type: str
    state:
      description: V(queued), V(pending), V(resizing), V(completed) or V(canceled).
      type: str
      sample: completed
    cluster_name:
      description: The cluster size the request gives the branch.
      type: str
      sample: PS_20
    previous_cluster_name:
      description: The cluster size before the request.
      type: str
    replicas:
      description: The number of replicas the request gives the branch.
      type: int
    previous_replicas:
      description: The number of replicas before the request.
      type: int
    parameters:
      description: The PostgreSQL parameters after the request, by namespace then name.
      type: dict
    previous_parameters:
      description: The parameters before the request.
      type: dict
    minimum_storage_bytes:
      description: The smallest storage of the branch after the request (and C(maximum_storage_bytes),
        C(storage_autoscaling), C(storage_type), C(storage_iops), C(storage_throughput_mibs), each also with a
        C(previous_) value).
      type: int
    actor:
      description: Who asked for the change.
      type: dict
    created_at:
      description: When the request was made.
      type: str
    started_at:
      description: When the branch began to change, or null.
      type: str
    completed_at:
      description: When the change completed, or null.
      type: str
    updated_at:
      description: When the request last changed.
      type: str
resizes:
  description:
    - The VTGate resize requests, as the API lists them. With O(id), a list of the one request, or an empty list.
  returned: success
  type: list
  elements: dict
  contains:
    id:
      description: The ID of the resize request, for O(id).
      type: str
    state:
      description: V(queued), V(pending), V(resizing), V(completed) or V(canceled).
      type: str
    vtgate_size:
      description: The size of the VTGates after the request (C(previous_vtgate_size) before it).
      type: str
    vtgate_count:
      description: The number of VTGates after the request (C(previous_vtgate_count) before it).
      type: int
    vtgate_max_count:
      description: The largest number of VTGates autoscaling may run (C(previous_vtgate_max_count) before it).
      type: int
    vtgate_autoscaling:
      description: Whether the number of VTGates follows their load (C(previous_vtgate_autoscaling) before it).
      type: bool
    vtgate_target_cpu_utilization:
      description: The CPU use autoscaling aims at, in percent (C(previous_vtgate_target_cpu_utilization) before it).
      type: float
    vtgate_name:
      description: The name of the VTGate size (C(vtgate_display_name) as the web application shows it).
      type: str
    actor:
      description: Who asked for the resize.
      type: dict
    created_at:
      description: When the request was made (C(started_at), C(completed_at) and C(updated_at) as for RV(changes)).
      type: str
"""

from ansible_collections.planetscale.cloud.plugins.module_utils.adapter import run_module
from ansible_collections.planetscale.cloud.plugins.module_utils.base import InfoModule
from ansible_collections.planetscale.cloud.plugins.module_utils.capacity import REQUESTS, REQUEST_STATES, branch_path, request_path
from ansible_collections.planetscale.cloud.plugins.module_utils.options import CONNECTION, CREDENTIALS, ORGANIZATION


class BranchChangeInfo(InfoModule):
    """The API filters neither list by state: every page is read and the states are selected here. A request named by
    id that is absent is an empty list; its branch being absent is a failure."""

    option_sets = (CREDENTIALS, CONNECTION, ORGANIZATION)
    argument_spec = dict(
        database=dict(type="str", required=True),
        branch=dict(type="str", required=True),
        id=dict(type="str"),
        kind=dict(type="str", choices=list(REQUESTS)),
        state=dict(type="list", elements="str", choices=list(REQUEST_STATES)),
    )
    path_options = ("database", "branch", "id")
    must_exist = ("database", "branch")

    def run(self):
        kinds = [self.params["kind"]] if self.params["kind"] else list(REQUESTS)
        result = dict((request_path(kind), []) for kind in REQUESTS)  # the result key is the endpoint's segment
        for kind in kinds:
            key = segment = request_path(kind)
            if self.params["id"] is None:
                result[key] = self.items(branch_path(self, segment))
            else:
                found = self.client.get(branch_path(self, segment, self.params["id"]), missing_ok=True)
                result[key] = [found] if found is not None else []
        if self.params["id"] is not None and not any(result.values()):
            # a missing branch, database or organization fails
            self.client.get(branch_path(self, request_path(kinds[0])), params=dict(per_page=1))
        states = self.params["state"]
        return dict((key, [request for request in requests if not states or request.get("state") in states])
                    for key, requests in result.items())


def main():
    run_module(BranchChangeInfo)


if __name__ == "__main__":
    main()
