# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

import pytest


from ansible_collections.planetscale.cloud.plugins.module_utils.base import ModuleFailure
from ansible_collections.planetscale.cloud.plugins.modules.database_info import DatabaseInfo

DATABASES = "/v1/organizations/acme/databases"
NOT_FOUND = (404, dict(code="not_found", message="Not Found"))


MODULE = DatabaseInfo  # run by the `run` fixture (tests/unit/conftest.py) with ARGS
ARGS = dict(organization="acme", service_token_id="svc", service_token="s3cret")


def database(name):
    return dict(id="id-" + name, name=name, ready=True, state="ready", kind="mysql")


def page(items, next_page=None):
    return (200, dict(type="list", current_page=1, next_page=next_page, data=items))


def test_every_page_of_databases_is_read(server, run):
    server.script = [page([database("d%d" % n) for n in range(100)], next_page=2), page([database("last")])]
    result = run()
    assert len(result["databases"]) == 101 and result["changed"] is False
    assert [r["path"] for r in server.requests] == [DATABASES] * 2
    assert [r["query"]["page"] for r in server.requests] == [["1"], ["2"]]


def test_q_is_sent_to_the_api(server, run):
    server.script = [page([database("staging-1")])]
    assert [d["name"] for d in run(q="staging")["databases"]] == ["staging-1"]
    assert server.requests[0]["query"]["q"] == ["staging"]


def test_limit_caps_the_list(server, run):
    server.script = [page([database("a"), database("b")])]
    assert [d["name"] for d in run(limit=1)["databases"]] == ["a"]
    assert server.requests[0]["query"]["per_page"] == ["1"]


def test_name_reads_that_database_only(server, run):
    server.script = [(200, database("shop"))]
    assert run(name="shop", check_mode=True)["databases"] == [database("shop")]
    assert [r["path"] for r in server.requests] == [DATABASES + "/shop"]


def test_a_missing_database_is_an_empty_list(server, run):
    server.script = [NOT_FOUND, page([])]
    assert run(name="ghost")["databases"] == []
    assert [r["path"] for r in server.requests] == [DATABASES + "/ghost", DATABASES]


def test_a_missing_organization_fails_with_a_sentence(server, run):
    server.script = [NOT_FOUND, (404, dict(code="not_found", message="Organization not found"))]
    with pytest.raises(ModuleFailure) as caught:
        run(name="ghost")
    assert "Organization not found" in caught.value.msg
    assert "Check that organization 'acme' exists" in caught.value.msg


@pytest.mark.parametrize("args, message", [
    (dict(name=".."), "name must be a name, not '..'."),
    (dict(limit=0), "limit must be 1 or more, not 0."),
])
def test_bad_input_fails_before_any_request(server, run, args, message):
    with pytest.raises(ModuleFailure) as caught:
        run(**args)
    assert caught.value.msg == message and server.requests == []


def test_name_and_q_are_exclusive(run):
    assert "mutually exclusive" in run.validate(name="shop", q="s").errors.msg
