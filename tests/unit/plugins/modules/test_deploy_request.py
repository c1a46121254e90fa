# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""deploy_request: find or open the request, deploy it, the cutover and the revert window, and the failures."""

from __future__ import annotations

import json

import pytest

from ansible_collections.planetscale.cloud.plugins.module_utils.base import ModuleFailure, TaskContext
from ansible_collections.planetscale.cloud.plugins.modules.deploy_request import DeployRequest

DATABASE = "/v1/organizations/acme/databases/shop"
NOT_FOUND = (404, {"code": "not_found", "message": "Not Found"})
LOST = (502, {"code": "bad_gateway", "message": "Bad Gateway"})
LINT = dict(lint_error="NO_UNIQUE_KEY", subject_type="table", table_name="logs", keyspace_name="shop",
            error_description="Table 'logs' has no primary key or unique key",
            docs_url="https://planetscale.com/docs/learn/change-single-unique-key")


ENOUGH = dict(enough_storage=True, upgradeable=True, storage_bytes_needed=1048576, storage_report={})


class Platform:
    """Answers by method and path below the database; each route's answers are taken in turn, the last one repeats. A
    storage check not scripted says there is enough storage."""

    def __init__(self, server, **routes):
        self.routes = {}
        self.server = server
        for key, answers in routes.items():  # GET__deploy_requests__3 is GET /deploy-requests/3; GET_ the database
            method, rest = key.split("_", 1)
            rest = rest.replace("__", "/")
            self.routes["%s %s" % (method, ("/" + rest[1:] if rest.startswith("_") else rest).replace("_", "-"))] = \
                list(answers)
        server.default = self

    def __call__(self, request):
        key = "%s %s" % (request["method"], request["path"][len(DATABASE):])
        answers = self.routes.get(key)
        if not answers and key.startswith("GET ") and key.endswith("/storage-check"):
            return 200, ENOUGH
        if not answers:
            return 418, {"code": "unscripted", "message": key}
        return answers.pop(0) if len(answers) > 1 else answers[0]

    def sent(self):
        """The requests, as METHOD /path below the database."""
        return ["%s %s" % (r["method"], r["path"][len(DATABASE):]) for r in self.server.requests]

    def writes(self):
        return [line for line in self.sent() if not line.startswith("GET")]


@pytest.fixture
def platform(server, sleeps):  # pylint: disable=unused-argument; a wait the code should not make ends, never hangs
    server.httpd.RequestHandlerClass.do_PUT = server.httpd.RequestHandlerClass.do_GET  # the auto-apply settings
    return lambda **routes: Platform(server, **routes)


def request(state="ready", number=3, open_=True, **deployment):
    return dict(id="dr%s" % number, number=number, branch="dev", into_branch="main", notes="",
                state="open" if open_ else "closed", deployment_state=state, approved=True,
                created_at="2026-01-10T10:00:00Z", html_url="https://app/shop/deploy-requests/%s" % number,
                deployment=dict(dict(state=state, deployable=state == "ready", lint_errors=[], auto_cutover=True,
                                     auto_delete_branch=False), **deployment))


def page(*requests):
    return 200, dict(data=list(requests), next_page=None)


MODULE = DeployRequest  # run by the `run` fixture (tests/unit/conftest.py) with ARGS
ARGS = dict(organization="acme", database="shop", service_token_id="svc", service_token="s3cret")


def failure(run, **args):
    with pytest.raises(ModuleFailure) as caught:
        run(**args)
    return caught.value


# Bad input -----------------------------------------------------------------------------------

@pytest.mark.parametrize("args, sentence", [
    (dict(number=0), "number must be 1 or more, not 0."),
    (dict(), "Give number (to name a deploy request) or branch (the branch to deploy from), to say which deploy "
             "request this is."),
    (dict(number=3, state="closed", revert_window="revert"),
     "revert_window=revert cannot be used with state=closed, which only closes the deploy request: leave it out."),
    (dict(number=3, state="closed", notes="x", cutover=True),
     "notes, cutover cannot be used with state=closed, which only closes the deploy request: leave them out."),
    (dict(branch="dev", cutover=True), "cutover only acts with state=deployed: set state to deployed, or leave it out."),
    (dict(branch="dev", instant_ddl=True, revert_window="skip"),
     "instant_ddl, revert_window=skip only act with state=deployed: set state to deployed, or leave them out."),
    (dict(branch="dev", wait_timeout=-1), "wait_timeout must be 0 or more seconds, not -1."),
    (dict(branch="a/b"), "branch must be a name, not 'a/b'."),
    (dict(branch="UPPER"), "branch must be a branch name the platform accepts: 1 to 63 characters, lower-case "
                           "letters, digits, '-' and '_', starting with a letter or digit; not 'UPPER'."),
    (dict(branch="has space"), "branch must be a branch name the platform accepts: 1 to 63 characters, lower-case "
                               "letters, digits, '-' and '_', starting with a letter or digit; not 'has space'."),
    (dict(branch="dev", into_branch="Main Branch"),
     "into_branch must be a branch name the platform accepts: 1 to 63 characters, lower-case letters, digits, '-' and "
     "'_', starting with a letter or digit; not 'Main Branch'."),
    (dict(number=3, state="cancelled", force_cutover=True, throttle_ratio=10),
     "throttle_ratio, force_cutover cannot be used with state=cancelled, which only cancels the deploy of the deploy "
     "request: leave them out."),
    (dict(branch="dev", complete_errored=True, throttle_ratio=10),
     "complete_errored only acts with state=deployed: set state to deployed, or leave it out."),
    (dict(branch="dev", throttle_ratio=96), "throttle_ratio must be 0 to 95, not 96."),
    (dict(number=3, state="closed", into_branch="Main"),
     "into_branch must be a branch name the platform accepts: 1 to 63 characters, lower-case letters, digits, '-' and "
     "'_', starting with a letter or digit; not 'Main'."),
])
def test_bad_input_is_a_sentence_before_any_request(server, run, args, sentence):
    assert failure(run, **args).msg == sentence
    assert server.requests == []


