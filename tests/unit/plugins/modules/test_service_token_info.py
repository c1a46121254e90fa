# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

import json

import pytest

from ansible_collections.planetscale.cloud.plugins.module_utils.base import ModuleFailure
from ansible_collections.planetscale.cloud.plugins.modules.service_token_info import ServiceTokenInfo

URL = "/v1/organizations/acme/service-tokens"


MODULE = ServiceTokenInfo  # run by the `run` fixture (tests/unit/conftest.py) with ARGS
ARGS = dict(organization="acme", service_token_id="svc", service_token="s3cret")


def token(number, name="ci"):
    return dict(id="tk%d" % number, name=name, token="leaked-%d" % number, plain_text_refresh_token="leaked",
                service_token_accesses=[])


def access(name, database=None):
    resource = dict(id="org", name="acme", type="Organization") if database is None else dict(
        id="db", name=database, type="Database")
    return dict(id="a", access=name, type="ServiceTokenAccess", resource=resource)


def test_every_page_with_accesses_and_no_secret(server, run):
    first = (200, dict(type="list", current_page=1, next_page=2, data=[token(n) for n in range(1, 101)]))
    second = (200, dict(type="list", current_page=2, next_page=None, data=[token(101, "deploy")]))
    server.script = [first, second] + [(200, dict(data=[access("read_branch", "app"), access("create_databases")]))
                                       for dummy in range(101)]
    result = run()
    assert result["changed"] is False and len(result["service_tokens"]) == 101
    assert "leaked" not in json.dumps(result)
    assert result["service_tokens"][100]["accesses"] == [dict(access=["create_databases"]),
                                                         dict(database="app", access=["read_branch"])]
    assert server.requests[2]["path"] == URL + "/tk1/access"


def test_one_by_name_or_by_id(server, run):
    server.script = [(200, dict(data=[token(1), token(2, "deploy")])), (200, dict(data=[]))]
    assert [t["id"] for t in run(name="deploy")["service_tokens"]] == ["tk2"]
    server.script = [(404, dict(code="not_found")), (200, dict(data=[]))]
    assert run(id="tk9") == dict(changed=False, service_tokens=[])


def test_accesses_in_the_flat_shape_of_the_token_record_are_read_too(server, run):
    flat = dict(id="a", access="read_branch", resource_type="Database", resource_name="logs")
    org_wide = dict(id="b", access="read_organization", resource_type="Organization", resource_name="acme")
    server.script = [(200, dict(data=[token(1)])), (200, dict(data=[flat, org_wide]))]
    assert run()["service_tokens"][0]["accesses"] == [dict(access=["read_organization"]),
                                                      dict(database="logs", access=["read_branch"])]


def test_a_token_whose_id_is_null_or_a_path_is_a_wrong_answer_and_its_accesses_are_not_asked_for(server, run):
    for the_id, found in ((None, "its id is null"), ("..", 'its id is ".."')):
        server.requests.clear()
        server.script = [(200, dict(data=[token(1), dict(token(2), id=the_id)]))]
        server.default = (200, dict(data=[]))
        with pytest.raises(ModuleFailure) as caught:
            run()
        assert caught.value.msg == ("GET %s failed with HTTP 200: a service token of the answer has no id to read it by "
                                    "(%s); the collection cannot use it." % (URL[len("/v1"):], found))
        assert [r["path"] for r in server.requests] == [URL]
