# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Answers of the shapes real servers and proxies give beside the OpenAPI: a validation error in
the {"errors": [...]} shape, a token endpoint that succeeds without a token, a list that is not a
list, a body that is not JSON. Each task fails with a sentence that names the endpoint and says
what the server said; none with a traceback, and nothing is written after such an answer. Each
module's class runs in this process (harness.direct); the validation error also runs end to end
through ansible-playbook on both execution paths.
"""

from __future__ import annotations

import pytest

from harness import FQCN, module_defaults, play

BRANCHES = "/v1/organizations/acme/databases/app/branches"
ERRORS = [dict(namespace="branch", name="name", errors=["has already been taken", "is reserved"]),
          dict(namespace="branch", name="parent_branch", errors=["does not exist"])]


def _run(emulator, runner, label, tasks, in_process=None, extra_vars=None):
    """The run of the tasks by the runner: harness.direct, or ansible-playbook on the path in_process says."""
    options = dict(in_process=in_process, timeout=120) if in_process is not None else {}
    return runner.run([play(tasks, defaults=module_defaults(api_retries=0))], extra_vars or {}, emulator=emulator,
                      label="%s in_process=%s" % (label, in_process), **options)


def _failed_with(task, *parts):
    assert task.failed, task
    msg = task.result["msg"]
    assert "Traceback" not in msg and "object at 0x" not in msg and "has no attribute" not in msg, msg
    for part in parts:
        assert part in msg, (part, msg)
    return msg


@pytest.mark.parametrize("in_process", [None, True, False], ids=["here", "in_process", "module"])
def test_a_validation_error_in_the_errors_shape_shows_each_message(emulator, direct, ansible, figures, in_process):
    emulator.faults(dict(method="POST", path=BRANCHES + "$", status=422, body="errors", errors=ERRORS, times=1))
    name = "Create a branch the platform refuses"
    branch = dict(database="app", name="shapes", parent_branch="main", wait=False)
    tasks = [{"name": name, "ignore_errors": True, FQCN + "branch": branch}]
    run = _run(emulator, direct if in_process is None else ansible, "422 errors shape", tasks, in_process)
    figures["faults_injected"] += 1
    figures["faults_reported"] += 1
    _failed_with(run.result(name), "POST /organizations/acme/databases/app/branches failed with HTTP 422",
                 "branch name: has already been taken, is reserved", "branch parent_branch: does not exist")


@pytest.mark.parametrize("body", [dict(body="empty_object"), dict(body="json", value=None),
                                  dict(body="json", value=dict(access_token="half"))], ids=["{}", "null", "half"])
def test_a_token_answer_without_tokens_fails_and_returns_none(emulator, direct, figures, body):
    tokens = emulator.tokens()
    direct.watch.learn(tokens["access_token"], tokens["refresh_token"])
    emulator.faults(dict(method="POST", path="^/oauth/token$", status=200, times=1, **body))
    name = "Refresh against a server that answers without tokens"
    run = _run(emulator, direct, "token answer %s" % body, [{"name": name, "ignore_errors": True, FQCN + "token": dict(
        grant_type="refresh_token", refresh_token="{{ refresh_token }}")}], extra_vars=dict(
            refresh_token=tokens["refresh_token"]))
    figures["faults_injected"] += 1
    figures["faults_reported"] += 1
    task = run.result(name)
    _failed_with(task, "POST /oauth/token succeeded with", "which is no token")
    assert "token" not in task.result


@pytest.mark.parametrize("value, kind", [([], "a list"), ("x", "a string"), (None, "null")])
def test_a_list_answered_with_the_wrong_json_is_a_sentence_naming_the_endpoint(
        emulator, direct, figures, value, kind):
    emulator.faults(dict(method="GET", path=BRANCHES + "$", status=200, body="json", value=value))
    name = "List the branches of a server that answers %s" % kind
    run = _run(emulator, direct, "list answered %s" % kind, [{"name": name, "ignore_errors": True,
                                                              FQCN + "branch_info": dict(database="app")}])
    figures["faults_injected"] += 1
    figures["faults_reported"] += 1
    _failed_with(run.result(name), "GET /organizations/acme/databases/app/branches failed with HTTP 200",
                 "the answer was %s where a JSON object was expected" % kind)


def test_a_record_that_is_no_record_is_not_written_after(emulator, direct, figures):
    """A read of the branch answered {} (a proxy's idea of an answer) fails; no create follows it."""
    emulator.faults(dict(method="GET", path=BRANCHES + "/main$", status=200, body="empty_object"))
    name = "Ensure a branch whose read answers {}"
    run = _run(emulator, direct, "record answered {}", [{"name": name, "ignore_errors": True, FQCN + "branch": dict(
        database="app", name="main", wait=False)}])
    figures["faults_injected"] += 1
    figures["faults_reported"] += 1
    _failed_with(run.result(name), "GET /organizations/acme/databases/app/branches/main", "not a branch record")
    assert [entry for entry in emulator.requests() if entry["method"] != "GET"] == []


SCHEDULES = "/v1/organizations/acme/databases/app/maintenance-schedules"


def test_a_list_past_the_cap_and_a_record_without_an_id_are_sentences_with_no_request_after(
        emulator, direct, figures):
    """A first page that says the list has ten million pages fails at once (issue 43, defect 10); a schedule of the
    answer with a null id is the wrong-answer sentence, never a read of .../None/windows (defect 13)."""
    endless = dict(data=[dict(id="s%d" % n) for n in range(100)], current_page=1, next_page=2, total_pages=10000000)
    emulator.faults(dict(method="GET", path=SCHEDULES + "$", status=200, body="json", value=endless, times=1),
                    dict(method="GET", path=SCHEDULES + "$", status=200, body="json",
                         value=dict(data=[dict(id=None, name="nightly")]), times=1))
    emulator.clear_requests()
    tasks = [{"name": name, "ignore_errors": True, FQCN + "maintenance_schedule_info": dict(database="app")}
             for name in ("List schedules that claim ten million pages", "List a schedule without an id")]
    run = _run(emulator, direct, "list past the cap, record without id", tasks)
    figures["faults_injected"] += 2
    figures["faults_reported"] += 2
    _failed_with(run.result(tasks[0]["name"]), "GET /organizations/acme/databases/app/maintenance-schedules",
                 "the list goes on past 10000 pages")
    _failed_with(run.result(tasks[1]["name"]), "GET /organizations/acme/databases/app/maintenance-schedules",
                 "a maintenance schedule of the answer has no id")
    paths = [entry["path"] for entry in emulator.requests()]
    assert paths.count(SCHEDULES) == 2 and not [path for path in paths if path.startswith(SCHEDULES + "/")], paths
