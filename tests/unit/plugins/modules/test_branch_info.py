# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

import pytest


from ansible_collections.planetscale.cloud.plugins.module_utils.base import ModuleFailure
from ansible_collections.planetscale.cloud.plugins.modules.branch_info import BranchInfo

SECRET = "pscale_tkn_very_secret_value"
DATABASE = "/v1/organizations/acme/databases/shop"
NOT_FOUND = (404, dict(code="not_found", message="Not Found"))


MODULE = BranchInfo  # run by the `run` fixture (tests/unit/conftest.py) with ARGS
ARGS = dict(organization="acme", database="shop", service_token_id="svc", service_token=SECRET)


def branch(name, production=False):
    return dict(id="id-" + name, name=name, production=production, ready=True, state="ready")


def page(items, next_page=None):
    return (200, dict(type="list", current_page=1, next_page=next_page, data=items))


def test_every_page_of_branches_is_read(server, run):
    server.script = [page([branch("b%d" % n) for n in range(100)], next_page=2), page([branch("last")])]
    result = run()
    assert len(result["branches"]) == 101
    assert result["changed"] is False
    assert [r["path"] for r in server.requests] == [DATABASE + "/branches"] * 2
    assert [r["query"]["page"] for r in server.requests] == [["1"], ["2"]]


@pytest.mark.parametrize("production, sent", [(True, "true"), (False, "false")])
def test_production_filter_is_sent_as_the_api_spells_it(server, run, production, sent):
    server.script = [page([branch("main", production)])]
    run(production=production)
    assert server.requests[0]["query"]["production"] == [sent]


def test_limit_caps_the_list(server, run):
    server.script = [page([branch("a"), branch("b")])]
    assert [b["name"] for b in run(limit=1)["branches"]] == ["a"]
    assert server.requests[0]["query"]["per_page"] == ["1"]


def test_name_reads_that_branch_only(server, run):
    server.script = [(200, branch("dev"))]
    result = run(name="dev")
    assert result["branches"] == [branch("dev")]
    assert [r["path"] for r in server.requests] == [DATABASE + "/branches/dev"]


def test_a_name_with_a_path_character_fails_before_any_request(server, run):
    # escaped it would be one segment, but a server that decodes the path first would route it elsewhere
    with pytest.raises(ModuleFailure) as caught:
        run(name="a/b")
    assert caught.value.msg == "name must be a name, not 'a/b'."
    assert server.requests == []


def test_absent_branch_is_an_empty_list_once_the_database_is_confirmed(server, run):
    server.script = [NOT_FOUND, (200, dict(name="shop"))]
    result = run(name="gone")
    assert result == dict(branches=[], changed=False)
    assert [r["path"] for r in server.requests] == [DATABASE + "/branches/gone", DATABASE]


def test_absent_database_is_a_failure_naming_it(server, run):
    server.script = [NOT_FOUND, NOT_FOUND]
    with pytest.raises(ModuleFailure) as caught:
        run(name="main", database="nope")
    assert caught.value.result["status"] == 404
    assert caught.value.msg.startswith("GET /organizations/acme/databases/nope failed with HTTP 404")
    assert "organization 'acme' and database 'nope' exist" in caught.value.msg


def test_absent_database_without_name_is_a_failure(server, run):
    server.script = [NOT_FOUND]
    with pytest.raises(ModuleFailure) as caught:
        run(database="nope")
    assert "database 'nope'" in caught.value.msg


def test_name_with_production_filter_that_does_not_match_is_empty(server, run):
    server.script = [(200, branch("dev", production=False))]
    assert run(name="dev", production=True)["branches"] == []


def test_name_that_cannot_be_a_path_segment_fails_before_any_request(server, run):
    with pytest.raises(ModuleFailure) as caught:
        run(name="..")
    assert "name must be a name" in caught.value.msg
    assert server.requests == []


def test_check_mode_gives_the_same_result(server, run):
    server.default = (200, branch("dev"))
    assert run(check_mode=True, name="dev") == run(name="dev")


def test_cluster_name_is_filled_from_cluster_rate_name_where_a_record_has_only_that(server, run):
    """Real records often carry cluster_rate_name where the OpenAPI says cluster_name; cluster_name wins."""
    both = dict(branch("both"), cluster_name="PS_20", cluster_rate_name="PS_10")
    server.script = [page([dict(branch("rate"), cluster_rate_name="PS_10"), both, branch("none")]),
                     (200, dict(branch("dev"), cluster_rate_name="PS_40"))]
    assert [b.get("cluster_name") for b in run()["branches"]] == ["PS_10", "PS_20", None]
    assert run(name="dev")["branches"][0]["cluster_name"] == "PS_40"
