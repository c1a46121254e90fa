# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

import json

import pytest

from ansible_collections.planetscale.cloud.plugins.module_utils.base import ModuleFailure
from ansible_collections.planetscale.cloud.plugins.modules.organization_member import OrganizationMember

URL = "/v1/organizations/acme/members"
NOT_FOUND = (404, {"code": "not_found", "message": "Not Found"})


MODULE = OrganizationMember  # run by the `run` fixture (tests/unit/conftest.py) with ARGS
ARGS = dict(organization="acme", member="bob@example.com", service_token_id="svc", service_token="s3cret")


def member(name, role="member", **user):
    return dict(id="m-" + name, role=role, created_at="2026-01-01T00:00:00Z", updated_at="2026-01-01T00:00:00Z",
                user=dict(dict(id="u-" + name, email="%s@example.com" % name, name=name, display_name=name), **user))


def page(*items):
    return (200, dict(type="list", current_page=1, next_page=None, data=list(items)))


def me(name="alice"):
    return (200, dict(id="u-" + name, email="%s@example.com" % name))


def sent(server):
    return [(r["method"], r["path"], json.loads(r["body"]) if r["body"] else None) for r in server.requests]


def writes(server):
    return [r for r in sent(server) if r[0] != "GET"]


ORG = (member("alice", "admin"), member("bob"))


def test_a_role_changes_with_one_patch_by_user_id_and_a_diff(server, run):
    server.script = [page(*ORG), me(), (200, member("bob", "admin"))]
    result = run(diff=True, member="BOB@example.com", role="admin")
    assert result["changed"] is True and result["member"]["role"] == "admin"
    assert writes(server) == [("PATCH", URL + "/u-bob", dict(role="admin"))]
    assert result["diff"] == dict(before=dict(member="bob@example.com", role="member"),
                                  after=dict(member="bob@example.com", role="admin"))


def test_the_same_role_is_one_list_and_no_write(server, run):
    server.script = [page(*ORG)]
    assert run(member="m-bob", role="member") == dict(changed=False, member=ORG[1])
    assert len(server.requests) == 1


def test_check_mode_predicts_without_writing(server, run):
    server.script = [page(*ORG), me()]
    result = run(check_mode=True, member="u-bob", role="admin")
    assert result["changed"] is True and result["member"]["role"] == "admin" and writes(server) == []


def test_a_user_who_is_not_a_member_cannot_be_invited(server, run):
    server.script = [page(*ORG)]
    with pytest.raises(ModuleFailure) as failure:
        run(member="carol@example.com", role="member")
    assert failure.value.msg == ("carol@example.com is not a member of organization 'acme', and the platform has no "
                                 "API to invite a user: invite them in the platform's web application, then run the "
                                 "task again.")


def test_the_own_user_is_refused_before_any_write(server, run):
    server.script = [page(member("alice", "admin"), member("bob", "admin")), me("bob")]
    with pytest.raises(ModuleFailure) as failure:
        run(role="member")
    assert "is the user these credentials act for" in failure.value.msg and writes(server) == []
    server.requests.clear()
    server.script = [page(member("alice", "admin"), member("bob", "admin")), me("bob")]
    with pytest.raises(ModuleFailure):
        run(state="absent")
    assert writes(server) == []


def test_the_own_user_of_a_service_token_is_its_actor_where_user_is_not_answered(server, run):
    server.script = [page(*ORG), NOT_FOUND, (200, dict(id="svc", name="ci", actor_id="u-bob"))]
    with pytest.raises(ModuleFailure) as failure:
        run(role="admin")
    assert "is the user these credentials act for" in failure.value.msg and writes(server) == []
    assert [r["path"] for r in server.requests][1:] == ["/v1/user", "/v1/organizations/acme/service-tokens/svc"]


@pytest.mark.parametrize("flag", ["managed", "directory_managed"])
def test_a_member_an_identity_provider_manages_is_refused(server, run, flag):
    server.script = [page(member("alice", "admin"), member("bob", **{flag: True}))]
    with pytest.raises(ModuleFailure) as failure:
        run(role="admin")
    assert failure.value.msg == ("Member 'bob@example.com' of organization 'acme' has a role an identity provider "
                                 "manages, so it cannot be changed or removed through the API; change it in the "
                                 "identity provider.")
    assert writes(server) == []


@pytest.mark.parametrize("change", [dict(role="member"), dict(state="absent")])
def test_the_last_administrator_is_neither_demoted_nor_removed(server, run, change):
    server.script = [page(member("alice"), member("bob", "admin"))]
    with pytest.raises(ModuleFailure) as failure:
        run(**change)
    assert "is the organization's only administrator" in failure.value.msg and writes(server) == []


def test_removal_sends_the_flags_asked_for_and_a_second_run_changes_nothing(server, run):
    server.script = [page(*ORG), me(), (204, b"")]
    assert run(state="absent", delete_service_tokens=True) == dict(changed=True)
    assert writes(server) == [("DELETE", URL + "/u-bob", None)]
    assert server.requests[-1]["query"] == dict(delete_service_tokens=["true"])
    server.requests.clear()
    server.script = [page(ORG[0])]
    assert run(state="absent") == dict(changed=False)
    assert writes(server) == []


def test_a_member_that_is_no_name_is_refused_before_any_request(server, run):
    with pytest.raises(ModuleFailure) as failure:
        run(member="../x")
    assert failure.value.msg == "member must be an e-mail address, a user ID or a membership ID, not '../x'."
    assert server.requests == []
