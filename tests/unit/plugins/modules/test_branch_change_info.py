# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

import pytest

from ansible_collections.planetscale.cloud.plugins.module_utils.base import ModuleFailure
from ansible_collections.planetscale.cloud.plugins.modules.branch_change_info import BranchChangeInfo

BRANCH = "/v1/organizations/acme/databases/shop/branches/main"
CHANGES = BRANCH + "/changes"
RESIZES = BRANCH + "/resizes"
NOT_FOUND = (404, dict(code="not_found", message="Not Found"))


MODULE = BranchChangeInfo  # run by the `run` fixture (tests/unit/conftest.py) with ARGS
ARGS = dict(organization="acme", database="shop", branch="main", service_token_id="svc", service_token="s3cret")


def change(cid, state="completed"):
    return dict(id=cid, state=state, cluster_name="PS_20", previous_cluster_name="PS_10", replicas=2,
                previous_replicas=1, parameters={}, previous_parameters={})


def resize(rid, state="completed"):
    return dict(id=rid, state=state, vtgate_size="VTG_10", previous_vtgate_size="VTG_5", vtgate_count=2)


def page(items, next_page=None):
    return (200, dict(type="list", next_page=next_page, data=items))


def test_every_page_of_both_lists_is_read(server, run):
    server.script = [page([change("c%d" % n) for n in range(100)], next_page=2), page([change("last")]),
                     page([resize("r1")])]
    result = run(check_mode=True)
    assert result["changed"] is False and len(result["changes"]) == 101 and result["changes"][-1]["id"] == "last"
    assert [r["id"] for r in result["resizes"]] == ["r1"]
    assert [(r["path"], r["query"]["page"]) for r in server.requests] == [
        (CHANGES, ["1"]), (CHANGES, ["2"]), (RESIZES, ["1"])]
    assert all(r["method"] == "GET" for r in server.requests)


def test_state_selects_the_requests_in_those_states_in_both_lists(server, run):
    server.script = [page([change("a", "completed"), change("b", "pending"), change("c", "resizing")]),
                     page([resize("r1", "queued"), resize("r2", "canceled")])]
    result = run(state=["queued", "pending", "resizing"])
    assert [r["id"] for r in result["changes"]] == ["b", "c"] and [r["id"] for r in result["resizes"]] == ["r1"]
    assert all("state" not in r["query"] for r in server.requests)  # the API has no such filter


def test_an_empty_state_list_selects_every_request(server, run):
    server.script = [page([change("a"), change("b", "canceled")]), page([])]
    assert [r["id"] for r in run(state=[])["changes"]] == ["a", "b"]


@pytest.mark.parametrize("kind, path, key, other", [
    ("change", CHANGES, "changes", "resizes"), ("resize", RESIZES, "resizes", "changes")])
def test_kind_reads_one_list_only(server, run, kind, path, key, other):
    server.script = [page([dict(id="x", state="completed")])]
    result = run(kind=kind)
    assert [r["id"] for r in result[key]] == ["x"] and result[other] == []
    assert [r["path"] for r in server.requests] == [path]


def test_id_reads_the_request_of_either_kind(server, run):
    server.script = [NOT_FOUND, (200, resize("r1"))]
    result = run(id="r1")
    assert result == dict(changed=False, changes=[], resizes=[resize("r1")])
    assert [r["path"] for r in server.requests] == [CHANGES + "/r1", RESIZES + "/r1"]


def test_id_of_a_request_that_does_not_exist_is_empty_lists_once_the_branch_is_known(server, run):
    server.script = [NOT_FOUND, NOT_FOUND, page([])]
    assert run(id="gone") == dict(changed=False, changes=[], resizes=[])
    assert [r["path"] for r in server.requests] == [CHANGES + "/gone", RESIZES + "/gone", CHANGES]


def test_id_and_state_a_request_in_another_state_is_not_returned(server, run):
    server.script = [(200, change("c1", "completed")), NOT_FOUND]
    assert run(id="c1", state="pending") == dict(changed=False, changes=[], resizes=[])


def test_a_missing_branch_is_the_not_found_sentence(server, run):
    server.script = [NOT_FOUND]
    with pytest.raises(ModuleFailure) as caught:
        run()
    assert caught.value.msg == (
        "GET /organizations/acme/databases/shop/branches/main/changes failed with HTTP 404: not_found, Not Found. "
        "Check that organization 'acme', database 'shop' and branch 'main' exist and that the credentials can see "
        "them.")
    assert caught.value.result["status"] == 404


def test_a_missing_branch_with_an_id_is_the_not_found_sentence(server, run):
    server.script = [NOT_FOUND, NOT_FOUND, NOT_FOUND]
    with pytest.raises(ModuleFailure) as caught:
        run(id="gone", kind="resize")
    assert caught.value.msg.startswith("GET /organizations/acme/databases/shop/branches/main/resizes failed")
    assert [r["path"] for r in server.requests] == [RESIZES + "/gone", RESIZES]


@pytest.mark.parametrize("args, message", [
    (dict(branch="Main Branch"), "branch must be a branch name the platform accepts"),
    (dict(id="../x"), "id must be a name, not '../x'."),
    (dict(database=" "), "database must be a name, not ' '."),
])
def test_bad_input_fails_before_any_request(server, run, args, message):
    with pytest.raises(ModuleFailure) as caught:
        run(**args)
    assert caught.value.msg.startswith(message) and server.requests == []


@pytest.mark.parametrize("args, option", [(dict(state=["done"]), "state"), (dict(kind="vtgate"), "kind")])
def test_states_and_kinds_are_choices(run, args, option):
    assert option in run.validate(**args).errors.msg
