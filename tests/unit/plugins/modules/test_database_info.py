# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

import pytest

from ansible.module_utils.common.arg_spec import ModuleArgumentSpecValidator

from ansible_collections.planetscale.cloud.plugins.module_utils.base import ModuleFailure, TaskContext
from ansible_collections.planetscale.cloud.plugins.modules.database_info import DatabaseInfo

DATABASES = "/v1/organizations/acme/databases"
NOT_FOUND = (404, dict(code="not_found", message="Not Found"))


def validate(**args):
    args = dict(dict(organization="acme", service_token_id="svc", service_token="s3cret",
                     api_url="http://127.0.0.1:9/v1", api_retries=0), **args)
    spec = DatabaseInfo.spec()
    spec.pop("supports_check_mode")
    return ModuleArgumentSpecValidator(**spec).validate(args)


def run(server, check_mode=False, **args):
    validation = validate(api_url=server.url + "/v1", **args)
    assert not validation.error_messages
    return DatabaseInfo(validation.validated_parameters, TaskContext(check_mode=check_mode)).execute()


def database(name):
    return dict(id="id-" + name, name=name, ready=True, state="ready", kind="mysql")


def page(items, next_page=None):
    return (200, dict(type="list", current_page=1, next_page=next_page, data=items))


def test_every_page_of_databases_is_read(server):
    server.script = [page([database("d%d" % n) for n in range(100)], next_page=2), page([database("last")])]
    result = run(server)
    assert len(result["databases"]) == 101 and result["changed"] is False
    assert [r["path"] for r in server.requests] == [DATABASES] * 2
    assert [r["query"]["page"] for r in server.requests] == [["1"], ["2"]]


def test_q_is_sent_to_the_api(server):
    server.script = [page([database("staging-1")])]
    assert [d["name"] for d in run(server, q="staging")["databases"]] == ["staging-1"]
    assert server.requests[0]["query"]["q"] == ["staging"]


def test_limit_caps_the_list(server):
    server.script = [page([database("a"), database("b")])]
    assert [d["name"] for d in run(server, limit=1)["databases"]] == ["a"]
    assert server.requests[0]["query"]["per_page"] == ["1"]


def test_name_reads_that_database_only(server):
    server.script = [(200, database("shop"))]
    assert run(server, name="shop", check_mode=True)["databases"] == [database("shop")]
    assert [r["path"] for r in server.requests] == [DATABASES + "/shop"]


def test_a_missing_database_is_an_empty_list(server):
    server.script = [NOT_FOUND, page([])]
    assert run(server, name="ghost")["databases"] == []
    assert [r["path"] for r in server.requests] == [DATABASES + "/ghost", DATABASES]


def test_a_missing_organization_fails_with_a_sentence(server):
    server.script = [NOT_FOUND, (404, dict(code="not_found", message="Organization not found"))]
    with pytest.raises(ModuleFailure) as caught:
        run(server, name="ghost")
    assert "Organization not found" in caught.value.msg
    assert "Check that organization 'acme' exists" in caught.value.msg


@pytest.mark.parametrize("args, message", [
    (dict(name=".."), "name must be a name, not '..'."),
    (dict(limit=0), "limit must be 1 or more, not 0."),
])
def test_bad_input_fails_before_any_request(server, args, message):
    with pytest.raises(ModuleFailure) as caught:
        run(server, **args)
    assert caught.value.msg == message and server.requests == []


def test_name_and_q_are_exclusive():
    assert "mutually exclusive" in validate(name="shop", q="s").errors.msg
