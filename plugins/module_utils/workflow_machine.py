# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The MoveTables workflow's phases, as the workflow module drives them: copied, its data verified, replica then
primary traffic switched, cut over and completed; or traffic reversed; or cancelled.

The phases form a ladder. A workflow at or past the phase a task asks for is left alone, so a task run again sends
nothing it sent before; otherwise the next action is sent and waited for, one rung at a time, and no rung the platform
requires is skipped (completed is the cutover, then complete). Where a workflow is, is judged by its state as a read
gives it, never by an action's answer, which on the platform changes only the state it reports. Traffic is switched
only after a fresh data check that found no differences. Each action is settled (an answer lost is read back, never
sent twice) and each step waited for with one Waiter; a state from which the phase cannot be reached (error,
cancelled, stopped) ends the task at once with a sentence that says why and what to do.
"""

from __future__ import annotations

import time
from datetime import datetime, timezone

from ansible_collections.planetscale.cloud.plugins.module_utils.base import Module, ModuleFailure
from ansible_collections.planetscale.cloud.plugins.module_utils.resource import capital
from ansible_collections.planetscale.cloud.plugins.module_utils.settle import Waiter, write_and_settle
from ansible_collections.planetscale.cloud.plugins.module_utils.workflows import workflow_path

# States a workflow passes through, each with the state it ends in when all goes well (what check mode predicts).
TRANSIT = dict(pending="running", copying="running", verifying_data="verified_data",
               switching_replicas="switched_replicas", switching_primaries="switched_primaries",
               reversing_traffic="running", reversing_traffic_for_cancel="cancelled", cutting_over="cutover",
               cancelling="cancelled")
# The settled states on the way forward, each with its rung of the ladder (a clean, fresh data check adds one to 0).
RANK = dict(running=0, stopped=0, verified_data=0, switched_replicas=2, switched_primaries=3, cutover=4,
            reversed_cutover=4, completed=5)
PHASE_RANK = dict(created=0, verified=1, replicas_switched=2, primaries_switched=3, completed=5)
PHASES = tuple(PHASE_RANK) + ("reversed", "cancelled")
STATES = tuple(TRANSIT) + tuple(RANK) + ("error", "cancelled")  # the platform's 19
SOURCE = frozenset(("pending", "copying", "running", "stopped", "verifying_data", "verified_data"))  # nothing switched
CUT_OVER = ("cutting_over", "cutover", "reversed_cutover", "completed")  # the moved tables have left the source

# Each action: method, path segment below the workflow, its states in transit, the states that show it done (or
# passed), and the state check mode predicts. verify-data and retry are judged by their stamps instead.
ACTIONS = {
    "verify-data": ("PATCH", "verify-data", ("verifying_data",), (), "verified_data"),
    "switch-replicas": ("PATCH", "switch-replicas", ("switching_replicas",),
                        ("switched_replicas", "switching_primaries", "switched_primaries") + CUT_OVER,
                        "switched_replicas"),
    "switch-primaries": ("PATCH", "switch-primaries", ("switching_primaries",), ("switched_primaries",) + CUT_OVER,
                         "switched_primaries"),
    "cutover": ("PATCH", "cutover", ("cutting_over",), CUT_OVER[1:], "cutover"),
    "complete": ("PATCH", "complete", (), ("completed",), "completed"),
    "reverse-traffic": ("PATCH", "reverse-traffic", ("reversing_traffic",), ("running", "verified_data", "stopped"),
                        "running"),
    "reverse-cutover": ("PATCH", "reverse-cutover", (), ("reversed_cutover",), "reversed_cutover"),
    "cancel": ("DELETE", None, ("cancelling", "reversing_traffic_for_cancel"), ("cancelled",), "cancelled"),
    "retry": ("PATCH", "retry", (), (), "copying"),
}


def state_of(workflow):
    """A workflow's state; the complete action's answer says complete, a state the platform's list does not have."""
    state = (workflow or {}).get("state")
    return "completed" if state == "complete" else state


