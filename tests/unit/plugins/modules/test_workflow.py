# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""workflow: the phase ladder from each state, the data check before a switch, waits and failures, lost answers,
check mode."""

from __future__ import annotations

import json

import pytest

from ansible_collections.planetscale.cloud.plugins.module_utils.base import ModuleFailure
from ansible_collections.planetscale.cloud.plugins.modules.workflow import Workflow

DATABASE = "/v1/organizations/acme/databases/app"
LOST = (502, dict(code="bad_gateway", message="Bad Gateway"))
CHECKED_AT = "2026-11-28T10:00:00Z"
# What each action does on the platform as this fake plays it: the state it passes through (reported by one read),
# then the state it ends in. Its answer is the workflow before it with only the state changed, as the platform's are.
ACTIONS = {
    "verify-data": ("verifying_data", None), "switch-replicas": ("switching_replicas", "switched_replicas"),
    "switch-primaries": ("switching_primaries", "switched_primaries"), "cutover": ("cutting_over", "cutover"),
    "complete": (None, "complete"), "reverse-traffic": ("reversing_traffic", "running"),
    "reverse-cutover": (None, "reversed_cutover"), "retry": ("copying", "running"),
    "cancel": ("cancelling", "cancelled"),
}


def workflow(state="running", **fields):
    """A workflow as a read gives it; lean: no workflow_errors, on_ddl and the like, and null actors."""
    return dict(dict(id="wf3", type="Workflow", name="move-orders", number=3, state=state,
                     created_at="2026-11-28T09:00:00Z", verify_data_at=None, verified_data_stale=False, may_retry=False,
                     retried_at=None, verify_data_by=None, source_keyspace=dict(id="k1", name="app"),
                     target_keyspace=dict(id="k2", name="sharded"), tables=[dict(id="t1", name="orders")]), **fields)


def checked(state="running", **fields):
    """A workflow whose data check is fresh and clean."""
    vdiff = dict(id="vd1", state="completed", has_mismatch=False, completed_at=CHECKED_AT, table_reports=[])
    return workflow(state, **dict(dict(verify_data_at=CHECKED_AT, vdiff=vdiff), **fields))


MISMATCH = dict(id="vd2", state="completed", has_mismatch=True, completed_at="2026-11-28T11:00:00Z", table_reports=[
    dict(table_name="orders", shard="-", mismatched_rows_count=1, extra_source_rows_count=0,
         extra_target_rows_count=2)])


class Platform:
    """The workflows of database app, as the platform plays them: actions change the state, through a state in
    transit that one read reports; answers are scripted per request (method and path below the database) when given
    in answers, and taken in turn."""

    def __init__(self, server, record=None, check=None, answers=None, lag=0):
        self.record, self.check, self.answers, self.lag = record, check, answers or {}, lag
        self.after = dict(copying="running", cancelling="cancelled").get((record or {}).get("state"))  # its end
        self.stale = None  # what reads show while they lag behind the last action
        server.default = self
        self.server = server

    def __call__(self, request):
        key = "%s %s" % (request["method"], request["path"][len(DATABASE):])
        if self.answers.get(key):
            answer = self.answers[key].pop(0)
            if answer[0] != "applied":
                return answer
            self.apply(key)  # applied, and its answer lost
            return LOST
        if key == "GET /workflows":
            return 200, dict(data=[self.record] if self.record else [], next_page=None)
        if key == "POST /workflows":
            self.record, self.after = dict(workflow("copying"), **json.loads(request["body"])), "running"
            return 201, dict(self.record, state="pending")
        if key == "GET /workflows/3":
            return self.read()
        if self.record is None:
            return 404, dict(code="not_found", message="Not Found")
        self.stale = self.record
        self.apply(key)
        return 200, dict(self.stale, state=self.after or self.record["state"])

    def apply(self, key):
        if key == "POST /workflows":
            self.record, self.after = workflow("copying"), "running"
            return
        action = "cancel" if key.startswith("DELETE") else key.rpartition("/")[2]
        transit, self.after = ACTIONS[action]
        if action == "verify-data":
            self.after = "running" if self.check is MISMATCH else "verified_data"
        self.record = dict(self.record, state=transit or self.after)

    def read(self):
        if self.record is None:
            return 404, dict(code="not_found", message="Not Found")
        if self.lag and self.stale:  # a read that does not show the last action yet
            self.lag -= 1
            return 200, self.stale
        shown, after = self.record, self.after
        if after is not None:
            self.after = None
            self.record = dict(self.record, state=after)
            if shown["state"] == "verifying_data":
                self.record.update(verify_data_at="2026-11-28T11:00:00Z", verified_data_stale=False,
                                   vdiff=self.check or dict(id="vd3", has_mismatch=False, table_reports=[]))
        return 200, shown

    def writes(self):
        return [r["method"] + " " + r["path"][len(DATABASE):] for r in self.server.requests if r["method"] != "GET"]


@pytest.fixture
def platform(server, sleeps):  # pylint: disable=unused-argument; a wait the code should not make ends, never hangs
    return lambda record=None, **options: Platform(server, record, **options)


MODULE = Workflow  # run by the `run` fixture (tests/unit/conftest.py) with ARGS
ARGS = dict(organization="acme", database="app", name="move-orders", service_token_id="svc", service_token="s3cret")
CREATE = dict(source_keyspace="app", target_keyspace="sharded", tables=["orders"])


def failure(run, **args):
    with pytest.raises(ModuleFailure) as caught:
        run(**args)
    return caught.value


def sent(fake):
    """The actions sent, by their names: create, verify-data, ..., cancel."""
    return ["create" if w.startswith("POST") else "cancel" if w.startswith("DELETE") else w.rpartition("/")[2]
            for w in fake.writes()]


# Bad input -----------------------------------------------------------------------------------

@pytest.mark.parametrize("args, sentence", [
    (dict(number=0), "number must be 1 or more, not 0."),
    (dict(name=" "), "name must not be empty."),
    (dict(tables=[]), "tables must name at least one table to move."),
    (dict(tables=["orders", " "]), "tables must not be empty."),
    (dict(tables=["orders", "orders"]), "tables names a table twice: orders, orders."),
    (dict(source_keyspace="app", target_keyspace="app"),
     "source_keyspace and target_keyspace are both 'app': a workflow moves tables from one keyspace to another."),
    (dict(wait_timeout=-1), "wait_timeout must be 0 or more seconds, not -1."),
    (dict(database="a/b"), "database must be a name, not 'a/b'."),
])
def test_bad_input_is_a_sentence_before_any_request(server, run, args, sentence):
    assert failure(run, **args).msg == sentence
    assert server.requests == []


# The ladder ----------------------------------------------------------------------------------

@pytest.mark.parametrize("record, phase, actions, state, shown", [
    (None, "created", ["create"], "running", "created"),
    (None, "completed", ["create", "verify-data", "switch-primaries", "cutover", "complete"], "complete", "completed"),
    (workflow("copying"), "created", [], "running", "created"),
    (workflow(), "verified", ["verify-data"], "verified_data", "verified"),
    (checked(), "verified", [], "running", "verified"),
    (workflow(verify_data_at=CHECKED_AT, verified_data_stale=True), "replicas_switched",
     ["verify-data", "switch-replicas"], "switched_replicas", "replicas_switched"),
    (checked("verified_data"), "replicas_switched", ["switch-replicas"], "switched_replicas", "replicas_switched"),
    (checked(), "primaries_switched", ["switch-primaries"], "switched_primaries", "primaries_switched"),
    (checked("switched_replicas"), "replicas_switched", [], "switched_replicas", "replicas_switched"),
    (checked("switched_replicas"), "primaries_switched", ["switch-primaries"], "switched_primaries",
     "primaries_switched"),
    (checked("switched_primaries"), "replicas_switched", [], "switched_primaries", "primaries_switched"),
    (checked("switched_primaries"), "completed", ["cutover", "complete"], "complete", "completed"),
    (checked("cutover"), "completed", ["complete"], "complete", "completed"),
    (checked("reversed_cutover"), "completed", ["complete"], "complete", "completed"),
    (checked("completed"), "created", [], "completed", "completed"),
    (checked("complete"), "completed", [], "complete", "completed"),  # the platform's word in some answers
    (checked("switched_replicas"), "reversed", ["reverse-traffic"], "running", "reversed"),
    (checked("switched_primaries"), "reversed", ["reverse-traffic"], "running", "reversed"),
    (checked("cutover"), "reversed", ["reverse-cutover"], "reversed_cutover", "reversed"),
    (checked("reversed_cutover"), "reversed", [], "reversed_cutover", "reversed"),
    (workflow(), "reversed", [], "running", "reversed"),
    (workflow("copying"), "cancelled", ["cancel"], "cancelled", "cancelled"),
    (checked("switched_primaries"), "cancelled", ["cancel"], "cancelled", "cancelled"),
    (workflow("error"), "cancelled", ["cancel"], "cancelled", "cancelled"),
    (workflow("cancelled"), "cancelled", [], "cancelled", "cancelled"),
    (workflow("cancelling"), "cancelled", [], "cancelled", "cancelled"),
    (None, "cancelled", [], None, None),
])
def test_each_phase_from_each_state_sends_the_actions_that_lead_there_in_order(run, platform, record, phase, actions,
                                                                               state, shown):
    fake = platform(record)
    result = run(phase=phase, **CREATE)
    assert sent(fake) == actions
    assert result["actions"] == actions and result["changed"] is bool(actions)
    assert (result.get("workflow") or {}).get("state") == state and result.get("phase") == shown
    if actions:  # a second run finds the workflow there and sends nothing
        assert run(phase=phase)["actions"] == [] and sent(fake) == actions


def test_a_new_workflow_is_created_as_given_and_waited_for_with_growing_intervals(server, run, platform, sleeps):
    fake = platform(answers={"GET /workflows/3": [(200, workflow("pending"))]})
    result = run(global_keyspace="seq", on_ddl="STOP", defer_secondary_keys=True, **CREATE)
    assert sent(fake) == ["create"] and result["workflow"]["state"] == "running"
    assert json.loads(server.requests[1]["body"]) == dict(name="move-orders", source_keyspace="app",
                                                          target_keyspace="sharded", tables=["orders"],
                                                          global_keyspace="seq", on_ddl="STOP",
                                                          defer_secondary_keys=True)
    assert sleeps == [1.0, 1.5]


def test_an_action_is_judged_by_reads_not_by_its_answer(run, platform, sleeps):
    """The answer says switched_replicas at once; reads that lag behind are waited for, and nothing is sent again."""
    fake = platform(checked(), lag=2)
    result = run(phase="replicas_switched")
    assert sent(fake) == ["switch-replicas"] and result["workflow"]["state"] == "switched_replicas"
    assert len(sleeps) == 3


def test_the_workflow_is_the_newest_of_its_name(server, run, platform):
    listed = [dict(workflow("cancelled"), number=1), dict(workflow("copying"), number=3), workflow(name="other")]
    fake = platform(checked("switched_replicas"), answers={"GET /workflows": [(200, dict(data=listed))]})
    assert run(phase="replicas_switched")["workflow"]["number"] == 3
    assert [r["path"][len(DATABASE):] for r in server.requests] == ["/workflows", "/workflows/3"]
    assert sent(fake) == []


# The data check ------------------------------------------------------------------------------

def test_differences_refuse_the_switch_naming_each_table(run, platform):
    fake = platform(workflow(), check=MISMATCH)
    caught = failure(run, phase="primaries_switched")
    assert caught.msg == (
        "Workflow 'move-orders' (#3) of database 'app' found differences between the source and the target keyspace "
        "when it verified the data: table 'orders' (1 mismatched row, 0 only in the source, 2 only in the target). "
        "Traffic is not switched: fix the rows, then run the task again, which verifies them again; or cancel the "
        "workflow (phase: cancelled).")
    assert sent(fake) == ["verify-data"] and caught.result["actions"] == ["verify-data"]
    assert caught.result["phase"] == "created"


@pytest.mark.parametrize("record, words", [
    (workflow(verify_data_at=CHECKED_AT, verified_data_stale=True), "its data check of %s is stale" % CHECKED_AT),
    (workflow(), "its data has not been verified"),
    (workflow(verify_data_at=CHECKED_AT, vdiff=MISMATCH), "found differences"),
])
def test_without_verify_a_check_that_is_stale_missing_or_unclean_refuses_the_switch(run, platform, record, words):
    fake = platform(record)
    assert words in failure(run, phase="replicas_switched", verify=False).msg
    assert sent(fake) == []


# Failures ------------------------------------------------------------------------------------

@pytest.mark.parametrize("record, phase, sentence", [
    (workflow("error", workflow_errors="table orders has no primary key.", may_retry=True), "verified",
     "Workflow 'move-orders' (#3) of database 'app' is in state 'error': table orders has no primary key. Set retry "
     "to true to retry it, or cancel it (phase: cancelled)."),
    (workflow("error"), "created",
     "Workflow 'move-orders' (#3) of database 'app' is in state 'error': the platform gives no reason. The platform "
     "does not let it be retried: cancel it (phase: cancelled) and create it again."),
    (checked("cutover"), "cancelled",
     "Workflow 'move-orders' (#3) of database 'app' is in state 'cutover': its cutover drops the moved tables from "
     "the source keyspace, so it can no longer be cancelled. Complete it (phase: completed), or reverse the cutover "
     "(phase: reversed) to route the source keyspace's queries to them again."),
    (checked("completed"), "cancelled",
     "Workflow 'move-orders' (#3) of database 'app' is in state 'completed': its cutover drops the moved tables from "
     "the source keyspace, so it can no longer be cancelled."),
    (checked("completed"), "reversed",
     "Workflow 'move-orders' (#3) of database 'app' is completed: its cutover dropped the moved tables from the "
     "source keyspace, so its traffic cannot be reversed; move them back with a new workflow."),
    (workflow("cancelled"), "verified",
     "Workflow 'move-orders' (#3) of database 'app' is cancelled, so it cannot reach phase 'verified': give another "
     "name to create a new workflow."),
    (workflow("stopped"), "verified",
     "Workflow 'move-orders' (#3) of database 'app' is stopped: its replication does not run, so it cannot reach "
     "phase 'verified'. Look at it in the platform's web application, or cancel it (phase: cancelled)."),
    (workflow("paused"), "created",
     "Workflow 'move-orders' (#3) of database 'app' is in state 'paused', which this collection does not know (it "
     "knows pending, copying, verifying_data, switching_replicas, switching_primaries, reversing_traffic, "
     "reversing_traffic_for_cancel, cutting_over, cancelling, running, stopped, verified_data, switched_replicas, "
     "switched_primaries, cutover, reversed_cutover, completed, error, cancelled), so it cannot tell which phase the "
     "workflow is in: look at it in the platform's web application, and update the collection."),
    (workflow(tables=[dict(name="orders"), dict(name="items")]), "created",
     "Workflow 'move-orders' (#3) of database 'app' has tables ['items', 'orders']: a workflow's keyspaces, tables "
     "and settings are set when it is created. Leave tables out, or give another name to create a new workflow."),
])
def test_a_workflow_that_cannot_reach_the_phase_is_a_sentence_before_any_write(run, platform, record, phase, sentence):
    fake = platform(record)
    assert failure(run, phase=phase, **CREATE).msg == sentence
    assert sent(fake) == []


def test_an_error_during_a_wait_ends_it_at_once_with_the_errors(run, platform, sleeps):
    fake = platform(checked(), answers={"GET /workflows/3": [
        (200, checked()), (200, checked("error", workflow_errors="vreplication stopped: duplicate key"))]})
    caught = failure(run, phase="replicas_switched")
    assert caught.msg.startswith("Workflow 'move-orders' (#3) of database 'app' is in state 'error': vreplication "
                                 "stopped: duplicate key.")
    assert sent(fake) == ["switch-replicas"] and caught.result["changed"] is True
    assert len(sleeps) == 0


def test_retry_retries_a_workflow_the_platform_may_retry_then_goes_on(run, platform):
    """A read that still shows the error of before is waited past, not taken for the retry's failure."""
    fake = platform(workflow("error", may_retry=True, workflow_errors="copy failed"), lag=1)
    assert run(retry=True, phase="verified")["actions"] == ["retry", "verify-data"]
    assert sent(fake) == ["retry", "verify-data"]