# Finding and opening -------------------------------------------------------------------------

def test_a_new_request_is_opened_into_the_default_branch_and_waited_for_until_deployable(server, run, platform, sleeps):
    fake = platform(GET_=[(200, dict(name="shop", default_branch="main"))], GET__deploy_requests=[page()],
                    POST__deploy_requests=[(201, request("pending"))],
                    GET__deploy_requests__3=[(200, request("pending")), (200, request("pending")), (200, request())])
    result = run(branch="dev", notes="Adds logs", auto_cutover=False)
    assert result["changed"] is True
    assert result["status"] == "deployable"
    assert result["deploy_request"]["number"] == 3
    assert fake.sent() == ["GET ", "GET /deploy-requests", "POST /deploy-requests"] + ["GET /deploy-requests/3"] * 3
    assert json.loads(server.requests[2]["body"]) == dict(branch="dev", into_branch="main", notes="Adds logs",
                                                          auto_cutover=False)
    assert server.requests[1]["query"]["branch"] == ["dev"] and server.requests[1]["query"]["into_branch"] == ["main"]
    assert sleeps == [1.0, 1.5, 2.25]  # growing intervals


def test_into_branch_is_main_where_the_database_cannot_be_read(run, platform):
    fake = platform(GET_=[(403, dict(code="forbidden", message="no access"))], GET__deploy_requests=[page(request())])
    assert run(branch="dev")["changed"] is False
    assert fake.sent() == ["GET ", "GET /deploy-requests"]


def test_the_open_request_from_the_branch_is_the_one_and_costs_one_read(run, platform):
    other = dict(request(number=5), branch="other")  # a filter the server ignores is applied here too
    fake = platform(GET__deploy_requests=[page(other, request(number=1, open_=False), request())])
    result = run(branch="dev", into_branch="main")
    assert (result["changed"], result["status"], result["deploy_request"]["number"]) == (False, "deployable", 3)
    assert fake.sent() == ["GET /deploy-requests"]


def test_other_notes_on_an_existing_request_are_a_sentence(run, platform):
    fake = platform(GET__deploy_requests__3=[(200, dict(request(), notes="old"))])
    assert failure(run, number=3, notes="new").msg == (
        "Deploy request #3 (dev into main) of database 'shop' has other notes than the task gives: notes can only be "
        "set when the deploy request is created. Leave notes out, or close it and open a new one.")
    assert fake.writes() == []


def test_a_setting_that_differs_is_changed_on_the_open_request(server, run, platform):
    fake = platform(GET__deploy_requests__3=[(200, request())],
                    PUT__deploy_requests__3__auto_apply=[(200, request(auto_cutover=False))])
    result = run(number=3, auto_cutover=False, auto_delete_branch=False, diff=True)
    assert result["changed"] is True
    assert fake.writes() == ["PUT /deploy-requests/3/auto-apply"]
    assert json.loads(server.requests[1]["body"]) == dict(enable=False)
    assert result["diff"] == dict(
        before=dict(state="open", deployment_state="ready", auto_cutover=True, auto_delete_branch=False),
        after=dict(state="open", deployment_state="ready", auto_cutover=False, auto_delete_branch=False))


def test_a_number_that_does_not_exist_is_a_sentence(run, platform):
    platform(GET__deploy_requests__9=[NOT_FOUND], GET_=[(200, dict(name="shop"))])
    assert failure(run, number=9).msg == ("Deploy request #9 of database 'shop' does not exist; leave number out and "
                                          "give branch to open one.")


def test_a_number_from_another_branch_is_a_sentence(run, platform):
    platform(GET__deploy_requests__3=[(200, request())])
    assert failure(run, number=3, branch="feature").msg.startswith(
        "Deploy request #3 (dev into main) of database 'shop' has branch 'dev', not 'feature'")


def test_a_create_whose_answer_is_lost_is_read_back_not_sent_twice(run, platform, sleeps):
    fake = platform(GET__deploy_requests=[page(), page(request())], POST__deploy_requests=[LOST])
    result = run(branch="dev", into_branch="main")
    assert result["changed"] is True and result["deploy_request"]["number"] == 3
    assert fake.writes() == ["POST /deploy-requests"]


def test_a_create_refused_because_another_run_opened_it_is_that_request(run, platform):
    fake = platform(GET__deploy_requests=[page(), page(request())],
                    POST__deploy_requests=[(422, dict(code="unprocessable", message="already open"))])
    result = run(branch="dev", into_branch="main")
    assert result["changed"] is False and result["deploy_request"]["number"] == 3
    assert fake.writes() == ["POST /deploy-requests"]


def test_check_mode_predicts_a_new_request_without_writing(run, platform):
    fake = platform(GET__deploy_requests=[page(request(number=1, open_=False, state="ready"))])
    result = run(branch="dev", into_branch="main", check_mode=True, diff=True)
    assert result["changed"] is True
    assert result["deploy_request"]["state"] == "open" and result["status"] == "pending"
    assert result["diff"] == dict(before={}, after=dict(state="open", deployment_state="pending"))
    assert fake.writes() == []