def differences(workflow):
    """The tables in which the workflow's last data check (its vdiff) found rows that differ, each as (table,
    mismatched rows, rows only in the source, rows only in the target)."""
    vdiff = workflow.get("vdiff") if isinstance(workflow.get("vdiff"), dict) else {}
    found = []
    for report in [report for report in vdiff.get("table_reports") or [] if isinstance(report, dict)]:
        counts = tuple(report[key] if isinstance(report.get(key), int) else 0 for key in (
            "mismatched_rows_count", "extra_source_rows_count", "extra_target_rows_count"))
        if any(counts):
            found.append((report.get("table_name"),) + counts)
    return found


def mismatch(workflow):
    """Whether the workflow's last data check found differences, named by table or not."""
    vdiff = workflow.get("vdiff") if isinstance(workflow.get("vdiff"), dict) else {}
    return bool(vdiff.get("has_mismatch") or differences(workflow))


def verified(workflow):
    """Whether the workflow's data was checked, the check is not stale, and it found no differences."""
    checked = workflow.get("verify_data_at") or state_of(workflow) == "verified_data"
    return bool(checked) and not workflow.get("verified_data_stale") and not mismatch(workflow)


def verification(workflow):
    """What changes when a data check ends: its time and the vdiff's."""
    vdiff = workflow.get("vdiff") if isinstance(workflow.get("vdiff"), dict) else {}
    return workflow.get("verify_data_at"), vdiff.get("id"), vdiff.get("completed_at")


def reached(phase, workflow):
    """Whether a workflow is at or past a phase: nothing is left to send for it."""
    state = state_of(workflow)
    if phase == "cancelled":
        return state == "cancelled"
    if phase == "reversed":
        return state in SOURCE or state == "reversed_cutover"
    if state not in RANK:
        return False
    return RANK[state] + (1 if RANK[state] == 0 and verified(workflow) else 0) >= PHASE_RANK[phase]


def phase_of(workflow):
    """The phase a workflow is in, for the result and the diff (None: no workflow); in transit, the phase it left."""
    if workflow is None:
        return None
    state = state_of(workflow)
    if state in ("cancelled", "reversed_cutover"):
        return "cancelled" if state == "cancelled" else "reversed"
    if state in TRANSIT:
        left = "switched_replicas" if state == "switching_primaries" and workflow.get("replicas_switched") else (
            "switched_primaries" if state == "cutting_over" else "running")
        workflow = dict(workflow, state=left)
    return next((phase for phase in reversed(tuple(PHASE_RANK)) if reached(phase, workflow)), "created")


def done(action, before, found):
    """Whether a workflow read after an action shows it done, or in a state the ladder judges (error, cancelled)."""
    state = state_of(found)
    if action == "retry":
        return state != "error" or found.get("retried_at") != before.get("retried_at")
    if state in ("error", "cancelled") and action != "cancel":
        return True
    if action == "verify-data":
        return state != "verifying_data" and verification(found) != verification(before)
    return state in ACTIONS[action][3]


def progressed(action, before, found):
    """Whether a workflow read back after an action whose answer was lost shows that the action was applied."""
    state = state_of(found)
    if action == "verify-data":
        return state == "verifying_data" or verification(found) != verification(before)
    if action == "retry":
        return done(action, before, found)
    return state in ACTIONS[action][2] + ACTIONS[action][3]


def plural(count, word):
    return "%d %s%s" % (count, word, "" if count == 1 else "s")


