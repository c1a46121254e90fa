# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

import pytest

from ansible_collections.planetscale.cloud.plugins.module_utils.base import ModuleFailure
from ansible_collections.planetscale.cloud.plugins.modules.traffic_budget_info import TrafficBudgetInfo

BRANCH = "/v1/organizations/acme/databases/pgapp/branches/main"

MODULE = TrafficBudgetInfo  # run by the `run` fixture (tests/unit/conftest.py) with ARGS
ARGS = dict(organization="acme", database="pgapp", branch="main", service_token_id="svc", service_token="s3cret")


def page(*names, next_page=None):
    return (200, dict(type="list", next_page=next_page, data=[dict(id="id-" + n, name=n, rules=[]) for n in names]))


def test_every_page_is_listed(server, run):
    server.script = [page("a", "b", next_page=2), page("c")]
    result = run()
    assert [b["name"] for b in result["traffic_budgets"]] == ["a", "b", "c"] and result["changed"] is False
    assert [r["path"] for r in server.requests] == [BRANCH + "/traffic/budgets"] * 2
    assert server.requests[1]["query"]["page"] == ["2"]


def test_by_name(server, run):
    server.script = [page("a", "b")]
    assert [b["name"] for b in run(name="b")["traffic_budgets"]] == ["b"]
    server.script = [page("a")]
    assert run(name="b")["traffic_budgets"] == []


def test_by_fingerprint_through_query_insights(server, run):
    server.script = [page("a")]
    result = run(fingerprint="7a3d", keyspace="pgapp")
    assert [b["name"] for b in result["traffic_budgets"]] == ["a"]
    assert server.requests[0]["path"] == BRANCH + "/insights/7a3d/traffic/budgets"
    assert server.requests[0]["query"]["keyspace"] == ["pgapp"]


def test_keyspace_needs_a_fingerprint(run):
    assert "fingerprint" in run.validate(keyspace="pgapp").errors.msg


def test_a_missing_branch_names_what_to_check(server, run):
    server.script = [(404, dict(code="not_found", message="Branch not found"))]
    with pytest.raises(ModuleFailure) as caught:
        run()
    assert "branch 'main'" in caught.value.msg and "database 'pgapp'" in caught.value.msg


def test_a_mysql_branch_is_a_sentence_not_the_platforms_422(server, run):
    server.script = [(422, dict(code="unprocessable", message="Traffic control is for PostgreSQL branches")),
                     (200, dict(id="br1", name="main", kind="mysql"))]
    with pytest.raises(ModuleFailure) as caught:
        run(database="app")
    assert caught.value.msg == ("Branch 'main' of database 'app' is a MySQL (Vitess) branch: only PostgreSQL branches "
                                "have traffic budgets.")