def test_a_timeout_names_the_last_state(run, platform):
    platform(workflow("copying"), answers={"GET /workflows/3": [(200, workflow("copying"))] * 30})
    assert failure(run, wait_timeout=5).msg == (
        "Waited 5 seconds (wait_timeout) for workflow 'move-orders' (#3) of database 'app' to end state 'copying'; "
        "its last state was 'copying'. Raise wait_timeout, or set wait to false and run the task again later.")


def test_what_a_new_workflow_needs_is_named(run, platform):
    fake = platform()
    assert failure(run, source_keyspace="app").msg == (
        "Workflow 'move-orders' of database 'app' does not exist, and source_keyspace, target_keyspace and tables "
        "are needed to create it: give target_keyspace, tables.")
    assert failure(run, phase="reversed").msg == (
        "Workflow 'move-orders' of database 'app' does not exist, so there is no traffic to reverse.")
    assert sent(fake) == []


def test_a_number_must_name_the_workflow_of_that_name(run, platform):
    platform(workflow(name="other"))
    assert failure(run, number=3).msg == (
        "Workflow #3 of database 'app' is named 'other', not 'move-orders': give its name, or leave number out.")


# Lost answers, check mode, no waiting --------------------------------------------------------

def test_an_action_whose_answer_is_lost_is_read_back_not_sent_twice(run, platform):
    fake = platform(checked(), answers={"PATCH /workflows/3/switch-primaries": [("applied",)]})
    result = run(phase="primaries_switched")
    assert sent(fake) == ["switch-primaries"] and result["actions"] == ["switch-primaries"]
    assert result["workflow"]["state"] == "switched_primaries"


