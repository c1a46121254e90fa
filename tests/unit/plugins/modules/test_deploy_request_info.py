# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""deploy_request_info: one request with its deployment and operations, or every page of the filtered list."""

from __future__ import annotations

import pytest

from ansible_collections.planetscale.cloud.plugins.module_utils.base import ModuleFailure
from ansible_collections.planetscale.cloud.plugins.modules.deploy_request_info import DeployRequestInfo

DATABASE = "/v1/organizations/acme/databases/shop"
NOT_FOUND = (404, dict(code="not_found", message="Not Found"))


MODULE = DeployRequestInfo  # run by the `run` fixture (tests/unit/conftest.py) with ARGS
ARGS = dict(organization="acme", database="shop", service_token_id="svc", service_token="s3cret")


def request(number, **fields):
    return dict(dict(number=number, branch="dev", into_branch="main", state="open", deployment_state="ready"), **fields)


def page(items, next_page=None):
    return 200, dict(type="list", current_page=1, next_page=next_page, data=items)


def paths(server):
    return [r["path"][len(DATABASE):] for r in server.requests]


def test_every_page_of_the_list_is_read_with_the_filters(server, run):
    server.script = [page([request(n) for n in range(1, 101)], next_page=2), page([request(101)])]
    result = run(state="open", branch="dev", into_branch="main")
    assert [r["number"] for r in result["deploy_requests"]] == list(range(1, 102))
    assert result["changed"] is False
    assert paths(server) == ["/deploy-requests"] * 2
    query = server.requests[0]["query"]
    assert (query["state"], query["branch"], query["into_branch"], query["per_page"]) == (
        ["open"], ["dev"], ["main"], ["100"])


def test_limit_caps_the_list(server, run):
    server.script = [page([request(1), request(2)])]
    assert [r["number"] for r in run(limit=1)["deploy_requests"]] == [1]


def test_number_reads_the_request_with_its_deployment_and_operations(server, run):
    operation = dict(id="op1", table_name="logs", operation_name="CREATE", ddl_statement="CREATE TABLE logs (id int)")
    server.script = [(200, request(7, deployment=dict(state="ready", deployable=True))), page([operation])]
    result = run(number=7)
    assert result["deploy_request"]["deployment"]["deployable"] is True
    assert result["deploy_request"]["operations"] == [operation]
    assert paths(server) == ["/deploy-requests/7", "/deploy-requests/7/operations"]


def test_a_request_without_its_deployment_gets_it_read(server, run):
    server.script = [(200, request(7)), (200, dict(id="d1", state="ready", deployable=True)), page([])]
    result = run(number=7)
    assert result["deploy_request"]["deployment"]["id"] == "d1"
    assert paths(server) == ["/deploy-requests/7", "/deploy-requests/7/deployment", "/deploy-requests/7/operations"]


def test_a_number_that_does_not_exist_is_null_in_a_database_that_does(server, run):
    server.script = [NOT_FOUND, (200, dict(name="shop"))]
    assert run(number=9)["deploy_request"] is None
    assert paths(server) == ["/deploy-requests/9", ""]


def test_a_database_that_does_not_exist_is_a_failure(server, run):
    server.script = [NOT_FOUND, NOT_FOUND]
    with pytest.raises(ModuleFailure, match="Check that organization 'acme' and database 'shop' exist"):
        run(number=9)


def test_number_below_one_is_a_sentence_before_any_request(server, run):
    with pytest.raises(ModuleFailure) as caught:
        run(number=0)
    assert caught.value.msg == "number must be 1 or more, not 0."
    assert server.requests == []


@pytest.mark.parametrize("other", [dict(state="open"), dict(branch="dev"), dict(limit=3)])
def test_number_does_not_go_with_the_list_filters(run, other):
    assert run.validate(number=1, **other).error_messages


QUEUE = [dict(deploy_request_number=5, state="in_progress", auto_cutover=True),
         dict(deploy_request_number=7, state="queued", auto_cutover=True)]  # lean items, as the platform's


@pytest.mark.parametrize("number, ahead", [(7, [5]), (5, []), (8, None)])
def test_include_deploy_queue_says_what_is_ahead_of_the_request(server, run, number, ahead):
    server.script = [page(QUEUE), (200, request(number, deployment=dict(state="queued"))), page([])]
    result = run(number=number, include=["deploy_queue"])
    assert result["deploy_queue"] == QUEUE
    assert result["deploy_request"]["deploys_ahead"] == ahead
    assert paths(server) == ["/deploy-queue", "/deploy-requests/%s" % number, "/deploy-requests/%s/operations" % number]


def test_include_deploy_queue_beside_the_list(server, run):
    server.script = [page(QUEUE), page([request(5)])]
    result = run(include=["deploy_queue"])
    assert (result["deploy_queue"], [r["number"] for r in result["deploy_requests"]]) == (QUEUE, [5])


def test_include_throttler_and_storage_check_read_them_for_the_request(server, run):
    throttler = dict(keyspaces=["shop"], configurations=[dict(keyspace_name="shop", ratio=20.0)])
    storage = dict(enough_storage=True, upgradeable=True, storage_bytes_needed=1024, storage_report={})
    server.script = [(200, request(7, deployment=dict(state="ready"))), page([]), (200, throttler), (200, storage)]
    result = run(number=7, include=["throttler", "storage_check"])
    assert (result["deploy_request"]["throttler"], result["deploy_request"]["storage_check"]) == (throttler, storage)
    assert paths(server)[2:] == ["/deploy-requests/7/throttler", "/deploy-requests/7/storage-check"]


def test_what_only_a_request_has_needs_its_number_before_any_request(server, run):
    with pytest.raises(ModuleFailure) as caught:
        run(include=["deploy_queue", "throttler", "storage_check"])
    assert caught.value.msg == ("throttler and storage_check in include need one deploy request: give its number, or "
                                "leave them out.")
    assert server.requests == []
