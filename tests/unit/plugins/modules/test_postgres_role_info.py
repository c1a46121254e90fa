# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

import json

import pytest

from ansible_collections.planetscale.cloud.plugins.module_utils.base import ModuleFailure
from ansible_collections.planetscale.cloud.plugins.modules.postgres_role_info import PostgresRoleInfo

SECRET = "pscale_pw_the_secret_itself"
BRANCH = "/v1/organizations/acme/databases/ledger/branches/main"
PATH = BRANCH + "/roles"


MODULE = PostgresRoleInfo  # run by the `run` fixture (tests/unit/conftest.py) with ARGS
ARGS = dict(organization="acme", database="ledger", branch="main", service_token_id="svc", service_token="s3cret")


def role(name, number=0, **fields):
    return dict(dict(id="r%d" % number, name=name, username="u%d.br1" % number, password="", expired=False,
                     default=False, inherited_roles=[], ttl=0), **fields)


DEFAULT = role("postgres", 99, default=True)


def page(items, next_page=None):
    return (200, dict(type="list", current_page=1, next_page=next_page, data=items))


def test_every_page_and_the_default_role_never_a_secret(server, run):
    server.script = [page([role("a", n, password=SECRET) for n in range(100)], next_page=2),
                     page([role("a", n) for n in range(100, 130)]), (200, dict(DEFAULT, password=SECRET))]
    result = run(check_mode=True)
    assert [r["id"] for r in result["roles"]] == ["r%d" % n for n in range(130)]
    assert result["default_role"] == dict((k, v) for k, v in DEFAULT.items() if k != "password")
    assert [r["query"].get("page") for r in server.requests] == [["1"], ["2"], None]
    assert server.requests[-1]["path"] == PATH + "/default"
    assert SECRET not in json.dumps(result) and result["changed"] is False
    assert all("password" not in r for r in result["roles"])


def test_name_sends_the_search_and_keeps_exact_matches_only(server, run):
    server.script = [page([role("app", 1), role("app-server", 2), role("app", 3)]), (200, DEFAULT)]
    result = run(name="app")
    assert [r["id"] for r in result["roles"]] == ["r1", "r3"]
    assert server.requests[0]["query"]["q"] == ["app"]


def test_limit_stops_reading(server, run):
    server.script = [page([role("a", n) for n in range(100)], next_page=2), (200, DEFAULT)]
    assert len(run(limit=3)["roles"]) == 3
    assert [r["path"] for r in server.requests] == [PATH, PATH + "/default"]


def test_a_mysql_branch_fails_pointing_to_password_info(server, run):
    server.script = [(422, {"code": "unprocessable", "message": "MySQL branch"}), (200, dict(name="main", kind="mysql"))]
    with pytest.raises(ModuleFailure, match="^Branch 'main' of database 'ledger' is a MySQL branch: roles are for "
                                            "PostgreSQL branches; manage its credentials with planetscale.cloud.password"):
        run()


def test_a_missing_branch_says_what_to_check(server, run):
    server.script = [(404, {"code": "not_found", "message": "Not Found"}), (404, {"code": "not_found"})]
    with pytest.raises(ModuleFailure, match="Check that organization 'acme', database 'ledger' and branch 'main' exist"):
        run()


@pytest.mark.parametrize("args, message", [
    (dict(name=" "), "name must not be empty; leave it out to list every role."),
    (dict(limit=0), "limit must be 1 or more, not 0."),
    (dict(branch=".."), "branch must be a name, not '..'."),
])
def test_bad_input_fails_before_any_request(server, run, args, message):
    with pytest.raises(ModuleFailure) as caught:
        run(**args)
    assert caught.value.msg == message and server.requests == []