class WorkflowMachine(Module):
    """A MoveTables workflow driven to the phase a task asks for (the module finds or creates the workflow)."""

    def __init__(self, params, ctx=None):
        super().__init__(params, ctx)
        self.deadline = None
        self.actions = []  # the actions this run applied (or, in check mode, would apply)
        self.tried = []  # the actions this run sent: verify-data and retry are sent once a run
        self.message = None

    def label(self, workflow=None):
        number = (workflow or {}).get("number") or self.params.get("number")
        return "workflow %r%s of database %r" % (self.params["name"], " (#%s)" % number if number else "",
                                                 self.params["database"])

    def read(self, number):
        return self.client.get(workflow_path(self, number), missing_ok=True)

    def failure(self, sentence, workflow):
        """The task's failure: the sentence, what was sent, and the workflow as last read."""
        return ModuleFailure(sentence, changed=bool(self.actions), actions=self.actions, workflow=workflow,
                             phase=phase_of(workflow))

    # The ladder ---------------------------------------------------------------------------------

    def converge(self, workflow):
        """Send the actions that take the workflow to the task's phase, each waited for; the workflow then."""
        while True:
            action = self.next_action(self.params["phase"], workflow)
            if action is None:
                return workflow
            workflow = self.settle(workflow) if action == "wait" else self.act(action, workflow)
            if self.message:  # not waiting: the rest is for a later run
                return workflow

    def next_action(self, phase, workflow):
        """The action that takes the workflow one rung on, "wait" for a state in transit, or None once there."""
        state, label = state_of(workflow), capital(self.label(workflow))
        if state not in STATES:
            raise self.failure(
                "%s is in state %r, which this collection does not know (it knows %s), so it cannot tell which phase "
                "the workflow is in: look at it in the platform's web application, and update the collection." % (
                    label, workflow.get("state"), ", ".join(STATES)), workflow)
        if reached(phase, workflow):
            return None
        if phase == "cancelled":
            if state in CUT_OVER:
                raise self.failure(
                    "%s is in state %r: its cutover drops the moved tables from the source keyspace, so it can no "
                    "longer be cancelled.%s" % (label, workflow.get("state"), "" if state == "completed" else
                                                " Complete it (phase: completed), or reverse the cutover (phase: "
                                                "reversed) to route the source keyspace's queries to them again."),
                    workflow)
            return "wait" if state in ACTIONS["cancel"][2] else "cancel"  # a cancel in flight is waited for
        if state == "error":
            return self.after_error(workflow)
        if state == "cancelled":
            raise self.failure("%s is cancelled, so it cannot reach phase %r: give another name to create a new "
                               "workflow." % (label, phase), workflow)
        if state in TRANSIT:
            return None if phase == "created" and not self.params["wait"] else "wait"
        if phase == "reversed":
            if state == "completed":
                raise self.failure("%s is completed: its cutover dropped the moved tables from the source keyspace, so "
                                   "its traffic cannot be reversed; move them back with a new workflow." % label,
                                   workflow)
            return "reverse-cutover" if state == "cutover" else "reverse-traffic"
        if state == "stopped":
            raise self.failure("%s is stopped: its replication does not run, so it cannot reach phase %r. Look at it "
                               "in the platform's web application, or cancel it (phase: cancelled)." % (label, phase),
                               workflow)
        if state in ("cutover", "reversed_cutover"):
            return "complete"
        if state == "switched_primaries":
            return "cutover"
        if not verified(workflow):
            return self.check_data(workflow)
        return "switch-replicas" if phase == "replicas_switched" else "switch-primaries"

    def after_error(self, workflow):
        """retry, where the task allows it and the platform does; otherwise the sentence with the workflow's errors."""
        if self.params["retry"] and workflow.get("may_retry") and "retry" not in self.tried:
            return "retry"
        errors = str(workflow.get("workflow_errors") or "").strip().rstrip(".") or "the platform gives no reason"
        remedy = ("Set retry to true to retry it, or cancel it (phase: cancelled)." if workflow.get("may_retry") else
                  "The platform does not let it be retried: cancel it (phase: cancelled) and create it again.")
        raise self.failure("%s is in state 'error': %s. %s" % (capital(self.label(workflow)), errors, remedy),
                           workflow)

    def check_data(self, workflow):
        """verify-data before traffic is switched, or the sentence that refuses to switch it."""
        label, again = capital(self.label(workflow)), "verify-data" in self.tried
        if mismatch(workflow) and (again or not self.params["verify"]):
            tables = "; ".join("table %r (%s, %d only in the source, %d only in the target)" % (
                table, plural(rows, "mismatched row"), source, target) for table, rows, source, target in
                differences(workflow)) or "the platform names no table"
            raise self.failure(
                "%s found differences between the source and the target keyspace when it verified the data: %s. "
                "Traffic is not switched: fix the rows, then run the task again, which verifies them again; or cancel "
                "the workflow (phase: cancelled)." % (label, tables), workflow)
        if again or not self.params["verify"]:
            stale = "its data check of %s is stale" % workflow["verify_data_at"] if workflow.get("verify_data_at") \
                else "its data has not been verified"
            remedy = ("The platform calls the check the task ran stale too: look at the workflow in the platform's "
                      "web application." if again else "Set verify to true to verify it first.")
            raise self.failure("%s cannot switch traffic: %s, and traffic is only switched after a fresh data check "
                               "that finds no differences. %s" % (label, stale, remedy), workflow)
        return "verify-data"

    # Actions and waits --------------------------------------------------------------------------

    def act(self, action, workflow):
        """Send an action (check mode: predict it), then wait until the workflow shows it done."""
        self.tried.append(action)
        if self.ctx.check_mode:
            self.actions.append(action)
            return self.predicted(action, workflow)
        method, segment = ACTIONS[action][:2]
        number = workflow["number"]

        # A refusal read back as well: the client sends a PATCH or DELETE again after a lost answer, and the platform
        # refuses the second one once the first has moved the workflow on (this run's action, as far as it can tell).
        def read_back(error):  # pylint: disable=unused-argument
            found = self.read(number)
            return (found, True) if found is not None and progressed(action, workflow, found) else None
        dummy, by_this_run = write_and_settle(
            lambda: self.client.request(method, workflow_path(self, number, *[part for part in (segment,) if part])),
            read_back=read_back, on_conflict=read_back)
        if by_this_run:
            self.actions.append(action)
        return self.wait_for(workflow, "to finish %s" % action, lambda found: done(action, workflow, found),
                             " after the task sent %s" % action)

    def settle(self, workflow):
        """Wait until the workflow is in transit no more (check mode: predict where its state ends)."""
        state = state_of(workflow)
        if self.ctx.check_mode:
            return dict(workflow, state=TRANSIT[state])
        return self.wait_for(workflow, "to end state %r" % state, lambda found: state_of(found) not in TRANSIT, "",
                             current=workflow)

    def wait_for(self, workflow, goal, finished, after, current=None):
        """With wait, read until finished(workflow); without it, read once and leave the rest to a later run."""
        label, number = self.label(workflow), workflow["number"]

        def failed(found):
            return "%s was deleted while waiting for it %s." % (capital(label), goal) if found is None else None
        if not self.params["wait"]:
            found = current or self.read(number)
            if found is None:
                raise self.failure(failed(found), workflow)
            if not finished(found):
                self.message = ("%s is in state %r%s; wait is false, so run the task again to take it to phase %r." % (
                    capital(label), found.get("state"), after, self.params["phase"]))
            return found
        waiter = Waiter("%s %s" % (label, goal), done=lambda found: finished(found) or state_of(found) not in STATES,
                        state=lambda found: (found or {}).get("state"), failed=failed, key="workflow",
                        timed_out=lambda found, timeout: (
                            "Waited %s seconds (wait_timeout) for %s %s; its last state was %r. Raise wait_timeout, or "
                            "set wait to false and run the task again later." % (
                                self.params["wait_timeout"], label, goal, (found or {}).get("state"))))
        left = max(0.0, self.deadline - time.monotonic())
        return waiter.wait(lambda: self.read(number), left, current=current, changed=bool(self.actions),
                           actions=self.actions)

    def predicted(self, action, workflow):
        """The workflow as check mode predicts it after an action: a data check predicted clean."""
        if action != "verify-data":
            return dict(workflow, state=ACTIONS[action][4])
        now = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        return dict(workflow, state="verified_data" if state_of(workflow) in SOURCE else workflow.get("state"),
                    verify_data_at=now, verified_data_stale=False, vdiff=dict(has_mismatch=False, table_reports=[]))
