# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

import pytest

from ansible_collections.planetscale.cloud.plugins.module_utils.base import ModuleFailure
from ansible_collections.planetscale.cloud.plugins.modules.backup_policy_info import BackupPolicyInfo

POLICIES = "/v1/organizations/acme/databases/shop/backup-policies"
NOT_FOUND = (404, dict(code="not_found", message="Not Found"))

MODULE = BackupPolicyInfo  # run by the `run` fixture (tests/unit/conftest.py) with ARGS
ARGS = dict(organization="acme", database="shop", service_token_id="svc", service_token="s3cret")


def policy(pid, name=None):
    return dict(id=pid, name=name or pid, target="production", frequency_value=1, frequency_unit="day",
                retention_value=7, retention_unit="day", schedule_time="00:00", required=False)


def page(items, next_page=None):
    return (200, dict(type="list", next_page=next_page, data=items))


def test_every_page_is_read_in_check_mode_too(server, run):
    server.script = [page([policy("p%d" % n) for n in range(100)], next_page=2), page([policy("last")])]
    result = run(check_mode=True)
    assert result["changed"] is False and len(result["backup_policies"]) == 101
    assert result["backup_policies"][-1]["id"] == "last"
    assert [r["query"]["page"] for r in server.requests] == [["1"], ["2"]]
    assert all(r["path"] == POLICIES and r["method"] == "GET" for r in server.requests)


def test_name_selects_the_policy_of_that_name(server, run):
    server.script = [page([policy("a", "daily"), policy("b", "weekly"), policy("c", "default")])]
    assert [p["id"] for p in run(name="weekly")["backup_policies"]] == ["b"]


def test_id_reads_one_and_a_missing_one_is_an_empty_list(server, run):
    server.script = [(200, policy("a"))]
    assert [p["id"] for p in run(id="a")["backup_policies"]] == ["a"]
    assert server.requests[0]["path"] == POLICIES + "/a"
    server.requests.clear()
    server.script = [NOT_FOUND, page([])]
    assert run(id="gone") == dict(changed=False, backup_policies=[])
    assert [r["path"] for r in server.requests] == [POLICIES + "/gone", POLICIES]


def test_a_missing_database_is_a_sentence(server, run):
    server.script = [NOT_FOUND, NOT_FOUND]
    with pytest.raises(ModuleFailure) as caught:
        run(id="gone")
    assert caught.value.msg.endswith("Check that organization 'acme' and database 'shop' exist and that the "
                                     "credentials can see them.")


def test_an_id_that_cannot_be_a_name_is_refused_before_any_request(server, run):
    with pytest.raises(ModuleFailure) as caught:
        run(id="a/../b")
    assert caught.value.msg == "id must be a name, not 'a/../b'." and server.requests == []
