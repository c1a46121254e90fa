# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

import json

import pytest

from ansible_collections.planetscale.cloud.plugins.module_utils.base import ModuleFailure
from ansible_collections.planetscale.cloud.plugins.modules.schema_recommendation import SchemaRecommendation

MODULE = SchemaRecommendation  # run by the `run` fixture (tests/unit/conftest.py) with ARGS
ARGS = dict(organization="acme", database="shop", number=3, service_token_id="svc", service_token="s3cret")
ONE = "/v1/organizations/acme/databases/shop/schema-recommendations/3"
NOT_FOUND = (404, dict(code="not_found", message="Not Found"))
ACTOR = dict(id="u1", display_name="Ada", avatar_url="https://example.com/a.png")


def rec(state="open", **more):
    return dict(dict(id="r3", number=3, state=state, title="Add an index", recommendation_type="new_index",
                     table_name="users", dismissed_at=None, dismissed_by=None), **more)


def dismissed():
    return rec("dismissed", dismissed_at="2026-11-26T10:00:00.000Z", dismissed_by=ACTOR)


def test_an_open_recommendation_is_dismissed_with_its_reason(server, run):
    server.script = [(200, rec()), (200, dismissed())]
    result = run(reason="Not worth it")
    assert result["changed"] is True and result["schema_recommendation"]["state"] == "dismissed"
    assert [(r["method"], r["path"]) for r in server.requests] == [("GET", ONE), ("POST", ONE + "/dismiss")]
    assert json.loads(server.requests[1]["body"]) == dict(reason="Not worth it")


def test_without_a_reason_the_dismissal_sends_an_empty_body(server, run):
    server.script = [(200, rec()), (200, dismissed())]
    assert run(api_retries=1)["changed"] is True  # a write proven not applied is sent again as any request may be
    assert json.loads(server.requests[1]["body"]) == {}


def test_a_dismissed_recommendation_is_left_as_it_is(server, run):
    server.script = [(200, dismissed())]
    result = run(reason="Another reason", diff=True)
    assert result["changed"] is False and result["schema_recommendation"]["dismissed_by"] == ACTOR
    assert result["diff"] == dict(before=dict(state="dismissed"), after=dict(state="dismissed"))
    assert [r["method"] for r in server.requests] == ["GET"]


def test_check_mode_predicts_the_dismissal_and_sends_nothing(server, run):
    server.script = [(200, rec())]
    result = run(check_mode=True, diff=True, reason="Later")
    assert result["changed"] is True and result["schema_recommendation"]["state"] == "dismissed"
    assert result["diff"] == dict(before=dict(state="open"), after=dict(state="dismissed", reason="Later"))
    assert [r["method"] for r in server.requests] == ["GET"]


@pytest.mark.parametrize("state", ["applied", "stale"])
def test_a_closed_recommendation_cannot_be_dismissed_and_nothing_is_sent(server, run, state):
    server.script = [(200, rec(state))]
    with pytest.raises(ModuleFailure) as caught:
        run()
    assert caught.value.msg == ("Schema recommendation #3 of database 'shop' is %s: only an open recommendation can "
                                "be dismissed." % state)
    assert caught.value.result["schema_recommendation"]["state"] == state
    assert [r["method"] for r in server.requests] == ["GET"]


def test_a_dismissal_whose_answer_was_lost_is_read_back_and_not_sent_twice(server, run, sleeps):
    server.script = [(200, rec()), (502, dict(code="bad_gateway")), (200, dismissed())]
    result = run()
    assert result["changed"] is True and result["schema_recommendation"]["dismissed_by"] == ACTOR
    assert [r["method"] for r in server.requests] == ["GET", "POST", "GET"]


def test_a_lost_dismissal_that_reading_shows_was_not_applied_is_sent_again(server, run, sleeps):
    server.script = [(200, rec()), (502, dict(code="bad_gateway")), (200, rec()), (200, dismissed())]
    assert run(api_retries=1)["changed"] is True  # a write proven not applied is sent again as any request may be
    assert [r["method"] for r in server.requests] == ["GET", "POST", "GET", "POST"]
    assert len(sleeps) == 1


def test_a_refusal_because_it_is_dismissed_already_is_the_dismissal_read_back(server, run):
    """The transport may have sent the dismissal twice (a 503 resent after it completed): the second is refused."""
    server.script = [(200, rec()), (422, dict(code="unprocessable", message="#3 is dismissed")), (200, dismissed())]
    assert run()["schema_recommendation"]["state"] == "dismissed"
    assert [r["method"] for r in server.requests] == ["GET", "POST", "GET"]


def test_a_refusal_of_another_kind_stands(server, run):
    server.script = [(200, rec()), (422, dict(code="unprocessable", message="no")), (200, rec())]
    with pytest.raises(ModuleFailure) as caught:
        run()
    assert "no" in caught.value.msg and caught.value.result["status"] == 422


def test_a_missing_recommendation_names_what_to_check(server, run):
    server.script = [NOT_FOUND]
    with pytest.raises(ModuleFailure) as caught:
        run()
    assert caught.value.msg.endswith("Check that organization 'acme', database 'shop' and schema recommendation 3 "
                                     "exist and that the credentials can see them.")


@pytest.mark.parametrize("args, message", [
    (dict(number=0), "number must be a schema recommendation's number, 1 or more, not 0."),
    (dict(reason="  "), "reason must not be blank: say why the recommendation is dismissed, or leave reason out."),
    (dict(reason="x" * 501), "reason must be at most 500 characters, not 501."),
    (dict(database="a/b"), "database must be a name, not 'a/b'."),
])
def test_bad_input_is_refused_before_any_request(server, run, args, message):
    with pytest.raises(ModuleFailure) as caught:
        run(**args)
    assert caught.value.msg == message and server.requests == []


def test_a_reason_of_500_characters_is_sent(server, run):
    server.script = [(200, rec()), (200, dismissed())]
    run(reason="x" * 500)
    assert json.loads(server.requests[1]["body"]) == dict(reason="x" * 500)


def test_an_answer_without_the_record_is_followed_by_a_read(server, run):
    server.script = [(200, rec()), (204, b""), (200, dismissed())]
    assert run()["schema_recommendation"] == dismissed()
    assert [r["method"] for r in server.requests] == ["GET", "POST", "GET"]
