# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

import pytest

from ansible_collections.planetscale.cloud.plugins.module_utils.base import ModuleFailure
from ansible_collections.planetscale.cloud.plugins.modules.keyspace_info import KeyspaceInfo

LIST = "/v1/organizations/acme/databases/app/branches/main/keyspaces"
NOT_FOUND = (404, dict(code="not_found", message="Not Found"))
MODULE = KeyspaceInfo
ARGS = dict(organization="acme", database="app", branch="main", service_token_id="svc", service_token="s3cret")


def page(items, next_page=None):
    """A page as the platform's keyspace list answers it: no per_page (../shared/reference/README.md)."""
    return (200, dict(type="list", current_page=1, next_page=next_page, prev_page=None, data=items))


def keyspace(name, **fields):
    return dict(dict(type="Keyspace", id="id-" + name, name=name, shards=1, sharded=False), **fields)


def test_every_page_with_each_keyspaces_resize_requests_and_rollout_status(server, run):
    rollout = dict(name="sharded", state="complete", shards=[dict(name="-80", state="complete")])
    server.script = [page([keyspace("app")], next_page=2), page([keyspace("sharded", cluster_rate_name="PS_10")]),
                     page([]), NOT_FOUND, page([dict(id="r1", state="completed")]), (200, rollout)]
    result = run(check_mode=True)
    assert result["changed"] is False
    assert [(r["path"][len(LIST):], r["query"].get("page")) for r in server.requests] == [
        ("", ["1"]), ("", ["2"]), ("/app/resizes", ["1"]), ("/app/rollout-status", None),
        ("/sharded/resizes", ["1"]), ("/sharded/rollout-status", None)]
    app, sharded = result["keyspaces"]
    assert app["resize_requests"] == [] and app["rollout_status"] is None
    assert sharded["resize_requests"] == [dict(id="r1", state="completed")] and sharded["rollout_status"] == rollout
    assert sharded["cluster_name"] == "PS_10"


def test_a_named_keyspace_without_the_extra_reads_and_a_missing_one_is_an_empty_list(server, run):
    server.script = [(200, keyspace("sharded"))]
    result = run(name="sharded", resize_requests=False, rollout_status=False)
    assert result["keyspaces"] == [keyspace("sharded")] and len(server.requests) == 1
    server.requests.clear()
    server.script = [NOT_FOUND, page([])]
    assert run(name="gone", resize_requests=False) == dict(changed=False, keyspaces=[])
    assert [r["path"] for r in server.requests] == [LIST + "/gone", LIST]


def test_a_missing_branch_is_a_sentence(server, run):
    server.script = [NOT_FOUND, NOT_FOUND]
    with pytest.raises(ModuleFailure) as caught:
        run(name="gone")
    assert caught.value.msg.endswith("Check that organization 'acme', database 'app' and branch 'main' exist and that "
                                     "the credentials can see them.")
