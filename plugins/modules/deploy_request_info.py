#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: deploy_request_info
short_description: Read one deploy request with its deployment and operations, or list them
version_added: 0.2.0
description:
  - With O(number), returns that deploy request (RV(deploy_request)) with its deployment and its deploy operations.
    A request that does not exist is not an error; RV(deploy_request) is then null. A database or organization that
    does not exist is an error.
  - Without it, returns the deploy requests of the database (RV(deploy_requests)), walking every page, filtered by
    O(state), O(branch) and O(into_branch).
  - O(include) adds what is read only when asked for, the database's deploy queue and the request's throttler and
    storage check.
author:
  - planetscale.cloud contributors (@planetscale-ansible)
options:
  database:
    description: The name of the database.
    type: str
    required: true
  number:
    description: The number of one deploy request to read.
    type: int
  state:
    description:
      - List only the requests that are V(open), V(closed), or V(deployed). Not with O(number).
    type: str
    choices: [open, closed, deployed]
  branch:
    description: List only the requests from this branch. Not with O(number).
    type: str
  into_branch:
    description: List only the requests into this branch. Not with O(number).
    type: str
  limit:
    description: Return at most this many requests. By default every one. Not with O(number).
    type: int
  include:
    description:
      - V(deploy_queue) also returns the database's deploy queue (RV(deploy_queue)), every page; with O(number),
        RV(deploy_request.deploys_ahead) says which requests deploy before it.
      - V(throttler) adds the request's throttler (RV(deploy_request.throttler)); with O(number) only.
      - V(storage_check) adds the platform's storage check of the request (RV(deploy_request.storage_check)), whether
        the branch deployed into has the storage its deploy needs. With O(number) only.
    type: list
    elements: str
    choices: [deploy_queue, throttler, storage_check]
    default: []
    version_added: 0.3.0
extends_documentation_fragment:
  - planetscale.cloud.api
  - planetscale.cloud.api.connection
  - planetscale.cloud.api.organization
  - planetscale.cloud.attributes.info
seealso:
  - module: planetscale.cloud.deploy_request
  - plugin: planetscale.cloud.deploy_request_status
    plugin_type: filter
"""

EXAMPLES = r"""
- name: List the open deploy requests into main
  planetscale.cloud.deploy_request_info:
    organization: acme
    database: app
    state: open
    into_branch: main
  register: result

- name: Show what each one waits for
  ansible.builtin.debug:
    msg: "#{{ item.number }} {{ item.branch }}: {{ item | planetscale.cloud.deploy_request_status }}"
  loop: "{{ result.deploy_requests }}"

- name: Read the newest one with its operations
  planetscale.cloud.deploy_request_info:
    organization: acme
    database: app
    number: "{{ result.deploy_requests[0].number }}"
  register: one
  when: result.deploy_requests | length > 0

- name: Show the DDL it deploys
  ansible.builtin.debug:
    msg: "{{ one.deploy_request.operations | map(attribute='ddl_statement') | list }}"
  when: result.deploy_requests | length > 0

- name: Read it with what is ahead of it in the deploy queue, its throttler and its storage check
  planetscale.cloud.deploy_request_info:
    organization: acme
    database: app
    number: "{{ result.deploy_requests[0].number }}"
    include: [deploy_queue, throttler, storage_check]
  register: detailed
  when: result.deploy_requests | length > 0

- name: Say whether its deploy fits
  ansible.builtin.debug:
    msg: >-
      {{ detailed.deploy_request.storage_check.storage_bytes_needed }} bytes needed,
      enough storage: {{ detailed.deploy_request.storage_check.enough_storage }};
      {{ 'not queued' if detailed.deploy_request.deploys_ahead is none
         else detailed.deploy_request.deploys_ahead | length ~ ' deploys ahead of it' }}
  when: result.deploy_requests | length > 0
"""

RETURN = r"""
deploy_request:
  description: The deploy request numbered O(number), or null when it does not exist.
  returned: with O(number)
  type: dict
  contains:
    number:
      description: The number of the request.
      type: int
    branch:
      description: The branch it deploys from.
      type: str
    into_branch:
      description: The branch it deploys into.
      type: str
    state:
      description: V(open) or V(closed).
      type: str
    deployment_state:
      description: One of the 20 deployment states, such as V(ready) or V(complete).
      type: str
    deployment:
      description: The deployment (state, deployable, lint_errors, deploy_operations, timestamps, and so on).
      type: dict
    operations:
      description: The deploy operations, one per table changed (table_name, operation_name, ddl_statement, state,
        progress_percentage, deploy_errors, and so on).
      type: list
      elements: dict
    deploys_ahead:
      description: The numbers of the deploy requests ahead of it in the database's deploy queue, the next to deploy
        first (empty when it deploys next); null when it is not in the queue.
      returned: with O(include=deploy_queue)
      type: list
      elements: int
      version_added: 0.3.0
    throttler:
      description: Its throttler (keyspaces, configurations with each keyspace's ratio from 0 to 95).
      returned: with O(include=throttler)
      type: dict
      version_added: 0.3.0
    storage_check:
      description: The platform's storage check (enough_storage, upgradeable, storage_bytes_needed, storage_report
        by keyspace and shard with used, capacity, remaining, storage_needed and has_enough).
      returned: with O(include=storage_check)
      type: dict
      version_added: 0.3.0
