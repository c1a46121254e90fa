#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: workflow
short_description: Move tables between keyspaces with a MoveTables workflow, phase by phase
version_added: 0.3.0
description:
  - Drives a MoveTables workflow of a Vitess database, which copies tables from one keyspace into another and keeps
    them in step, to the phase the task asks for (O(phase)), and waits for each step with growing intervals.
  - The workflow is the newest one named O(name), or the one numbered O(number). When there is none, it is created
    from O(source_keyspace), O(target_keyspace) and O(tables).
  - The phases form a ladder, V(created), V(verified), V(replicas_switched), V(primaries_switched), V(completed).
    A workflow at or past the phase asked for is left alone, so a task run again sends nothing it sent before. A
    workflow below it gets the actions that lead there, in order, each waited for; none the platform requires is
    skipped.
  - Traffic is switched only after a data check (the platform's verify-data, a VDiff) that is fresh and found no
    differences. A check that found differences stops the task before any switch, with a sentence that names each
    table and its counts of differing rows. With O(verify=true) the task runs the check when it is missing, stale
    (the platform's C(verified_data_stale)) or found differences before, and judges its outcome.
  - A workflow in state V(error) ends the task at once with the platform's C(workflow_errors), unless O(retry) asks to
    retry it. A workflow cancelled meanwhile, or in a state the collection does not know, ends it too.
  - Where the workflow is, is judged by its state as a read gives it, never by an action's answer. The platform's
    state C(complete) counts as V(completed).
author:
  - planetscale.cloud contributors (@planetscale-ansible)
options:
  database:
    description: The name of the database, a Vitess (MySQL) database.
    type: str
    required: true
  name:
    description:
      - The name of the workflow. Of the workflows with this name, the newest (highest number) is the one.
      - A new workflow gets this name.
    type: str
    required: true
  number:
    description: The number of the workflow, where names repeat. The workflow must have O(name).
    type: int
  source_keyspace:
    description: The keyspace the tables move from. Needed to create the workflow.
    type: str
  target_keyspace:
    description: The keyspace the tables move to, such as a sharded keyspace with its VSchema. Needed to create the
      workflow.
    type: str
  tables:
    description: The tables to move. Needed to create the workflow.
    type: list
    elements: str
  global_keyspace:
    description: The keyspace that holds the sequence tables of the moved tables, for a sharded target keyspace.
    type: str
  defer_secondary_keys:
    description: Create the secondary keys of the moved tables after their rows are copied, which copies faster.
    type: bool
  on_ddl:
    description: What the workflow does when a moved table's schema changes while it runs.
    type: str
    choices: [IGNORE, STOP, EXEC, EXEC_IGNORE]
  phase:
    description:
      - V(created) creates the workflow and, with O(wait), waits until its tables are copied and it replicates
        (state V(running)).
      - V(verified) also checks the data (verify-data) and waits for the check. Differences fail the task, naming
        the tables.
      - V(replicas_switched) also routes the target keyspace's replica and read-only queries to the target keyspace
        (switch-replicas).
      - V(primaries_switched) routes all queries of the moved tables, primary too, to the target keyspace
        (switch-primaries). From a workflow that switched nothing yet, this also switches replicas.
      - V(completed) cuts over, which drops the moved tables from the source keyspace and ends replication, then
        marks the workflow complete (cutover, then complete).
      - V(reversed) routes traffic back to the source keyspace (reverse-traffic), or after a cutover restores the
        routing of the source keyspace's queries to the moved tables (reverse-cutover). A workflow that switched
        nothing is there already. A completed workflow cannot be reversed.
      - V(cancelled) cancels the workflow, which drops the copied tables from the target keyspace. After a cutover it
        cannot be cancelled, and the task fails before it sends anything. A workflow that does not exist is not an
        error.
    type: str
    choices: [created, verified, replicas_switched, primaries_switched, completed, reversed, cancelled]
    default: created
  verify:
    description:
      - Run the data check before traffic is switched when the workflow has none that is fresh and clean. With
        V(false) the task fails instead, and switches nothing.
    type: bool
    default: true
  retry:
    description: Retry a workflow in state V(error) that the platform says may be retried (C(may_retry)), once a run.
    type: bool
    default: false
  wait:
    description:
      - Wait for each step. With V(false) the task sends the next action and returns; run it again to take the next
        step.
  wait_timeout:
    description: Seconds to wait in all. The task fails after that with the workflow's last state.
    default: 3600
extends_documentation_fragment:
  - planetscale.cloud.api
  - planetscale.cloud.api.connection
  - planetscale.cloud.api.organization
  - planetscale.cloud.api.wait
  - planetscale.cloud.attributes.resource
notes:
  - Check mode sends nothing and predicts the actions (RV(actions)) and the phase the workflow would reach, taking a
    data check it would run to find no differences. The diff shows the workflow's phase and state before and after.
  - An action whose answer is lost is read back rather than sent again, so no workflow is created twice and no
    action is sent twice.
seealso:
  - module: planetscale.cloud.workflow_info
"""

EXAMPLES = r"""
- name: Copy the orders table into the sharded keyspace and keep it in step
  planetscale.cloud.workflow:
    organization: acme
    database: app
    name: move-orders
    source_keyspace: app
    target_keyspace: sharded
    tables: [orders]
    phase: created

- name: Check the copied rows, then route replica reads to the sharded keyspace
  planetscale.cloud.workflow:
    organization: acme
    database: app
    name: move-orders
    phase: replicas_switched

- name: Route all traffic of the orders table to the sharded keyspace
  planetscale.cloud.workflow:
    organization: acme
    database: app
    name: move-orders
    phase: primaries_switched

- name: Cut over, which drops orders from the app keyspace, and complete the workflow
  planetscale.cloud.workflow:
    organization: acme
    database: app
    name: move-orders
    phase: completed
"""

RETURN = r"""
workflow:
  description:
    - The workflow as last read, as the platform gives it. In check mode, as predicted (a new one has no number).
  returned: when the workflow exists or would be created
  type: dict
  contains:
    number:
      description: The number of the workflow in its database.
      type: int
      sample: 3
    name:
      description: The name of the workflow.
      type: str
    state:
      description: The platform's state, such as V(copying), V(running), V(switched_primaries) or V(completed).
      type: str
      sample: switched_replicas
    verify_data_at:
      description: When its data was last checked, or null.
      type: str
    verified_data_stale:
      description: Whether the platform calls that check stale.
      type: bool
    workflow_errors:
      description: What went wrong, in state V(error).
      type: str
phase:
  description:
    - The phase the workflow is in, one of the choices of O(phase); in a state in transit, the phase it is leaving.
    - V(reversed) for a workflow whose cutover was reversed, and for one that switched no traffic when the task asks
      for O(phase=reversed). In check mode, as predicted.
  returned: when the workflow exists or would be created
  type: str
  sample: replicas_switched
actions:
  description: The actions the task sent, in order (in check mode, would send), such as V(create), V(verify-data),
    V(switch-replicas), V(switch-primaries), V(cutover), V(complete), V(reverse-traffic), V(reverse-cutover),
    V(cancel), V(retry).
  returned: always
  type: list
  elements: str
  sample: [verify-data, switch-replicas]
msg:
  description: Why the task stopped short of O(phase), when O(wait=false).
  returned: when O(wait=false) and the workflow is not at O(phase) yet
  type: str
"""

import time

from ansible_collections.planetscale.cloud.plugins.module_utils.adapter import run_module
from ansible_collections.planetscale.cloud.plugins.module_utils.base import ModuleFailure
from ansible_collections.planetscale.cloud.plugins.module_utils.options import (
    CONNECTION, CREDENTIALS, ORGANIZATION, WAIT)
from ansible_collections.planetscale.cloud.plugins.module_utils.resource import capital
from ansible_collections.planetscale.cloud.plugins.module_utils.settle import write_and_settle
from ansible_collections.planetscale.cloud.plugins.module_utils.workflow_machine import (
    PHASES, WorkflowMachine, phase_of, reached)
from ansible_collections.planetscale.cloud.plugins.module_utils.workflows import (
    newest_named, read_workflow, workflow_path)

TO_CREATE = ("source_keyspace", "target_keyspace", "tables")
SETTINGS = ("global_keyspace", "defer_secondary_keys", "on_ddl")  # sent when given; compared where a record has them


def stated(workflow):
    """What a workflow record says of the options set when it is created (None: the record does not say)."""
    def keyspace(key):
        return workflow[key].get("name") if isinstance(workflow.get(key), dict) else None
    tables = workflow.get("tables")
    return dict(source_keyspace=keyspace("source_keyspace"), target_keyspace=keyspace("target_keyspace"),
                global_keyspace=keyspace("global_keyspace"), on_ddl=workflow.get("on_ddl"),
                defer_secondary_keys=workflow.get("defer_secondary_keys"),
                tables=sorted(str(table.get("name")) for table in tables if isinstance(table, dict))
                if isinstance(tables, list) and tables else None)


class Workflow(WorkflowMachine):
    """Find the workflow or create it, then take it up the ladder to the task's phase."""

    option_sets = (CREDENTIALS, CONNECTION, ORGANIZATION, WAIT)
    argument_spec = dict(
        database=dict(type="str", required=True),
        name=dict(type="str", required=True),
        number=dict(type="int"),
        source_keyspace=dict(type="str", no_log=False),  # a keyspace name, not a key
        target_keyspace=dict(type="str", no_log=False),  # a keyspace name, not a key
        tables=dict(type="list", elements="str"),
        global_keyspace=dict(type="str", no_log=False),  # a keyspace name, not a key
        defer_secondary_keys=dict(type="bool"),
        on_ddl=dict(type="str", choices=["IGNORE", "STOP", "EXEC", "EXEC_IGNORE"]),
        phase=dict(type="str", choices=list(PHASES), default="created"),
        verify=dict(type="bool", default=True),
        retry=dict(type="bool", default=False),
        wait_timeout=dict(type="int", default=3600),
    )
    path_options = ("database",)
    must_exist = ("database",)
    names = ("name", "source_keyspace", "target_keyspace", "global_keyspace", "tables")  # none may be blank

    def validate(self):
        super().validate()
        params = self.params
        for name in self.names:
            values = params[name] if isinstance(params[name], list) else [params[name]]
            if any(value is not None and not value.strip() for value in values):
                raise ModuleFailure("%s must not be empty." % name)
        if params["number"] is not None and params["number"] < 1:
            raise ModuleFailure("number must be 1 or more, not %s." % params["number"])
        if params["tables"] is not None and not params["tables"]:
            raise ModuleFailure("tables must name at least one table to move.")
        if params["tables"] and len(set(params["tables"])) < len(params["tables"]):
            raise ModuleFailure("tables names a table twice: %s." % ", ".join(params["tables"]))
        if params["source_keyspace"] is not None and params["source_keyspace"] == params["target_keyspace"]:
            raise ModuleFailure("source_keyspace and target_keyspace are both %r: a workflow moves tables from one "
                                "keyspace to another." % params["source_keyspace"])

    def find(self):
        """The workflow numbered number, or the newest named name (read whole, with its data check), or None."""
        if self.params["number"] is None:
            listed = newest_named(self, self.params["name"])
            return None if listed is None else self.read(listed["number"]) or listed
        workflow = read_workflow(self, self.params["number"])
        if workflow is not None and workflow.get("name") != self.params["name"]:
            raise ModuleFailure("Workflow #%s of database %r is named %r, not %r: give its name, or leave number "
                                "out." % (self.params["number"], self.params["database"], workflow.get("name"),
                                          self.params["name"]))
        if workflow is None and self.params["phase"] != "cancelled":
            raise ModuleFailure("%s does not exist; leave number out to create it." % capital(self.label()))
        return workflow

    def compare(self, workflow):
        """Refuse options set at creation that differ from what the workflow's record says."""
        have = stated(workflow)
        differ = [name for name in TO_CREATE + SETTINGS if self.params[name] is not None and have[name] is not None
                  and (sorted(self.params[name]) if name == "tables" else self.params[name]) != have[name]]
        if differ:
            raise ModuleFailure("%s has %s: a workflow's keyspaces, tables and settings are set when it is created. "
                                "Leave %s out, or give another name to create a new workflow." % (
                                    capital(self.label(workflow)), ", ".join(
                                        "%s %r" % (name, have[name]) for name in differ), ", ".join(differ)))

    def create(self):
        missing = [name for name in TO_CREATE if not self.params[name]]
        if missing:
            raise ModuleFailure("%s does not exist, and source_keyspace, target_keyspace and tables are needed to "
                                "create it: give %s." % (capital(self.label()), ", ".join(missing)))
        body = dict((name, self.params[name]) for name in ("name",) + TO_CREATE + SETTINGS
                    if self.params[name] is not None)
        if self.ctx.check_mode:
            self.actions.append("create")
            return dict(body, number=None, state="pending", source_keyspace=dict(name=body["source_keyspace"]),
                        target_keyspace=dict(name=body["target_keyspace"]),
                        tables=[dict(name=table) for table in body["tables"]])

        def created(error, by_this_run=True):  # pylint: disable=unused-argument
            found = newest_named(self, self.params["name"])
            return None if found is None else (found, by_this_run)
        answer, by_this_run = write_and_settle(lambda: self.client.post(workflow_path(self), json=body),
                                               read_back=created, on_conflict=lambda error: created(error, False))
        if by_this_run:
            self.actions.append("create")
        number = answer.get("number") if isinstance(answer, dict) else None
        if number is None:
            raise self.client.wrong_answer("the created workflow has no number to read it by")
        return self.read(number) or answer

    def run(self):
        self.deadline = time.monotonic() + self.params["wait_timeout"]
        workflow = before = self.find()
        phase = self.params["phase"]
        if workflow is None and phase == "reversed":
            raise ModuleFailure("%s does not exist, so there is no traffic to reverse." % capital(self.label()))
        if workflow is not None:
            self.compare(workflow)
        elif phase != "cancelled":
            workflow = self.create()
        if workflow is not None:
            workflow = self.converge(workflow)
        result = dict(changed=bool(self.actions), actions=self.actions)
        if workflow is not None:
            result.update(workflow=workflow, phase=self.phase_shown(workflow))
        if self.message:
            result["msg"] = self.message
        if self.ctx.diff:
            result["diff"] = dict(before=self.view(before), after=self.view(workflow))
        return result

    def phase_shown(self, workflow):
        """The phase the workflow is in; reversed where the task asks for it and a workflow that switched nothing is
        there."""
        reversed_ = self.params["phase"] == "reversed" and reached("reversed", workflow)
        return "reversed" if reversed_ else phase_of(workflow)

    def view(self, workflow):
        """What the diff shows of a workflow: its phase and its state."""
        return {} if workflow is None else dict(phase=self.phase_shown(workflow), state=workflow.get("state"))


def main():
    run_module(Workflow)


if __name__ == "__main__":
    main()
