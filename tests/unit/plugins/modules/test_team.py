# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

import json

import pytest

from ansible_collections.planetscale.cloud.plugins.module_utils.base import ModuleFailure
from ansible_collections.planetscale.cloud.plugins.modules.team import Team

URL = "/v1/organizations/acme/teams"
NOT_FOUND = (404, {"code": "not_found", "message": "Not Found"})
SSO = ("Team 'backend' is managed by single sign-on, so it cannot be changed through the API; "
       "change it in the identity provider instead.")


MODULE = Team  # run by the `run` fixture (tests/unit/conftest.py) with ARGS
ARGS = dict(organization="acme", service_token_id="svc", service_token="s3cret")


def user(number):
    return dict(id="u%d" % number, email="user%d@example.test" % number, display_name="User %d" % number)


def team(*members, **fields):
    return dict(dict(id="t1", slug="backend", name="Backend", description="", managed=False,
                     members=[user(n) for n in members]), **fields)


def page(*items):
    return (200, dict(type="list", current_page=1, next_page=None, data=list(items)))


def sent(server):
    return [(r["method"], r["path"], json.loads(r["body"]) if r["body"] else None) for r in server.requests]


def writes(server):
    return [r for r in sent(server) if r[0] != "GET"]


def test_create_then_add_members_given_by_id_and_email(server, run):
    server.script = [page(), page(dict(user=user(2)), dict(user=user(3))), (200, team(description="Owns the shop")),
                     (200, dict(id="m1", user=user(1))), (200, dict(id="m2", user=user(3)))]
    result = run(diff=True, name="Backend", description="Owns the shop", members=["u1", "USER3@example.test"])
    assert result["changed"] is True
    assert [m["id"] for m in result["team"]["members"]] == ["u1", "u3"]
    assert server.requests[0]["query"]["q"] == ["Backend"]
    assert server.requests[1]["path"] == "/v1/organizations/acme/members"
    assert writes(server) == [("POST", URL, dict(name="Backend", description="Owns the shop")),
                              ("POST", URL + "/backend/members", dict(user_id="u1")),
                              ("POST", URL + "/backend/members", dict(user_id="u3"))]
    assert result["diff"] == dict(before={}, after=dict(name="Backend", description="Owns the shop",
                                                        members=["user1@example.test", "user3@example.test"]))


def test_an_unknown_email_fails_before_any_write(server, run):
    server.script = [page(), page(dict(user=user(2)))]
    with pytest.raises(ModuleFailure) as caught:
        run(name="Backend", members=["nobody@example.test"])
    assert caught.value.msg == ("No member of organization 'acme' has the e-mail address 'nobody@example.test'; "
                                "invite them first.")
    assert writes(server) == []


def test_a_matching_team_costs_one_read(server, run):
    server.script = [(200, team(1, 2))]
    result = run(team="backend", description="", members=["user2@example.test", "u1"])
    assert result["changed"] is False
    assert len(server.requests) == 1


def test_a_team_is_found_by_its_exact_name(server, run):
    server.script = [page(team(slug="backend-2", name="Backend 2"), team(slug="backend-3", name="My Backend"),
                          team())]
    result = run(name="Backend")
    assert result["changed"] is False and result["team"]["slug"] == "backend"


def test_the_name_is_found_whatever_its_case_and_then_corrected(server, run):
    server.script = [page(team(name="backend")), (200, team())]
    assert run(name="Backend")["changed"] is True
    assert writes(server) == [("PATCH", URL + "/backend", dict(name="Backend"))]


def test_one_patch_carries_only_what_differs(server, run):
    server.script = [(200, team(1)), (200, team(1, name="Platform"))]
    result = run(diff=True, team="backend", name="Platform", description="", members=["u1"])
    assert result["changed"] is True
    assert writes(server) == [("PATCH", URL + "/backend", dict(name="Platform"))]
    assert result["diff"]["before"]["name"] == "Backend" and result["diff"]["after"]["name"] == "Platform"


def test_a_rename_that_gives_a_new_slug_adds_members_under_it(server, run):
    server.script = [(200, team(1)), (200, team(1, name="Platform", slug="platform")), (200, dict(id="m2", user=user(2)))]
    result = run(team="backend", name="Platform", members=["u2"])
    assert result["changed"] is True
    assert writes(server) == [("PATCH", URL + "/backend", dict(name="Platform")),
                              ("POST", URL + "/platform/members", dict(user_id="u2"))]


def test_organization_members_without_an_email_are_skipped(server, run):
    server.script = [page(), page(dict(user=dict(id="u9", email=None)), dict(user=None), dict(user=user(2))),
                     (200, team()), (200, dict(id="m2", user=user(2)))]
    result = run(name="Backend", members=["user2@example.test"])
    assert result["changed"] is True
    assert writes(server)[-1] == ("POST", URL + "/backend/members", dict(user_id="u2"))


def test_members_not_listed_stay_unless_purged(server, run):
    server.script = [(200, team(1, 2)), (200, dict(id="m3", user=user(3)))]
    result = run(team="backend", members=["u3"])
    assert [m["id"] for m in result["team"]["members"]] == ["u1", "u2", "u3"]
    assert writes(server) == [("POST", URL + "/backend/members", dict(user_id="u3"))]


def test_purge_members_removes_the_others(server, run):
    server.script = [(200, team(1, 2)), (204, b"")]
    result = run(diff=True, team="backend", members=["user1@example.test"], purge_members=True)
    assert [m["id"] for m in result["team"]["members"]] == ["u1"]
    assert writes(server) == [("DELETE", URL + "/backend/members/u2", None)]
    assert result["diff"]["before"]["members"] == ["user1@example.test", "user2@example.test"]
    assert result["diff"]["after"]["members"] == ["user1@example.test"]