@pytest.mark.parametrize("state", ["open", "deployed"])
def test_a_request_opened_without_changes_is_a_change_and_a_second_run_writes_nothing(run, platform, sleeps, state):
    """Opening a request is a change (others see it, webhooks announce it); it stays open with no_changes."""
    fake = platform(GET__deploy_requests=[page(), page(request("no_changes"))],
                    POST__deploy_requests=[(201, request("pending"))],
                    GET__deploy_requests__3=[(200, request("no_changes"))])
    result = run(branch="dev", into_branch="main", state=state)
    assert (result["changed"], result["status"]) == (True, "no_changes")
    assert result["deploy_request"]["state"] == "open"
    assert result["msg"] == ("Deploy request #3 (dev into main) of database 'shop' has no schema changes to deploy: "
                             "the schema of 'dev' is already that of 'main', so nothing was deployed. The task opened "
                             "it, and it stays open (close it with state: closed).")
    assert fake.writes() == ["POST /deploy-requests"]
    assert sleeps == [1.0]
    again = run(branch="dev", into_branch="main", state=state)
    assert (again["changed"], again["status"]) == (False, "no_changes")
    assert again["msg"].endswith("so nothing was deployed.")
    assert fake.writes() == ["POST /deploy-requests"]


def test_check_mode_predicts_opening_a_request_as_a_change_as_the_run_reports_it(run, platform):
    fake = platform(GET__deploy_requests=[page()])
    assert run(branch="dev", into_branch="main", state="deployed", check_mode=True)["changed"] is True
    assert fake.writes() == []


# Deploying -----------------------------------------------------------------------------------

def test_deployed_queues_the_deploy_and_waits_until_the_schema_is_live(server, run, platform, sleeps):
    fake = platform(GET__deploy_requests__3=[(200, request()), (200, request("in_progress")),
                                             (200, request("complete_pending_revert"))],
                    POST__deploy_requests__3__deploy=[(200, request("queued"))])
    result = run(number=3, state="deployed", instant_ddl=True, diff=True)
    assert (result["changed"], result["status"]) == (True, "revertable")
    assert fake.sent() == ["GET /deploy-requests/3", "GET /deploy-requests/3/storage-check",
                           "POST /deploy-requests/3/deploy", "GET /deploy-requests/3", "GET /deploy-requests/3"]
    assert json.loads(server.requests[2]["body"]) == dict(instant_ddl=True)
    assert result["storage_check"] == ENOUGH
    assert result["diff"] == dict(before=dict(state="open", deployment_state="ready"),
                                  after=dict(state="open", deployment_state="complete_pending_revert"))


@pytest.mark.parametrize("state", ["complete_pending_revert", "complete"])
def test_a_deployed_request_is_not_deployed_again(run, platform, state):
    fake = platform(GET__deploy_requests__3=[(200, request(state))])
    assert run(number=3, state="deployed")["changed"] is False
    assert fake.sent() == ["GET /deploy-requests/3"]


def test_the_newest_deployed_request_is_the_one_while_the_branch_has_not_changed(run, platform):
    deployed = dict(request("complete", open_=False), deployed_at="2026-01-10T11:00:00Z")
    fake = platform(GET__deploy_requests=[page(deployed)],
                    GET__branches__dev=[(200, dict(name="dev", schema_last_updated_at="2026-01-10T09:59:00Z"))])
    result = run(branch="dev", into_branch="main", state="deployed")
    assert (result["changed"], result["status"], result["deploy_request"]["number"]) == (False, "complete", 3)
    assert fake.writes() == []


def test_a_branch_changed_after_its_last_deploy_opens_a_new_request(run, platform, sleeps):
    deployed = dict(request("complete", open_=False), deployed_at="2026-01-10T11:00:00Z")
    fake = platform(GET__deploy_requests=[page(deployed)],
                    GET__branches__dev=[(200, dict(name="dev", schema_last_updated_at="2026-01-11T08:00:00Z"))],
                    POST__deploy_requests=[(201, request("pending", number=4))],
                    GET__deploy_requests__4=[(200, request(number=4))])
    assert run(branch="dev", into_branch="main")["deploy_request"]["number"] == 4
    assert fake.writes() == ["POST /deploy-requests"]


def test_the_deploy_check_is_waited_for_even_without_wait(run, platform, sleeps):
    fake = platform(GET__deploy_requests__3=[(200, request("pending")), (200, request())],
                    POST__deploy_requests__3__deploy=[(200, request("queued"))])
    result = run(number=3, state="deployed", wait=False)
    assert (result["changed"], result["status"]) == (True, "deploying")
    assert fake.sent() == ["GET /deploy-requests/3", "GET /deploy-requests/3", "GET /deploy-requests/3/storage-check",
                           "POST /deploy-requests/3/deploy"]


def test_without_wait_a_revert_window_not_reached_yet_is_left_with_a_warning(run, platform):
    fake = platform(GET__deploy_requests__3=[(200, request())],
                    POST__deploy_requests__3__deploy=[(200, request("queued"))])
    ctx = TaskContext()
    validation = run.validate(number=3, state="deployed", revert_window="skip", wait=False)
    result = DeployRequest(validation.validated_parameters, ctx).execute()
    assert (result["changed"], result["status"]) == (True, "deploying")
    assert ctx.warnings == ["revert_window=skip was not applied: deploy request #3 (dev into main) of database 'shop' is "
                            "in state 'queued', not yet in its revert window. Run the task again with wait: true to "
                            "apply it."]
    assert fake.writes() == ["POST /deploy-requests/3/deploy"]


def test_a_deploy_whose_answer_is_lost_is_not_queued_twice(run, platform, sleeps):
    fake = platform(GET__deploy_requests__3=[(200, request()), (200, request("queued")),
                                             (200, request("complete_pending_revert"))],
                    POST__deploy_requests__3__deploy=[LOST])
    assert run(number=3, state="deployed")["changed"] is True
    assert fake.writes() == ["POST /deploy-requests/3/deploy"]


