# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

import json

import pytest

from ansible_collections.planetscale.cloud.plugins.module_utils.base import ModuleFailure, TaskContext
from ansible_collections.planetscale.cloud.plugins.modules.deploy_request_review import DeployRequestReview

REVIEWS = "/v1/organizations/acme/databases/shop/deploy-requests/7/reviews"
ME = dict(id="u-me", display_name="Me", name="Me", email="me@acme.test")
FORBIDDEN = (403, dict(code="forbidden", message="Forbidden"))


def review(state="approved", body="", actor="u-me", review_id="r1"):
    return dict(id=review_id, state=state, body=body, html_body=body, created_at="2026-01-01T00:00:00Z",
                updated_at="2026-01-01T00:00:00Z", actor=dict(id=actor, display_name=actor, avatar_url=""))


def page(*items, next_page=None):
    return (200, dict(type="list", current_page=1, next_page=next_page, data=list(items)))


MODULE = DeployRequestReview  # run by the `run` fixture (tests/unit/conftest.py) with ARGS
ARGS = dict(organization="acme", database="shop", number=7, service_token_id="svc", service_token="s3cret")


def calls(server):
    return [(r["method"], r["path"]) for r in server.requests]


def posts(server):
    return [json.loads(r["body"]) for r in server.requests if r["method"] == "POST"]


def test_approve_posts_an_approval_when_this_reviewer_has_none(server, run):
    server.script = [page(review(actor="u-other")), (200, ME), (201, review(body="ok"))]
    result = run(body="ok", diff=True)
    assert result["changed"] is True and result["review"]["id"] == "r1"
    assert calls(server) == [("GET", REVIEWS), ("GET", "/v1/user"), ("POST", REVIEWS)]
    assert posts(server) == [dict(state="approved", body="ok")]
    assert result["diff"] == dict(before={}, after=dict(state="approved", body="ok"))


def test_approve_without_body_sends_the_state_alone(server, run):
    server.script = [page(), (200, ME), (201, review())]
    assert run()["changed"] is True
    assert posts(server) == [dict(state="approved")]


@pytest.mark.parametrize("body", [None, "another text"])
def test_approve_when_the_user_already_approved_sends_no_write(server, run, body):
    mine = review(body="LGTM", review_id="r9")
    server.script = [page(review(state="commented", body="hm")), page(mine), (200, ME)]
    server.script[0][1]["next_page"] = 2
    result = run(body=body, diff=True)
    assert result["changed"] is False and result["review"] == mine
    assert [r["method"] for r in server.requests] == ["GET", "GET", "GET"]
    assert result["diff"]["before"] == result["diff"]["after"] == dict(state="approved", body="LGTM")


def test_a_service_token_s_own_approval_counts_when_get_user_is_refused(server, run):
    server.script = [page(review(actor="svc")), FORBIDDEN]
    assert run()["changed"] is False
    assert calls(server) == [("GET", REVIEWS), ("GET", "/v1/user")]


def test_another_reviewer_s_approval_or_comment_does_not_count(server, run):
    server.script = [page(review(actor="u-other"), review(state="commented", actor="u-me")), (200, ME),
                     (201, review())]
    assert run()["changed"] is True


def test_a_comment_with_the_same_text_by_this_reviewer_is_not_posted_twice(server, run):
    mine = review(state="commented", body="Looks safe.\n")
    server.script = [page(review(state="commented", body="Looks safe.", actor="u-other"), mine), (200, ME)]
    result = run(action="comment", body="Looks safe.")
    assert result["changed"] is False and result["review"] == mine


def test_a_comment_with_another_text_is_posted(server, run):
    server.script = [page(review(state="commented", body="First.")), (200, ME),
                     (201, review(state="commented", body="Second."))]
    result = run(action="comment", body="Second.")
    assert result["changed"] is True and result["review"]["body"] == "Second."
    assert posts(server) == [dict(state="commented", body="Second.")]


def test_check_mode_predicts_the_review_and_writes_nothing(server, run):
    server.script = [page(), (200, ME)]
    result = run(check_mode=True, diff=True, action="comment", body="Soon.")
    assert result == dict(changed=True, review=dict(state="commented", body="Soon."),
                          diff=dict(before={}, after=dict(state="commented", body="Soon.")))
    assert [r["method"] for r in server.requests] == ["GET", "GET"]


def test_a_review_whose_answer_was_lost_is_read_back_and_not_posted_twice(server, run, sleeps):
    server.script = [page(), (200, ME), (502, dict(code="bad_gateway")), page(review(body="ok", review_id="r2"))]
    result = run(body="ok")
    assert result["changed"] is True and result["review"]["id"] == "r2"
    assert [r["method"] for r in server.requests] == ["GET", "GET", "POST", "GET"]


def test_a_lost_review_that_reading_shows_was_not_applied_is_posted_again(server, run, sleeps):
    server.script = [page(), (200, ME), (502, dict(code="bad_gateway")), page(), (201, review())]
    assert run()["changed"] is True
    assert [r["method"] for r in server.requests] == ["GET", "GET", "POST", "GET", "POST"]
    assert len(sleeps) == 1


def test_an_access_token_that_cannot_read_its_user_fails_before_any_write(server, run):
    server.script = [page(), FORBIDDEN]
    with pytest.raises(ModuleFailure) as caught:
        run(service_token_id=None, service_token=None, access_token="pscale_oauth_x")
    assert caught.value.msg == ("The access token cannot read the user it acts for (GET /user answered HTTP 403), so "
                                "the module cannot tell this reviewer's reviews from others' and would review twice: "
                                "give the token the read_user scope.")
    assert [r["method"] for r in server.requests] == ["GET", "GET"]


