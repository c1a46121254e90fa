# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""workflow_info: every page, the time range the platform filters by, one workflow by number or by name."""

from __future__ import annotations

import pytest

from ansible_collections.planetscale.cloud.plugins.module_utils.base import ModuleFailure
from ansible_collections.planetscale.cloud.plugins.modules.workflow_info import WorkflowInfo

WORKFLOWS = "/v1/organizations/acme/databases/app/workflows"
NOT_FOUND = (404, dict(code="not_found", message="Not Found"))

MODULE = WorkflowInfo  # run by the `run` fixture (tests/unit/conftest.py) with ARGS
ARGS = dict(organization="acme", database="app", service_token_id="svc", service_token="s3cret")


def workflow(number, name="move-orders", state="running"):
    return dict(id="wf%d" % number, name=name, number=number, state=state)


def page(items, next_page=None):
    return 200, dict(type="list", next_page=next_page, data=items)


def failure(run, **args):
    with pytest.raises(ModuleFailure) as caught:
        run(**args)
    return caught.value


def test_every_page_is_read_newest_first_and_between_is_the_platforms_filter(server, run):
    server.script = [page([workflow(n) for n in range(1, 26)], next_page=2), page([workflow(26)])]
    result = run(between="2026-11-01T00:00:00Z..2026-11-30T23:59:59")
    assert result["changed"] is False and [w["number"] for w in result["workflows"]] == list(range(26, 0, -1))
    assert [r["query"]["page"] for r in server.requests] == [["1"], ["2"]]
    assert server.requests[0]["query"]["between"] == ["2026-11-01T00:00:00Z..2026-11-30T23:59:59"]
    assert all(r["path"] == WORKFLOWS for r in server.requests)


@pytest.mark.parametrize("between, sentence", [
    ("yesterday", "between must be two ISO 8601 times joined by '..', such as "
                  "2026-11-01T00:00:00Z..2026-11-30T23:59:59Z, not 'yesterday'."),
    ("2026-11-01..2026-11-02", "between must be two ISO 8601 times joined by '..', such as "
                               "2026-11-01T00:00:00Z..2026-11-30T23:59:59Z, not '2026-11-01..2026-11-02'."),
    ("2026-11-02T00:00:00Z..2026-11-01T00:00:00Z", "between starts (2026-11-02T00:00:00Z) after it ends "
                                                   "(2026-11-01T00:00:00Z): no workflow can be active in it."),
])
def test_a_time_range_that_is_not_one_is_a_sentence_before_any_request(server, run, between, sentence):
    assert failure(run, between=between).msg == sentence
    assert server.requests == []


@pytest.mark.parametrize("args, sentence", [
    (dict(number=0), "number must be 1 or more, not 0."),
    (dict(name=" "), "name must not be empty."),
])
def test_bad_input_is_a_sentence_before_any_request(server, run, args, sentence):
    assert failure(run, **args).msg == sentence
    assert server.requests == []


def test_name_number_and_between_exclude_each_other(run):
    assert run.validate(name="move-orders", number=3).error_messages == [
        "parameters are mutually exclusive: name|number|between"]


def test_number_reads_one_and_a_missing_one_is_an_empty_list(server, run):
    server.script = [(200, workflow(3))]
    assert run(number=3)["workflows"] == [workflow(3)]
    assert server.requests[0]["path"] == WORKFLOWS + "/3"
    server.requests.clear()
    server.script = [NOT_FOUND, page([])]
    assert run(number=9) == dict(changed=False, workflows=[])
    assert [r["path"] for r in server.requests] == [WORKFLOWS + "/9", WORKFLOWS]


def test_name_reads_the_newest_workflow_of_that_name_whole(server, run):
    whole = dict(workflow(4), vdiff=dict(has_mismatch=False, table_reports=[]))
    server.script = [page([workflow(2, state="cancelled"), workflow(4), workflow(5, name="other")]), (200, whole)]
    assert run(name="move-orders")["workflows"] == [whole]
    assert [r["path"] for r in server.requests] == [WORKFLOWS, WORKFLOWS + "/4"]
    server.requests.clear()
    server.script = [page([workflow(5, name="other")])]
    assert run(name="move-orders")["workflows"] == []


def test_a_missing_database_is_a_failure_with_its_hint(server, run):
    server.script = [NOT_FOUND, NOT_FOUND]  # the workflow, then the list that tells a missing database
    assert failure(run, number=3).msg.endswith(
        "Check that organization 'acme' and database 'app' exist and that the credentials can see them.")