def test_a_deploy_whose_answer_is_lost_and_was_not_applied_is_sent_again(run, platform, sleeps):
    fake = platform(GET__deploy_requests__3=[(200, request()), (200, request()),
                                             (200, request("complete_pending_revert"))],
                    POST__deploy_requests__3__deploy=[LOST, (200, request("queued"))])
    assert run(number=3, state="deployed")["changed"] is True
    assert fake.writes() == ["POST /deploy-requests/3/deploy"] * 2


def test_an_unapproved_request_the_platform_refuses_to_deploy_says_to_approve_it(run, platform):
    platform(GET__deploy_requests__3=[(200, dict(request(), approved=False))],
             POST__deploy_requests__3__deploy=[(422, dict(code="unprocessable", message="approval required"))])
    assert failure(run, number=3, state="deployed").msg.endswith(
        "Deploy request #3 (dev into main) of database 'shop' is not approved: where the database requires an "
        "approved review before a deploy, approve it (planetscale.cloud.deploy_request_review) and run the task again.")


def test_check_mode_predicts_the_deploy_without_writing(run, platform):
    fake = platform(GET__deploy_requests__3=[(200, request())])
    result = run(number=3, state="deployed", revert_window="skip", check_mode=True, diff=True)
    assert (result["changed"], result["status"]) == (True, "complete")
    assert result["diff"]["after"] == dict(state="open", deployment_state="complete")
    assert fake.writes() == []


@pytest.mark.parametrize("lagging", [
    request("ready"), request("pending"), request("queued"),
    dict(id="dr3", number=3, branch="dev", into_branch="main", state="open"),  # no deployment state at all
], ids=["ready", "pending", "queued", "no-state"])
def test_a_read_behind_the_deploy_keeps_the_wait_going_until_the_deploy_is_live(run, platform, sleeps, lagging):
    """A read that lags behind the deploy (still ready, pending, or no state) is not the deploy's end."""
    fake = platform(GET__deploy_requests__3=[(200, request()), (200, lagging), (200, lagging),
                                             (200, request("complete"))],
                    POST__deploy_requests__3__deploy=[(200, request("queued"))])
    result = run(number=3, state="deployed")
    assert (result["changed"], result["status"]) == (True, "complete")
    assert result["deploy_request"]["deployment_state"] == "complete"
    assert fake.sent() == ["GET /deploy-requests/3", "GET /deploy-requests/3/storage-check",
                           "POST /deploy-requests/3/deploy"] + ["GET /deploy-requests/3"] * 3


@pytest.mark.parametrize("answer", [request("weird"), dict(request(), deployment_state=None,
                                                           deployment=dict(state="weird"))])
def test_a_state_the_collection_does_not_know_fails_naming_it(run, platform, sleeps, answer):
    platform(GET__deploy_requests__3=[(200, request()), (200, answer)],
             POST__deploy_requests__3__deploy=[(200, request("queued"))])
    caught = failure(run, number=3, state="deployed")
    assert caught.msg.startswith("Deploy request #3 (dev into main) of database 'shop' is in state 'weird', which this "
                                 "collection does not know (it knows pending, ready, no_changes, ")
    assert caught.msg.endswith("so it cannot tell whether the deploy request is deployed: look at it in the platform's "
                               "web application, and update the collection.")
    assert caught.result["changed"] is True and caught.result["status"] is None
    assert len(sleeps) == 1


def test_a_request_that_shows_no_deployment_state_is_waited_for_until_the_timeout(run, platform, sleeps):
    bare = dict(id="dr3", number=3, branch="dev", into_branch="main", state="open")
    platform(GET__deploy_requests__3=[(200, request()), (200, bare)],
             POST__deploy_requests__3__deploy=[(200, request("queued"))])
    caught = failure(run, number=3, state="deployed", wait_timeout=30)
    assert caught.msg == ("Waited 30 seconds (wait_timeout) for deploy request #3 (dev into main) of database 'shop' "
                          "to be deployed; its last answer showed no deployment state. Raise wait_timeout, or set wait to "
                          "false and run the task again later.")
    assert caught.result["changed"] is True
    assert 25 < sum(sleeps) <= 30


def test_a_read_that_lags_behind_the_cutover_keeps_the_wait_going(run, platform, sleeps):
    gated = dict(auto_cutover=False)
    fake = platform(GET__deploy_requests__3=[(200, request("pending_cutover", **gated)),
                                             (200, request("ready", **gated)),
                                             (200, request("complete_pending_revert", **gated))],
                    POST__deploy_requests__3__apply_deploy=[(200, request("pending_cutover", **gated))])
    result = run(number=3, state="deployed", cutover=True)
    assert (result["changed"], result["status"]) == (True, "revertable")
    assert fake.writes() == ["POST /deploy-requests/3/apply-deploy"]


# Cutover and revert window -------------------------------------------------------------------

def test_a_gated_deploy_returns_awaiting_its_cutover_without_cutover(run, platform, sleeps):
    gated = dict(auto_cutover=False)
    fake = platform(GET__deploy_requests__3=[(200, request(**gated)), (200, request("pending_cutover", **gated))],
                    POST__deploy_requests__3__deploy=[(200, request("queued", **gated))])
    result = run(number=3, state="deployed", revert_window="skip")
    assert (result["changed"], result["status"]) == (True, "awaiting_cutover")
    assert "waits for it: run the task with cutover: true" in result["msg"]
    assert fake.writes() == ["POST /deploy-requests/3/deploy"]


