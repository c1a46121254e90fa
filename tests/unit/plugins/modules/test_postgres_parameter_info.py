# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

import pytest

from ansible_collections.planetscale.cloud.plugins.module_utils.base import ModuleFailure
from ansible_collections.planetscale.cloud.plugins.modules.postgres_parameter_info import PostgresParameterInfo

BRANCH = "/v1/organizations/acme/databases/pgshop/branches/main"
PARAMETERS = BRANCH + "/parameters"
NOT_FOUND = (404, dict(code="not_found", message="Not Found"))
REFUSED = (422, dict(code="unprocessable", message="Cluster parameters are for PostgreSQL branches"))


MODULE = PostgresParameterInfo  # run by the `run` fixture (tests/unit/conftest.py) with ARGS
ARGS = dict(organization="acme", database="pgshop", branch="main", service_token_id="svc", service_token="s3cret")


def parameter(name, namespace="pgconf", value="4096", default="4096", **more):
    return dict(dict(id="p-" + name, name=name, namespace=namespace, value=value, default_value=default,
                     parameter_type="integer", min=64, max=2147483647, restart=False, immutable=False), **more)


CATALOGUE = [parameter("work_mem", value="8192"), parameter("statement_timeout", value="0", default="0"),
             parameter("max_connections", restart=True, value="100", default="100"),
             parameter("pool_mode", namespace="pgbouncer", value="transaction", default="transaction")]


def test_every_parameter_the_api_answers_is_returned(server, run):
    server.script = [(200, CATALOGUE)]
    result = run(check_mode=True)
    assert result == dict(changed=False, parameters=CATALOGUE)
    assert [(r["method"], r["path"], r["query"]) for r in server.requests] == [("GET", PARAMETERS, {})]


def test_a_bare_data_envelope_is_taken_too(server, run):
    server.script = [(200, dict(data=CATALOGUE[:1]))]
    assert run()["parameters"] == CATALOGUE[:1]


@pytest.mark.parametrize("args, names", [
    (dict(namespace="pgbouncer"), ["pool_mode"]),
    (dict(name=["statement_timeout", "work_mem"]), ["work_mem", "statement_timeout"]),
    (dict(name="max_connections"), ["max_connections"]),
    (dict(name=["no_such_parameter"]), []),
    (dict(namespace="pgbouncer", name=["work_mem"]), []),
    (dict(modified=True), ["work_mem"]),
    (dict(modified=False), ["statement_timeout", "max_connections", "pool_mode"]),
])
def test_the_filters_select_among_every_parameter(server, run, args, names):
    server.script = [(200, CATALOGUE)]
    assert [p["name"] for p in run(**args)["parameters"]] == names
    assert server.requests[0]["query"] == {}


def test_a_parameter_without_a_value_counts_as_at_its_default(server, run):
    server.script = [(200, [parameter("work_mem", value=None)])]
    assert run(modified=True)["parameters"] == []


@pytest.mark.parametrize("answer", [REFUSED, NOT_FOUND, (200, [])])
def test_a_mysql_branch_is_a_sentence(server, run, answer):
    server.script = [answer, (200, dict(name="main", kind="mysql"))]
    with pytest.raises(ModuleFailure) as caught:
        run()
    assert caught.value.msg == ("Branch 'main' of database 'pgshop' is a MySQL (Vitess) branch: only PostgreSQL "
                                "branches have parameters.")
    assert [r["path"] for r in server.requests] == [PARAMETERS, BRANCH]


def test_a_branch_without_kind_is_told_by_its_database(server, run):
    server.script = [REFUSED, (200, dict(name="main")), (200, dict(name="pgshop", kind="mysql"))]
    with pytest.raises(ModuleFailure) as caught:
        run()
    assert "is a MySQL (Vitess) branch" in caught.value.msg
    assert [r["path"] for r in server.requests] == [PARAMETERS, BRANCH, "/v1/organizations/acme/databases/pgshop"]


def test_a_postgresql_branch_that_answers_no_parameters_is_an_empty_list(server, run):
    server.script = [(200, []), (200, dict(name="main", kind="postgresql"))]
    assert run() == dict(changed=False, parameters=[])


def test_a_refusal_on_a_postgresql_branch_is_the_apis_sentence(server, run):
    server.script = [REFUSED, (200, dict(name="main", kind="postgresql"))]
    with pytest.raises(ModuleFailure) as caught:
        run()
    assert caught.value.msg.startswith("GET /organizations/acme/databases/pgshop/branches/main/parameters failed "
                                       "with HTTP 422: unprocessable, Cluster parameters are for PostgreSQL branches")


def test_a_missing_branch_is_the_not_found_sentence(server, run):
    server.script = [NOT_FOUND, NOT_FOUND]
    with pytest.raises(ModuleFailure) as caught:
        run()
    assert caught.value.msg == (
        "GET /organizations/acme/databases/pgshop/branches/main/parameters failed with HTTP 404: not_found, Not Found. "
        "Check that organization 'acme', database 'pgshop' and branch 'main' exist and that the credentials can see "
        "them.")


@pytest.mark.parametrize("answer, found", [({}, "an object"), ("x", "a string"), ([1, 2], "a list of other things than objects"),
                                           (dict(data="x"), "an object")])
def test_an_answer_of_another_shape_is_a_sentence(server, run, answer, found):
    server.script = [(200, answer)]
    with pytest.raises(ModuleFailure) as caught:
        run()
    assert caught.value.msg.startswith("GET /organizations/acme/databases/pgshop/branches/main/parameters")
    assert caught.value.msg.endswith("the answer is %s where a list of parameters was expected." % found)


@pytest.mark.parametrize("args, message", [
    (dict(branch="-dev"), "branch must be a branch name the platform accepts"),
    (dict(database="../x"), "database must be a name, not '../x'."),
    (dict(name=["work_mem", " "]), "name must not hold an empty name; leave it out to return every one."),
])
def test_bad_input_fails_before_any_request(server, run, args, message):
    with pytest.raises(ModuleFailure) as caught:
        run(**args)
    assert caught.value.msg.startswith(message) and server.requests == []


def test_namespace_is_a_choice(run):
    assert "namespace" in run.validate(namespace="postgresql.conf").errors.msg
