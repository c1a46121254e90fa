# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""branch on both kinds of database: restore_point and major_version shape a new PostgreSQL branch and are refused,
before any write, on a MySQL one; the branch carries its kind."""

from __future__ import annotations

import json

import pytest

from ansible_collections.planetscale.cloud.plugins.module_utils.base import ModuleFailure
from ansible_collections.planetscale.cloud.plugins.modules.branch import Branch

DATABASE = "/v1/organizations/acme/databases/ledger"
URL = DATABASE + "/branches"
NOT_FOUND = (404, {"code": "not_found", "message": "Not Found"})
POINT = "2026-01-31T12:00:00Z"


@pytest.fixture(autouse=True)
def no_real_waits(sleeps):
    """A wait (which a wrong answer can start) costs no time."""
    return sleeps


MODULE = Branch  # run by the `run` fixture (tests/unit/conftest.py) with ARGS
ARGS = dict(organization="acme", database="ledger", name="dev", service_token_id="svc", service_token="s3cret",
            parent_branch="main")


def branch(kind="postgresql", **fields):
    return dict(dict(id="b1", name="dev", parent_branch="main", state="ready", ready=True, kind=kind,
                     region=dict(slug="us-east")), **fields)


def calls(server):
    return [(r["method"], r["path"]) for r in server.requests]


@pytest.mark.parametrize("option, value", [("restore_point", POINT), ("major_version", "17")])
def test_a_postgres_only_option_reads_the_database_then_creates_with_it(server, run, option, value):
    server.script = [NOT_FOUND, (200, dict(name="ledger", kind="postgresql")), (201, branch())]
    result = run(**{option: value})
    assert result["changed"] is True and result["branch"]["kind"] == "postgresql"
    assert calls(server) == [("GET", URL + "/dev"), ("GET", DATABASE), ("POST", URL)]
    assert json.loads(server.requests[2]["body"]) == {"name": "dev", "parent_branch": "main", option: value}


@pytest.mark.parametrize("size", ["PS_10_AWS_ARM", "PS_DEV_AWS_X86", "PS_5_GCP_X86", "M1_10_AWS_AMD_D_METAL_10",
                                  "PS_DEV", "M7_160_D_METAL_460", "PS_AWS_R6I_2XLARGE"])
def test_a_new_branch_is_created_with_any_form_of_size_the_platform_uses(server, run, size):
    """Issue 43: the platform's sizes (PostgreSQL, Metal, PS_DEV) were refused before any request; the platform says
    which it has."""
    server.script = [NOT_FOUND, (201, branch(cluster_name=size))]
    result = run(cluster_size=size)
    assert result["changed"] is True and result["branch"]["cluster_name"] == size
    assert json.loads(server.requests[1]["body"]) == {"name": "dev", "parent_branch": "main", "cluster_size": size}


def test_without_them_no_database_read_is_spent(server, run):
    server.script = [NOT_FOUND, (201, branch(kind="mysql"))]
    result = run()
    assert result["branch"]["kind"] == "mysql"
    assert calls(server) == [("GET", URL + "/dev"), ("POST", URL)]


@pytest.mark.parametrize("args, named", [
    (dict(restore_point=POINT), "restore_point is"), (dict(major_version="16"), "major_version is"),
    (dict(restore_point=POINT, major_version="16"), "restore_point and major_version are"),
])
def test_on_a_mysql_database_they_fail_before_any_write(server, run, args, named):
    server.script = [NOT_FOUND, (200, dict(name="ledger", kind="mysql"))]
    with pytest.raises(ModuleFailure) as caught:
        run(**args)
    assert caught.value.msg.startswith(named + " only for PostgreSQL databases, ")
    assert "database 'ledger' is a mysql database; leave" in caught.value.msg
    assert [method for method, _path in calls(server)] == ["GET", "GET"]


@pytest.mark.parametrize("kind", ["mysql", "postgresql"])
def test_a_database_record_without_kind_leaves_it_to_the_parent_branch(server, run, kind):
    server.script = [NOT_FOUND, (200, dict(name="ledger", state="ready")), (200, branch(kind=kind, name="main")),
                     (201, branch(kind=kind))]
    if kind == "mysql":
        with pytest.raises(ModuleFailure, match="database 'ledger' is a mysql database; leave it out"):
            run(restore_point=POINT)
    else:
        assert run(restore_point=POINT)["changed"] is True
    assert calls(server) == [("GET", URL + "/dev"), ("GET", DATABASE), ("GET", URL + "/main")] + (
        [("POST", URL)] if kind == "postgresql" else [])


def test_check_mode_refuses_them_on_mysql_from_the_parent_it_reads_anyway(server, run):
    server.script = [NOT_FOUND, (200, branch(kind="mysql", name="main"))]
    with pytest.raises(ModuleFailure) as caught:
        run(check_mode=True, restore_point=POINT)
    assert "restore_point is only for PostgreSQL databases" in caught.value.msg
    assert calls(server) == [("GET", URL + "/dev"), ("GET", URL + "/main")]


def test_check_mode_predicts_the_kind_of_the_parent(server, run):
    server.script = [NOT_FOUND, (200, branch(name="main"))]
    result = run(check_mode=True, major_version="17")
    assert result["changed"] is True and result["branch"]["kind"] == "postgresql"
    assert [method for method, _path in calls(server)] == ["GET", "GET"]


def test_an_existing_branch_is_not_compared_nor_read_again(server, run):
    server.script = [(200, branch())]
    result = run(restore_point=POINT, major_version="17")
    assert result["changed"] is False and calls(server) == [("GET", URL + "/dev")]


@pytest.mark.parametrize("value", ["seventeen", "17.2", "0", " 17"])
def test_a_malformed_major_version_fails_before_any_request(server, run, value):
    with pytest.raises(ModuleFailure) as caught:
        run(check_mode=True, major_version=value)
    assert caught.value.msg == "major_version must be a PostgreSQL major version such as 17, not %r." % value
    assert server.requests == []