def test_check_mode_predicts_members_without_writing(server, run):
    server.script = [(200, team(1)), page(dict(user=user(1)), dict(user=user(2)))]
    result = run(check_mode=True, diff=True, team="backend", members=["user2@example.test"],
                 purge_members=True)
    assert result["changed"] is True
    assert [m["email"] for m in result["team"]["members"]] == ["user2@example.test"]
    assert result["diff"]["after"]["members"] == ["user2@example.test"]
    assert writes(server) == []


def test_name_is_required_to_create(server, run):
    server.script = [NOT_FOUND]
    with pytest.raises(ModuleFailure, match="^name is required to create team 'backend', which does not exist.$"):
        run(team="backend")


def test_a_slug_that_is_missing_falls_back_to_the_name(server, run):
    server.script = [NOT_FOUND, page(team(slug="platform", name="Platform"))]
    assert run(team="backend", name="Platform")["changed"] is False


def test_a_team_managed_by_single_sign_on_refuses_any_change_before_sending(server, run):
    server.script = [(200, team(1, managed=True))]
    with pytest.raises(ModuleFailure) as caught:
        run(team="backend", description="new")
    assert caught.value.msg == SSO
    assert writes(server) == []


def test_a_team_managed_by_single_sign_on_is_fine_when_nothing_changes(server, run):
    server.script = [(200, team(1, managed=True))]
    assert run(team="backend", members=["u1"])["changed"] is False


def test_deleting_a_team_managed_by_single_sign_on_is_refused(server, run):
    server.script = [(200, team(managed=True))]
    with pytest.raises(ModuleFailure, match="managed by single sign-on"):
        run(team="backend", state="absent")
    assert writes(server) == []


@pytest.mark.parametrize("method", ["PATCH", "DELETE"])
def test_the_apis_422_for_single_sign_on_gives_the_same_sentence(server, run, method):
    """The team became managed by single sign-on between the read and the write."""
    refusal = (422, {"code": "unprocessable", "message": "Teams managed by single sign-on cannot be updated"})
    server.script = [(200, team()), refusal, (200, team(managed=True))]
    with pytest.raises(ModuleFailure) as caught:
        run(team="backend", **(dict(description="new") if method == "PATCH" else dict(state="absent")))
    assert caught.value.msg == SSO
    assert caught.value.result["status"] == 422
    assert caught.value.result["error"]["method"] == method


def test_a_member_write_refused_for_single_sign_on_gives_the_same_sentence(server, run):
    server.script = [(200, team()), (422, {"code": "unprocessable", "message": "Unprocessable"}), NOT_FOUND,
                     (200, team(managed=True))]
    with pytest.raises(ModuleFailure) as caught:
        run(team="backend", members=["u1"])
    assert caught.value.msg == SSO


def test_another_422_stays_what_it_is(server, run):
    server.script = [(200, team()), (422, {"code": "unprocessable", "message": "Name has already been taken"}),
                     (200, team())]
    with pytest.raises(ModuleFailure, match="Name has already been taken"):
        run(team="backend", name="Frontend")


def test_a_member_added_by_a_request_whose_answer_was_lost_is_checked(server, run):
    server.script = [(200, team()), (502, {}), (200, dict(id="m1", user=user(1)))]
    result = run(team="backend", members=["u1"])
    assert result["changed"] is True and result["team"]["members"] == [user(1)]
    assert sent(server)[2][:2] == ("GET", URL + "/backend/members/u1")


def test_a_member_add_whose_answer_was_lost_and_not_applied_is_sent_again(server, run):
    server.script = [(200, team()), "drop", NOT_FOUND, (200, dict(id="m4", user=user(4)))]
    result = run(team="backend", members=["u4"])
    assert result["changed"] is True and [m["id"] for m in result["team"]["members"]] == ["u4"]
    assert writes(server) == [("POST", URL + "/backend/members", dict(user_id="u4"))] * 2


def test_a_member_another_run_added_meanwhile_is_not_an_error(server, run):
    server.script = [(200, team()), (422, {"code": "unprocessable", "message": "User 'u4' is already a member"}),
                     (200, dict(id="m4", user=user(4)))]
    result = run(team="backend", members=["u4"])
    assert result["changed"] is False  # this run's write was refused: another run made the change
    assert [m["email"] for m in result["team"]["members"]] == ["user4@example.test"]
    assert server.requests[-1]["path"] == URL + "/backend/members/u4"


def test_absent_deletes_and_again_is_no_change(server, run):
    server.script = [(200, team()), (204, b""), NOT_FOUND]
    assert run(team="backend", state="absent")["changed"] is True
    assert run(team="backend", state="absent")["changed"] is False
    assert writes(server) == [("DELETE", URL + "/backend", None)]


def test_a_team_created_meanwhile_by_another_run_is_used(server, run):
    server.script = [page(), (422, {"code": "unprocessable", "message": "Name has already been taken"}),
                     page(team())]
    result = run(name="Backend")
    assert result["changed"] is False
    assert [w[0] for w in writes(server)] == ["POST"]


@pytest.mark.parametrize("args, message", [(dict(team="x", name=" "), "name must not be empty."),
                                           (dict(team="x", members=[""]), "members must not be empty."),
                                           (dict(team=".."), "team must be a name, not '..'.")])
def test_bad_input_fails_before_any_request(server, run, args, message):
    with pytest.raises(ModuleFailure) as caught:
        run(**args)
    assert caught.value.msg == message
    assert server.requests == []