def test_cutover_applies_a_gated_deploy_and_waits_until_live(run, platform, sleeps):
    gated = dict(auto_cutover=False)
    fake = platform(GET__deploy_requests__3=[(200, request("pending_cutover", **gated)),
                                             (200, request("in_progress_cutover", **gated)),
                                             (200, request("complete_pending_revert", **gated))],
                    POST__deploy_requests__3__apply_deploy=[(200, request("in_progress_cutover", **gated))])
    result = run(number=3, state="deployed", cutover=True)
    assert (result["changed"], result["status"]) == (True, "revertable")
    assert fake.writes() == ["POST /deploy-requests/3/apply-deploy"]


def test_revert_window_skip_ends_the_window(run, platform, sleeps):
    fake = platform(GET__deploy_requests__3=[(200, request("complete_pending_revert")), (200, request("complete"))],
                    POST__deploy_requests__3__skip_revert=[(200, request("complete_pending_revert"))])
    result = run(number=3, state="deployed", revert_window="skip")
    assert (result["changed"], result["status"]) == (True, "complete")
    assert fake.writes() == ["POST /deploy-requests/3/skip-revert"]


def test_revert_window_revert_reverts_and_a_second_run_writes_nothing(run, platform, sleeps):
    fake = platform(GET__deploy_requests__3=[(200, request("complete_pending_revert")),
                                             (200, request("in_progress_revert")), (200, request("complete_revert"))],
                    POST__deploy_requests__3__revert=[(200, request("in_progress_revert"))])
    result = run(number=3, state="deployed", revert_window="revert")
    assert (result["changed"], result["deploy_request"]["deployment_state"]) == (True, "complete_revert")
    assert run(number=3, state="deployed", revert_window="revert")["changed"] is False
    assert fake.writes() == ["POST /deploy-requests/3/revert"]


def test_a_revert_after_the_window_is_a_sentence(run, platform):
    platform(GET__deploy_requests__3=[(200, request("complete"))])
    assert failure(run, number=3, state="deployed", revert_window="revert").msg == (
        "Deploy request #3 (dev into main) of database 'shop' can no longer be reverted: its revert window has ended "
        "(state 'complete').")


# Failing fast --------------------------------------------------------------------------------

def test_lint_errors_fail_fast_naming_the_table_the_error_and_the_docs(run, platform, sleeps):
    blocked = dict(deployable=False, lint_errors=[LINT])
    platform(GET__deploy_requests__3=[(200, request("pending")), (200, request("error", **blocked))])
    caught = failure(run, number=3, state="deployed")
    assert caught.msg == (
        "Deploy request #3 (dev into main) of database 'shop' is in state 'error': its deploy check failed, with 1 lint "
        "error: table 'logs' of keyspace 'shop': NO_UNIQUE_KEY: Table 'logs' has no primary key or unique key (see "
        "https://planetscale.com/docs/learn/change-single-unique-key). Fix the schema of branch 'dev'; the deploy "
        "request is checked again when the branch changes.")
    assert caught.result["status"] == "blocked" and caught.result["changed"] is False
    assert sleeps == [1.0]  # one poll after the state appears


def test_a_ready_request_with_lint_errors_is_not_sent_to_deploy(run, platform):
    fake = platform(GET__deploy_requests__3=[(200, request("ready", deployable=False, lint_errors=[LINT, LINT]))])
    caught = failure(run, number=3, state="deployed")
    assert caught.msg.startswith("Deploy request #3 (dev into main) of database 'shop' is in state 'ready': it cannot "
                                 "be deployed, with 2 lint errors: table 'logs' of keyspace 'shop': NO_UNIQUE_KEY")
    assert caught.result["status"] == "blocked"
    assert fake.writes() == []


def test_a_deploy_check_error_is_named(run, platform):
    platform(GET__deploy_requests__3=[(200, request("error", deploy_check_errors="unsupported ALTER"))])
    assert "the deploy check says: unsupported ALTER." in failure(run, number=3).msg


@pytest.mark.parametrize("state, what", [("complete_error", "the deploy failed"),
                                         ("cancelled", "its deploy was cancelled"),
                                         ("complete_revert_error", "the revert failed")])
def test_a_deploy_that_fails_ends_the_wait_at_once_with_the_state_named(run, platform, sleeps, state, what):
    operation = dict(table_name="logs", deploy_errors="duplicate column")
    platform(GET__deploy_requests__3=[(200, request()), (200, request("in_progress")),
                                      (200, request(state, deploy_operations=[operation]))],
             POST__deploy_requests__3__deploy=[(200, request("queued"))])
    caught = failure(run, number=3, state="deployed", wait_timeout=600)
    assert caught.msg.startswith("Deploy request #3 (dev into main) of database 'shop' is in state %r: %s, with table "
                                 "'logs': duplicate column." % (state, what))
    assert caught.result["changed"] is True
    assert caught.result["deploy_request"]["deployment_state"] == state
    assert len(sleeps) == 2 and sum(sleeps) < 3


def test_the_wait_timeout_fails_with_the_last_state(run, platform, sleeps):
    platform(GET__deploy_requests__3=[(200, request()), (200, request("in_progress"))],
             POST__deploy_requests__3__deploy=[(200, request("queued"))])
    caught = failure(run, number=3, state="deployed", wait_timeout=30)
    assert caught.msg == ("Waited 30 seconds (wait_timeout) for deploy request #3 (dev into main) of database 'shop' to "
                          "be deployed; its last state was 'in_progress'. Raise wait_timeout, or set wait to false and "
                          "run the task again later.")
    assert caught.result["status"] == "deploying" and caught.result["changed"] is True
    assert 25 < sum(sleeps) <= 30


