# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

import pytest

from ansible.module_utils.common.arg_spec import ModuleArgumentSpecValidator

from ansible_collections.planetscale.cloud.plugins.module_utils.base import ModuleFailure
from ansible_collections.planetscale.cloud.plugins.modules.team_info import TeamInfo

SECRET = "pscale_tkn_very_secret_value"
TEAMS = "/v1/organizations/acme/teams"
NOT_FOUND = (404, dict(code="not_found", message="Not Found"))


MODULE = TeamInfo  # run by the `run` fixture (tests/unit/conftest.py) with ARGS
ARGS = dict(organization="acme", service_token_id="svc", service_token=SECRET)


def team(slug, managed=False):
    return dict(id="id-" + slug, slug=slug, name=slug.title(), managed=managed, members=[])


def page(items, next_page=None):
    return (200, dict(type="list", current_page=1, next_page=next_page, data=items))


def test_every_page_of_teams_is_read_with_managed(server, run):
    server.script = [page([team("t%d" % n) for n in range(100)], next_page=2), page([team("sso", managed=True)])]
    result = run()
    assert len(result["teams"]) == 101
    assert [t["slug"] for t in result["teams"] if t["managed"]] == ["sso"]
    assert [r["query"]["page"] for r in server.requests] == [["1"], ["2"]]
    assert all(r["query"]["per_page"] == ["100"] for r in server.requests)


def test_limit_caps_the_list(server, run):
    server.script = [page([team("a"), team("b")], next_page=2)]
    assert [t["slug"] for t in run(limit=2)["teams"]] == ["a", "b"]
    assert len(server.requests) == 1


def test_team_reads_that_team_only(server, run):
    server.script = [(200, team("backend"))]
    assert run(team="backend")["teams"] == [team("backend")]
    assert [r["path"] for r in server.requests] == [TEAMS + "/backend"]


def test_absent_team_is_an_empty_list_once_the_organization_is_confirmed(server, run):
    server.script = [NOT_FOUND, page([team("other")])]
    assert run(team="gone") == dict(teams=[], changed=False)
    assert [r["path"] for r in server.requests] == [TEAMS + "/gone", TEAMS]
    assert server.requests[1]["query"]["per_page"] == ["1"]


def test_absent_organization_is_a_failure(server, run):
    server.script = [NOT_FOUND, NOT_FOUND]
    with pytest.raises(ModuleFailure) as caught:
        run(team="backend")
    assert caught.value.result["status"] == 404
    assert caught.value.msg.endswith("Check that organization 'acme' exists and that the credentials can see it.")


def test_check_mode_gives_the_same_result(server, run):
    server.default = page([team("a")])
    assert run(check_mode=True) == run()


def test_missing_credentials_fail_before_any_request(server, monkeypatch):
    for name in ("PLANETSCALE_ACCESS_TOKEN", "PLANETSCALE_SERVICE_TOKEN_ID", "PLANETSCALE_SERVICE_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    spec = TeamInfo.spec()
    spec.pop("supports_check_mode")
    params = ModuleArgumentSpecValidator(**spec).validate(
        dict(organization="acme", api_url=server.url + "/v1")).validated_parameters
    with pytest.raises(ModuleFailure) as caught:
        TeamInfo(params).execute()
    assert "No credentials were given" in caught.value.msg
    assert server.requests == []