def test_an_access_token_s_user_is_the_reviewer(server, run):
    server.script = [page(review(actor="svc"), review(actor="u-me", review_id="r5")), (200, ME)]
    result = run(service_token_id=None, service_token=None, access_token="pscale_oauth_x")
    assert result["changed"] is False and result["review"]["id"] == "r5"


def test_a_service_token_in_the_environment_is_not_the_reviewer_beside_an_access_token(server, run, monkeypatch):
    monkeypatch.setenv("PLANETSCALE_SERVICE_TOKEN_ID", "svc-env")
    monkeypatch.setenv("PLANETSCALE_SERVICE_TOKEN", "env-s3cret")
    server.script = [page(review(actor="svc-env")), (200, ME), (201, review())]
    assert run(service_token_id=None, service_token=None, access_token="pscale_oauth_x")["changed"] is True
    assert server.requests[-1]["headers"]["Authorization"] == "Bearer pscale_oauth_x"


def test_a_missing_deploy_request_fails_with_a_hint(server, run):
    server.script = [(404, dict(code="not_found", message="Not Found"))]
    with pytest.raises(ModuleFailure) as caught:
        run()
    assert caught.value.msg.endswith("Check that organization 'acme', database 'shop' and deploy request 7 exist and "
                                     "that the credentials can see them.")


@pytest.mark.parametrize("args, message", [
    (dict(action="comment"), "body is required with action comment: the text of the comment."),
    (dict(action="comment", body="  "), "body is required with action comment: the text of the comment."),
    (dict(number=0), "number must be a deploy request's number, 1 or more, not 0."),
    (dict(number=True), "number must be a whole number, not a boolean (true or false)."),
    (dict(database=".."), "database must be a name, not '..'."),
])
@pytest.mark.parametrize("check_mode", [True, False], ids=["check", "run"])
def test_bad_input_fails_before_any_request(server, run, args, message, check_mode):
    with pytest.raises(ModuleFailure) as caught:
        run(check_mode=check_mode, **args)
    assert caught.value.msg == message and server.requests == []


def recorded(state="approved", body="", review_id="r1"):
    """A review as the platform's recorded answers have it: no actor."""
    return dict(id=review_id, type="DeployRequestReview", state=state, body=body, html_body=body,
                created_at="2026-01-01T00:00:00Z", updated_at="2026-01-01T00:00:00Z")


@pytest.mark.parametrize("check_mode", [False, True], ids=["run", "check"])
def test_a_rerun_over_an_approval_without_actor_posts_nothing_and_warns(server, run, check_mode):
    """Recorded answers carry no actor: the approval may be this reviewer's, so a second one is not posted."""
    server.script = [page(recorded()), (200, ME)]
    ctx = TaskContext(check_mode=check_mode)
    result = run(ctx=ctx)
    assert result["changed"] is False and result["review"]["id"] == "r1"
    assert calls(server) == [("GET", REVIEWS), ("GET", "/v1/user")]
    assert ctx.warnings == ["Deploy request #7 of database 'shop' has an approval (review r1) whose record names no "
                            "author, so the module cannot tell whether it is this reviewer's; it posted none, rather "
                            "than review twice. If it is someone else's, review the deploy request in the platform's "
                            "web application."]


def test_a_comment_without_actor_counts_only_with_the_same_text(server, run):
    server.script = [page(recorded("commented", "Other."), recorded("commented", "Looks safe.", "r2")), (200, ME)]
    ctx = TaskContext()
    result = run(ctx=ctx, action="comment", body="Looks safe.")
    assert result["changed"] is False and result["review"]["id"] == "r2"
    assert ctx.warnings[0].startswith("Deploy request #7 of database 'shop' has a comment with the same text "
                                      "(review r2)")
    server.requests.clear()
    server.script = [page(recorded("commented", "Other.")), (200, ME), (201, recorded("commented", "New."))]
    assert run(ctx=TaskContext(), action="comment", body="New.")["changed"] is True
    assert posts(server) == [dict(state="commented", body="New.")]


@pytest.mark.parametrize("author", [dict(actor_id="u-other"), dict(user=dict(id="u-other")), dict(user_id="u-other"),
                                    dict(actor=dict(display_name="Me"))])
def test_the_author_is_told_by_any_id_field_and_never_by_display_name(server, run, author):
    """An ID field beside actor names the author: another's approval does not count. A display name names nobody."""
    server.script = [page(dict(recorded(), **author)), (200, ME), (201, review())]
    ctx = TaskContext()
    result = run(ctx=ctx)
    named = "display_name" not in str(author)
    assert result["changed"] is named
    assert len(ctx.warnings) == (0 if named else 1)
    assert posts(server) == ([dict(state="approved")] if named else [])


def test_a_lost_answer_read_back_finds_the_new_review_without_actor(server, run, sleeps):
    server.script = [page(recorded(review_id="old", state="commented", body="x")), (200, ME),
                     (502, dict(code="bad_gateway")), page(recorded(review_id="old", state="commented", body="x"),
                                                           recorded(review_id="r2"))]
    result = run()
    assert result["changed"] is True and result["review"]["id"] == "r2"
    assert [r["method"] for r in server.requests] == ["GET", "GET", "POST", "GET"]
