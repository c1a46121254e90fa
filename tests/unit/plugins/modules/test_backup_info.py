# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

import pytest


from ansible_collections.planetscale.cloud.plugins.module_utils.base import ModuleFailure
from ansible_collections.planetscale.cloud.plugins.modules.backup_info import BackupInfo

BACKUPS = "/v1/organizations/acme/databases/shop/branches/main/backups"
NOT_FOUND = (404, dict(code="not_found", message="Not Found"))


MODULE = BackupInfo  # run by the `run` fixture (tests/unit/conftest.py) with ARGS
ARGS = dict(organization="acme", database="shop", branch="main", service_token_id="svc", service_token="s3cret")


def backup(bid, name="nightly", state="success"):
    return dict(id=bid, name=name, state=state)


def page(items, next_page=None):
    return (200, dict(type="list", next_page=next_page, data=items))


def test_every_page_is_read(server, run):
    server.script = [page([backup("b%d" % n) for n in range(100)], next_page=2), page([backup("last")])]
    result = run(check_mode=True)
    assert len(result["backups"]) == 101 and result["changed"] is False
    assert [r["query"]["page"] for r in server.requests] == [["1"], ["2"]]
    assert [r["path"] for r in server.requests] == [BACKUPS] * 2


def test_the_filters_are_sent_as_the_api_names_them(server, run):
    server.script = [page([])]
    run(state="success", policy="p1", production=True, deleted=True, limit=5,
        **{"from": "2026-01-01T00:00:00Z", "to": "2026-01-31T23:59:59Z"})
    query = server.requests[0]["query"]
    assert query == {"state": ["success"], "policy": ["p1"], "from": ["2026-01-01T00:00:00Z"],
                     "to": ["2026-01-31T23:59:59Z"], "production": ["true"], "all": ["true"], "per_page": ["5"],
                     "page": ["1"]}


def test_name_is_matched_over_every_page_and_limit_applies_after_it(server, run):
    server.script = [page([backup("a", "other"), backup("b"), backup("c")], next_page=2), page([backup("d")])]
    result = run(name="nightly", limit=2)
    assert [b["id"] for b in result["backups"]] == ["b", "c"]
    assert server.requests[0]["query"]["per_page"] == ["100"]


def test_id_reads_that_backup(server, run):
    server.script = [(200, backup("b1"))]
    assert run(id="b1")["backups"] == [backup("b1")]
    assert [r["path"] for r in server.requests] == [BACKUPS + "/b1"]


def test_id_with_a_state_it_does_not_have_is_an_empty_list(server, run):
    server.script = [(200, backup("b1", state="failed"))]
    assert run(id="b1", state="success")["backups"] == []


def test_a_missing_backup_is_an_empty_list_and_a_missing_branch_fails(server, run):
    server.script = [NOT_FOUND, page([])]
    assert run(id="gone")["backups"] == []
    server.script = [NOT_FOUND, (404, dict(code="not_found", message="Branch not found"))]
    with pytest.raises(ModuleFailure) as caught:
        run(id="gone")
    assert "Branch not found" in caught.value.msg
    assert "Check that organization 'acme', database 'shop' and branch 'main' exist" in caught.value.msg


@pytest.mark.parametrize("args, message", [
    ({"from": "yesterday"}, "from must be an ISO 8601 time such as 2026-01-31T12:00:00Z, not 'yesterday'."),
    ({"to": "2026-13-01T00:00:00Z"}, "to must be an ISO 8601 time"),
    ({"branch": "../main"}, "branch must be a name, not '../main'."),
    ({"limit": 0}, "limit must be 1 or more, not 0."),
])
def test_bad_input_fails_before_any_request(server, run, args, message):
    with pytest.raises(ModuleFailure) as caught:
        run(**args)
    assert caught.value.msg.startswith(message) and server.requests == []


def test_state_is_a_choice(run):
    assert "state" in run.validate(state="done").errors.msg