# Closing -------------------------------------------------------------------------------------

def test_closed_closes_the_open_request_once(server, run, platform):
    fake = platform(GET__deploy_requests=[page(request()), page(dict(request(), state="closed"))],
                    PATCH__deploy_requests__3=[(200, dict(request(), state="closed"))])
    first = run(branch="dev", into_branch="main", state="closed", diff=True)
    assert (first["changed"], first["status"]) == (True, "cancelled")
    assert first["diff"] == dict(before=dict(state="open", deployment_state="ready"),
                                 after=dict(state="closed", deployment_state="ready"))
    assert json.loads(server.requests[1]["body"]) == dict(state="closed")
    assert run(branch="dev", into_branch="main", state="closed")["changed"] is False
    assert fake.writes() == ["PATCH /deploy-requests/3"]


def test_a_lean_close_answer_is_read_back_for_the_request_s_state(run, platform):
    """The platform answers a close with only deployment.state (recorded): the state comes from a read."""
    lean = dict(id="dr3", number=3, deployment=dict(state="ready"))
    fake = platform(GET__deploy_requests=[page(request())], PATCH__deploy_requests__3=[(200, lean)],
                    GET__deploy_requests__3=[(200, dict(request(), state="closed"))])
    result = run(branch="dev", into_branch="main", state="closed")
    assert result["changed"] is True
    assert result["deploy_request"]["state"] == "closed" and result["status"] == "cancelled"
    assert fake.sent() == ["GET /deploy-requests", "PATCH /deploy-requests/3", "GET /deploy-requests/3"]


def test_a_closed_request_cannot_be_deployed(run, platform):
    platform(GET__deploy_requests__3=[(200, request(open_=False))])
    assert failure(run, number=3, state="deployed").msg.startswith(
        "Deploy request #3 (dev into main) of database 'shop' is closed without having been deployed")


# The storage check -----------------------------------------------------------------------------

SHORT = dict(enough_storage=False, upgradeable=True, storage_bytes_needed=3 * 2**30, storage_report=dict(shop={
    "-80": dict(used=2**30, capacity=5 * 2**30, remaining=4 * 2**30, storage_needed=2**30, has_enough=True),
    "80-": dict(used=4 * 2**30, capacity=5 * 2**30, remaining=2**30, storage_needed=2 * 2**30, has_enough=False)}))


@pytest.mark.parametrize("check_mode", [False, True], ids=["run", "check-mode"])
def test_a_deploy_the_storage_check_says_would_not_fit_fails_before_it_is_queued(run, platform, check_mode):
    fake = platform(GET__deploy_requests__3=[(200, request())], GET__deploy_requests__3__storage_check=[(200, SHORT)])
    caught = failure(run, number=3, state="deployed", check_mode=check_mode)
    assert caught.msg == (
        "Deploy request #3 (dev into main) of database 'shop' needs 3.0 GiB (3221225472 bytes) more storage than "
        "branch 'main' has left, so its deploy was not queued: shard '80-' of keyspace 'shop' has 1.0 GiB (1073741824 "
        "bytes) left of 5.0 GiB (5368709120 bytes) and needs 2.0 GiB (2147483648 bytes). The cluster of 'main' can be "
        "upgraded for more storage: give it a larger cluster_size (planetscale.cloud.branch), then run the task again.")
    assert caught.result["storage_check"] == SHORT and caught.result["changed"] is False
    assert fake.writes() == []


def test_a_cluster_that_cannot_grow_is_said_so(run, platform):
    platform(GET__deploy_requests__3=[(200, request())],
             GET__deploy_requests__3__storage_check=[(200, dict(SHORT, upgradeable=False, storage_report={}))])
    assert failure(run, number=3, state="deployed").msg.endswith(
        "more storage than branch 'main' has left, so its deploy was not queued. The cluster of 'main' cannot be "
        "upgraded for more storage: free storage on it, then run the task again.")


def test_a_platform_without_a_storage_check_deploys(run, platform, sleeps):
    fake = platform(GET__deploy_requests__3=[(200, request()), (200, request("complete"))],
                    GET__deploy_requests__3__storage_check=[NOT_FOUND],
                    POST__deploy_requests__3__deploy=[(200, request("queued"))])
    assert run(number=3, state="deployed")["status"] == "complete"
    assert fake.writes() == ["POST /deploy-requests/3/deploy"]


# Force cutover -------------------------------------------------------------------------------------

FORCED_AT = dict(force_cutover_requested_at="2026-01-10T10:05:00Z")
LEAN_FORCED = dict(id="dr3", number=3, deployment=dict(state="in_progress_cutover", **FORCED_AT))


def test_force_cutover_forces_a_cutover_once_and_reads_the_lean_answer_back(run, platform, sleeps):
    fake = platform(GET__deploy_requests__3=[(200, request()), (200, request("in_progress_cutover")),
                                             (200, request("in_progress_cutover", **FORCED_AT)),
                                             (200, request("complete_pending_revert", **FORCED_AT))],
                    POST__deploy_requests__3__deploy=[(200, request("queued"))],
                    POST__deploy_requests__3__force_cutover=[(200, LEAN_FORCED)])
    result = run(number=3, state="deployed", force_cutover=True)
    assert (result["changed"], result["status"]) == (True, "revertable")
    assert fake.writes() == ["POST /deploy-requests/3/deploy", "POST /deploy-requests/3/force-cutover"]
    assert fake.sent()[-3:] == ["POST /deploy-requests/3/force-cutover", "GET /deploy-requests/3",
                                "GET /deploy-requests/3"]  # the lean answer read back, then the wait