deploy_requests:
  description: The deploy requests, in the order the API lists them, each with its deployment where the list has it.
  returned: without O(number)
  type: list
  elements: dict
  sample: [{"number": 7, "branch": "add-orders", "into_branch": "main", "state": "open", "deployment_state": "ready"}]
deploy_queue:
  description: The database's deploy queue, in the order the platform deploys it; each a deployment
    (deploy_request_number, state, auto_cutover, queued_at, and so on).
  returned: with O(include=deploy_queue)
  type: list
  elements: dict
  sample: [{"deploy_request_number": 7, "state": "queued", "auto_cutover": true}]
  version_added: 0.3.0
"""

from ansible_collections.planetscale.cloud.plugins.module_utils.adapter import run_module
from ansible_collections.planetscale.cloud.plugins.module_utils.base import InfoModule, ModuleFailure
from ansible_collections.planetscale.cloud.plugins.module_utils.deploy_requests import (
    deploy_request_path, read_deploy_request)
from ansible_collections.planetscale.cloud.plugins.module_utils.options import CONNECTION, CREDENTIALS, ORGANIZATION


def ahead(queue, number):
    """The numbers of the deploy requests ahead of request number in a deploy queue, or None when it is not in it."""
    numbers = [item.get("deploy_request_number") for item in queue if isinstance(item, dict)]
    return numbers[:numbers.index(number)] if number in numbers else None


class DeployRequestInfo(InfoModule):
    """A numbered request that is absent is null; its database or organization being absent is a failure."""

    option_sets = (CREDENTIALS, CONNECTION, ORGANIZATION)
    argument_spec = dict(
        database=dict(type="str", required=True),
        number=dict(type="int"),
        state=dict(type="str", choices=["open", "closed", "deployed"]),
        branch=dict(type="str"),
        into_branch=dict(type="str"),
        limit=dict(type="int"),
        include=dict(type="list", elements="str", choices=["deploy_queue", "throttler", "storage_check"], default=[]),
    )
    mutually_exclusive = (("number", "state"), ("number", "branch"), ("number", "into_branch"), ("number", "limit"))
    path_options = ("database", "branch", "into_branch")
    must_exist = ("database",)

    def validate(self):
        super().validate()
        if self.params["number"] is not None and self.params["number"] < 1:
            raise ModuleFailure("number must be 1 or more, not %s." % self.params["number"])
        of_one = [name for name in ("throttler", "storage_check") if name in self.params["include"]]
        if of_one and self.params["number"] is None:
            raise ModuleFailure("%s in include need%s one deploy request: give its number, or leave %s out." % (
                " and ".join(of_one), "s" if len(of_one) == 1 else "", "it" if len(of_one) == 1 else "them"))

    def run(self):
        result = {}
        if "deploy_queue" in self.params["include"]:
            result["deploy_queue"] = self.items(self.org_path("databases", self.params["database"], "deploy-queue"))
        if self.params["number"] is None:
            filters = dict((name, self.params[name]) for name in ("state", "branch", "into_branch")
                           if self.params[name] is not None)
            return dict(result, deploy_requests=self.items(deploy_request_path(self), filters or None,
                                                           self.params["limit"]))
        number = self.params["number"]
        request = read_deploy_request(self, number)  # a missing database fails here
        if request is None:
            return dict(result, deploy_request=None)
        if not isinstance(request.get("deployment"), dict):
            request["deployment"] = self.client.get(deploy_request_path(self, number, "deployment"))
        request["operations"] = self.items(deploy_request_path(self, number, "operations"))
        for name in ("throttler", "storage_check"):
            if name in self.params["include"]:
                request[name] = self.client.get(deploy_request_path(self, number, name.replace("_", "-")))
        if "deploy_queue" in self.params["include"]:
            request["deploys_ahead"] = ahead(result["deploy_queue"], number)
        return dict(result, deploy_request=request)


def main():
    run_module(DeployRequestInfo)


if __name__ == "__main__":
    main()