def test_a_create_whose_answer_is_lost_is_read_back_not_sent_twice(run, platform):
    fake = platform(answers={"POST /workflows": [("applied",)]})
    result = run(**CREATE)
    assert sent(fake) == ["create"] and result["actions"] == ["create"] and result["workflow"]["number"] == 3


def test_an_action_refused_once_it_is_under_way_is_read_back_as_sent(run, platform):
    """The client sends a PATCH again after a lost answer; the platform refuses the second once the first moved the
    workflow on."""
    fake = platform(checked(), answers={"PATCH /workflows/3/switch-replicas": [
        (422, dict(code="unprocessable", message="Workflow is switching_replicas"))], "GET /workflows/3": [
        (200, checked()), (200, checked("switching_replicas")), (200, checked("switched_replicas"))]})
    result = run(phase="replicas_switched")
    assert sent(fake) == ["switch-replicas"] and result["actions"] == ["switch-replicas"] and result["changed"] is True


def test_an_action_refused_while_the_workflow_has_not_moved_is_the_platforms_sentence(run, platform):
    fake = platform(checked(), answers={"PATCH /workflows/3/switch-replicas": [
        (422, dict(code="unprocessable", message="Replicas cannot be switched now"))]})
    assert "Replicas cannot be switched now" in failure(run, phase="replicas_switched").msg
    assert sent(fake) == ["switch-replicas"]


def test_check_mode_predicts_the_actions_and_the_phase_without_writing(run, platform):
    fake = platform(workflow())
    result = run(phase="completed", check_mode=True, diff=True)
    assert result["actions"] == ["verify-data", "switch-primaries", "cutover", "complete"]
    assert result["changed"] is True and result["phase"] == "completed"
    assert result["diff"] == dict(before=dict(phase="created", state="running"),
                                  after=dict(phase="completed", state="completed"))
    assert sent(fake) == []
    result = run(phase="created", check_mode=True, diff=True, name="new-one", **CREATE)
    assert result["actions"] == ["create"]
    assert result["diff"] == dict(before={}, after=dict(phase="created", state="running"))
    assert sent(fake) == []


def test_without_wait_one_action_is_sent_and_the_task_says_how_to_go_on(run, platform):
    fake = platform(checked())
    result = run(phase="primaries_switched", wait=False)
    assert sent(fake) == ["switch-primaries"] and result["phase"] == "verified"
    assert result["msg"] == ("Workflow 'move-orders' (#3) of database 'app' is in state 'switching_primaries' after "
                             "the task sent switch-primaries; wait is false, so run the task again to take it to "
                             "phase 'primaries_switched'.")