def test_a_cutover_asked_to_be_forced_already_is_not_forced_again(run, platform, sleeps):
    fake = platform(GET__deploy_requests__3=[(200, request("in_progress_cutover", **FORCED_AT)),
                                             (200, request("complete_pending_revert", **FORCED_AT))])
    assert run(number=3, state="deployed", force_cutover=True)["changed"] is False
    assert fake.writes() == []


def test_a_force_cutover_whose_answer_is_lost_is_read_back_not_sent_twice(run, platform, sleeps):
    fake = platform(GET__deploy_requests__3=[(200, request("in_progress_cutover")),
                                             (200, request("in_progress_cutover", **FORCED_AT))],
                    POST__deploy_requests__3__force_cutover=[LOST])
    result = run(number=3, state="deployed", force_cutover=True, wait=False)
    assert (result["changed"], result["deploy_request"]["deployment_state"]) == (True, "in_progress_cutover")
    assert fake.writes() == ["POST /deploy-requests/3/force-cutover"]


def test_check_mode_predicts_the_forced_cutover_without_writing(run, platform):
    fake = platform(GET__deploy_requests__3=[(200, request("in_progress_cutover"))])
    result = run(number=3, state="deployed", force_cutover=True, check_mode=True, diff=True)
    assert (result["changed"], result["status"]) == (True, "revertable")
    assert result["diff"]["after"] == dict(state="open", deployment_state="complete_pending_revert")
    assert fake.writes() == []


def test_without_force_cutover_a_held_cutover_is_never_forced_and_the_timeout_says_how(run, platform, sleeps):
    fake = platform(GET__deploy_requests__3=[(200, request("in_progress_cutover"))])
    caught = failure(run, number=3, state="deployed", wait_timeout=20)
    assert caught.msg == (
        "Waited 20 seconds (wait_timeout) for deploy request #3 (dev into main) of database 'shop' to be deployed; its "
        "last state was 'in_progress_cutover' (a long transaction holding a lock on a changed table keeps a cutover "
        "there: force_cutover: true forces it, ending such transactions). Raise wait_timeout, or set wait to false and "
        "run the task again later.")
    assert fake.writes() == []


# Completing an errored deploy ----------------------------------------------------------------------

LEAN_COMPLETE = dict(id="dr3", number=3, deployment=dict(state="complete"))


def test_complete_errored_completes_a_deploy_that_errored_and_a_second_run_writes_nothing(run, platform, sleeps):
    fake = platform(GET__deploy_requests__3=[(200, request("complete_error")), (200, request("complete"))],
                    POST__deploy_requests__3__complete_deploy=[(200, LEAN_COMPLETE)])
    result = run(number=3, state="deployed", complete_errored=True, diff=True)
    assert (result["changed"], result["status"]) == (True, "complete")
    assert result["diff"] == dict(before=dict(state="open", deployment_state="complete_error"),
                                  after=dict(state="open", deployment_state="complete"))
    assert run(number=3, state="deployed", complete_errored=True)["changed"] is False
    assert fake.writes() == ["POST /deploy-requests/3/complete-deploy"]


def test_a_deploy_that_errors_while_waited_for_is_completed(run, platform, sleeps):
    fake = platform(GET__deploy_requests__3=[(200, request()), (200, request("complete_error")),
                                             (200, request("complete"))],
                    POST__deploy_requests__3__deploy=[(200, request("queued"))],
                    POST__deploy_requests__3__complete_deploy=[LOST])
    assert run(number=3, state="deployed", complete_errored=True)["status"] == "complete"
    assert fake.writes() == ["POST /deploy-requests/3/deploy", "POST /deploy-requests/3/complete-deploy"]


def test_without_complete_errored_an_errored_deploy_fails_saying_how_to_complete_it(run, platform):
    fake = platform(GET__deploy_requests__3=[(200, request("complete_error"))])
    assert failure(run, number=3, state="deployed").msg.endswith(
        "Fix the cause and open a new deploy request, or complete the deploy where the platform allows it "
        "(complete_errored: true).")
    assert fake.writes() == []


def test_check_mode_predicts_the_completed_deploy_without_writing(run, platform):
    fake = platform(GET__deploy_requests__3=[(200, request("complete_error"))])
    result = run(number=3, state="deployed", complete_errored=True, check_mode=True)
    assert (result["changed"], result["status"]) == (True, "complete")
    assert fake.writes() == []


# Cancelling ------------------------------------------------------------------------------------

LEAN_CANCELLED = dict(id="dr3", number=3, deployment=dict(state="pending"))  # the platform's recorded answer


def test_cancelled_cancels_a_queued_deploy_once(run, platform, sleeps):
    fake = platform(GET__deploy_requests=[page(request("queued")), page(request("cancelled"))],
                    POST__deploy_requests__3__cancel=[(200, LEAN_CANCELLED)],
                    GET__deploy_requests__3=[(200, request("cancelled"))])
    result = run(branch="dev", into_branch="main", state="cancelled", diff=True)
    assert (result["changed"], result["status"]) == (True, "cancelled")
    assert result["diff"] == dict(before=dict(state="open", deployment_state="queued"),
                                  after=dict(state="open", deployment_state="cancelled"))
    again = run(branch="dev", into_branch="main", state="cancelled")
    assert (again["changed"], again["status"]) == (False, "cancelled")
    assert fake.writes() == ["POST /deploy-requests/3/cancel"]


