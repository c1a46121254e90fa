# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

import pytest

from ansible_collections.planetscale.cloud.plugins.module_utils.base import ModuleFailure

from ansible_collections.planetscale.cloud.plugins.modules.organization_member_info import OrganizationMemberInfo


MODULE = OrganizationMemberInfo  # run by the `run` fixture (tests/unit/conftest.py) with ARGS
ARGS = dict(organization="acme", service_token_id="svc", service_token="s3cret")


def member(number, role="member"):
    return dict(id="m%d" % number, role=role, user=dict(id="u%d" % number, email="user%d@example.com" % number))


def test_every_page_and_the_filter_q(server, run):
    first = (200, dict(type="list", current_page=1, next_page=2, data=[member(n) for n in range(100)]))
    second = (200, dict(type="list", current_page=2, next_page=None, data=[member(100, "admin")]))
    server.script = [first, second]
    result = run(q="user")
    assert result["changed"] is False and len(result["members"]) == 101
    assert result["members"][-1]["role"] == "admin"
    assert [r["query"].get("q") for r in server.requests] == [["user"], ["user"]]


def test_one_member_by_email_user_id_or_membership_id(server, run):
    listing = (200, dict(data=[member(1), member(2)]))
    for wanted in ("USER2@example.com", "u2", "m2"):
        server.script = [listing]
        assert run(member=wanted)["members"] == [member(2)]
    server.script = [listing]
    assert run(member="nobody@example.com")["members"] == []


def test_one_member_by_user_id_is_one_read_of_that_member(server, run):
    server.script = [(200, member(7, "admin")), (404, dict(code="not_found", message="Not Found"))]
    assert run(user_id="u7")["members"] == [member(7, "admin")]
    assert run(user_id="u8")["members"] == []
    assert [(r["method"], r["path"]) for r in server.requests] == [
        ("GET", "/v1/organizations/acme/members/u7"), ("GET", "/v1/organizations/acme/members/u8")]


def test_user_id_goes_alone_and_names_one_user(run):
    assert run.validate(user_id="u7", q="user").error_messages
    assert run.validate(user_id="u7", member="u7").error_messages
    with pytest.raises(ModuleFailure, match="user_id must be a name"):
        run(user_id="u7/../x")