def test_a_running_deploy_is_waited_for_until_its_cancel_completes(run, platform, sleeps):
    fake = platform(GET__deploy_requests__3=[(200, request("pending_cutover")), (200, request("in_progress_cancel")),
                                             (200, request("in_progress_cancel")), (200, request("complete_cancel"))],
                    POST__deploy_requests__3__cancel=[(200, request("in_progress_cancel"))])
    result = run(number=3, state="cancelled")
    assert (result["changed"], result["deploy_request"]["deployment_state"]) == (True, "complete_cancel")
    assert fake.writes() == ["POST /deploy-requests/3/cancel"]


def test_a_cancel_whose_answer_is_lost_is_read_back_not_sent_twice(run, platform, sleeps):
    fake = platform(GET__deploy_requests__3=[(200, request("queued")), (200, request("ready"))],
                    POST__deploy_requests__3__cancel=[LOST])
    result = run(number=3, state="cancelled")
    assert (result["changed"], result["status"]) == (True, "deployable")  # checked again, as the platform answers
    assert fake.writes() == ["POST /deploy-requests/3/cancel"]


def test_check_mode_predicts_the_cancel_without_writing(run, platform):
    fake = platform(GET__deploy_requests__3=[(200, request("in_progress"))])
    result = run(number=3, state="cancelled", check_mode=True)
    assert (result["changed"], result["deploy_request"]["deployment_state"]) == (True, "complete_cancel")
    assert fake.writes() == []


@pytest.mark.parametrize("state, what", [
    ("in_progress_cutover", "it is cutting over, too late to cancel its deploy. Once it is live, revert it within its "
                            "revert window (state: deployed, revert_window: revert)."),
    ("complete_pending_revert", "it is deployed, too late to cancel its deploy. Revert it within its revert window "
                                "instead (state: deployed, revert_window: revert)."),
])
def test_a_deploy_too_far_along_to_cancel_is_a_sentence(run, platform, state, what):
    fake = platform(GET__deploy_requests__3=[(200, request(state))])
    assert failure(run, number=3, state="cancelled").msg == (
        "Deploy request #3 (dev into main) of database 'shop' is in state %r: %s" % (state, what))
    assert fake.writes() == []


def test_nothing_to_cancel_is_no_change_and_says_so(run, platform):
    fake = platform(GET__deploy_requests__3=[(200, request("ready"))], GET__deploy_requests=[page()],
                    GET_=[(200, dict(name="shop", default_branch="main"))])
    result = run(number=3, state="cancelled")
    assert result["changed"] is False
    assert result["msg"] == ("Deploy request #3 (dev into main) of database 'shop' has no deploy queued or running "
                             "(state 'ready'): there is nothing to cancel.")
    assert run(branch="dev", state="cancelled") == dict(changed=False)  # no open request from the branch
    assert fake.writes() == []


@pytest.mark.parametrize("lost", [False, True], ids=["answered", "answer-lost"])
def test_a_deploy_cancelled_before_the_task_is_queued_again(run, platform, sleeps, lost):
    before = request("cancelled", queued_at="2026-01-10T10:01:00Z")
    fake = platform(GET__deploy_requests__3=[(200, before)] * (2 if lost else 1) + [
        (200, request("complete_pending_revert", queued_at="2026-01-10T10:09:00Z"))],
        POST__deploy_requests__3__deploy=([LOST] if lost else []) + [(200, request("queued"))])
    assert run(number=3, state="deployed")["status"] == "revertable"
    # a lost answer read back as still cancelled (the earlier deploy) is sent again
    assert fake.writes() == ["POST /deploy-requests/3/deploy"] * (2 if lost else 1)


# The throttler ---------------------------------------------------------------------------------

def throttler(ratio):
    return dict(keyspaces=["shop"], configurations=[dict(keyspace_name="shop", ratio=ratio)],
                configurable=dict(id="dr3", name="3"))


def test_throttle_ratio_sets_the_throttler_once_with_a_diff(server, run, platform):
    fake = platform(GET__deploy_requests__3=[(200, request())],
                    GET__deploy_requests__3__throttler=[(200, throttler(0.0)), (200, throttler(40.0))],
                    PATCH__deploy_requests__3__throttler=[(200, throttler(40.0))])
    result = run(number=3, throttle_ratio=40, diff=True)
    assert result["changed"] is True and result["deploy_request"]["throttler"] == throttler(40.0)
    assert result["diff"] == dict(before=dict(state="open", deployment_state="ready", throttle_ratio=0.0),
                                  after=dict(state="open", deployment_state="ready", throttle_ratio=40.0))
    assert json.loads(server.requests[2]["body"]) == dict(ratio=40)
    assert run(number=3, throttle_ratio=40)["changed"] is False
    assert fake.writes() == ["PATCH /deploy-requests/3/throttler"]


def test_a_throttler_change_whose_answer_is_lost_is_read_back(run, platform, sleeps):
    fake = platform(GET__deploy_requests__3=[(200, request())],
                    GET__deploy_requests__3__throttler=[(200, throttler(0)), (200, throttler(40))],
                    PATCH__deploy_requests__3__throttler=[LOST])
    assert run(number=3, throttle_ratio=40)["changed"] is True
    assert fake.writes() == ["PATCH /deploy-requests/3/throttler"]


def test_check_mode_predicts_the_throttler_without_writing(run, platform):
    fake = platform(GET__deploy_requests__3=[(200, request())], GET__deploy_requests=[page()],
                    GET__deploy_requests__3__throttler=[(200, throttler(0))])
    result = run(number=3, throttle_ratio=40, check_mode=True, diff=True)
    assert result["changed"] is True and result["diff"]["after"]["throttle_ratio"] == 40
    opened = run(branch="dev", into_branch="main", throttle_ratio=40, check_mode=True, diff=True)
    assert opened["diff"]["after"]["throttle_ratio"] == 40  # the request the task would open
    assert fake.writes() == []
