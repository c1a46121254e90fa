# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

import json

import pytest

from ansible_collections.planetscale.cloud.plugins.module_utils.base import ModuleFailure
from ansible_collections.planetscale.cloud.plugins.modules.webhook import EVENTS, Webhook

HOOKS = "/v1/organizations/acme/databases/shop/webhooks"
HOOK_URL = "https://hooks.example.com/ps"
SECRET = "whsec-unit-9f8e7d6c5b4a"
NOT_FOUND = (404, {"code": "not_found", "message": "Not Found"})


MODULE = Webhook  # run by the `run` fixture (tests/unit/conftest.py) with ARGS
ARGS = dict(organization="acme", database="shop", service_token_id="svc", service_token="s3cret")


def hook(**fields):
    return dict(dict(id="wh1", url=HOOK_URL, secret=SECRET, enabled=True, events=["branch.ready"],
                     last_sent_result=None, last_sent_success=None, last_sent_at=None,
                     created_at="2026-01-01T00:00:00Z", updated_at="2026-01-01T00:00:00Z"), **fields)


def page(*items, next_page=None):
    return (200, dict(type="list", next_page=next_page, data=list(items)))


def writes(server):
    return [(r["method"], r["path"]) for r in server.requests if r["method"] != "GET"]


def test_create_sends_url_events_and_enabled_and_keeps_the_secret_out(server, run):
    server.script = [page(), (201, hook(events=["deploy_request.opened", "branch.ready"]))]
    result = run(diff=True, url=HOOK_URL, events=["deploy_request.opened", "branch.ready"], enabled=True)
    assert result["changed"] is True and result["webhook"]["id"] == "wh1"
    assert json.loads(server.requests[1]["body"]) == dict(
        url=HOOK_URL, events=["branch.ready", "deploy_request.opened"], enabled=True)
    assert "secret" not in result["webhook"] and SECRET not in json.dumps(result)
    assert result["diff"] == dict(before={}, after=dict(url=HOOK_URL, enabled=True,
                                                        events=["branch.ready", "deploy_request.opened"]))


def test_events_compare_as_a_set_and_a_second_run_writes_nothing(server, run):
    server.script = [page(hook(id="other", url="https://elsewhere.example.com"),
                          hook(events=["deploy_request.opened", "branch.ready"]))]
    result = run(url=HOOK_URL, events=["branch.ready", "deploy_request.opened", "branch.ready"], enabled=True)
    assert result["changed"] is False and writes(server) == []
    assert result["webhook"]["id"] == "wh1" and "secret" not in result["webhook"]


def test_the_list_is_walked_to_the_end_to_find_the_url(server, run):
    server.script = [page(*[hook(id="h%d" % n, url="https://x.example.com/%d" % n) for n in range(100)], next_page=2),
                     page(hook(enabled=False))]
    result = run(url=HOOK_URL)
    assert result["changed"] is False and result["webhook"]["enabled"] is False
    assert [r["query"].get("page") for r in server.requests] == [["1"], ["2"]]


def test_a_change_is_one_patch_of_what_differs_with_a_diff_without_the_secret(server, run):
    server.script = [page(hook()), (200, hook(enabled=False, events=["deploy_request.closed"]))]
    result = run(diff=True, url=HOOK_URL, events=["deploy_request.closed"], enabled=False)
    assert result["changed"] is True and writes(server) == [("PATCH", HOOKS + "/wh1")]
    assert json.loads(server.requests[1]["body"]) == dict(events=["deploy_request.closed"], enabled=False)
    assert result["diff"] == dict(before=dict(url=HOOK_URL, enabled=True, events=["branch.ready"]),
                                  after=dict(url=HOOK_URL, enabled=False, events=["deploy_request.closed"]))
    assert SECRET not in json.dumps(result)


def test_check_mode_predicts_create_and_update_without_writing(server, run):
    server.script = [page()]
    result = run(check_mode=True, diff=True, url=HOOK_URL, events=["branch.ready"])
    assert result == dict(changed=True, webhook=dict(url=HOOK_URL, events=["branch.ready"], enabled=True),
                          diff=dict(before={}, after=dict(url=HOOK_URL, events=["branch.ready"], enabled=True)))
    server.script = [page(hook())]
    result = run(check_mode=True, url=HOOK_URL, enabled=False)
    assert result["changed"] is True and result["webhook"]["enabled"] is False and "secret" not in result["webhook"]
    assert writes(server) == []


def test_with_id_a_different_url_moves_the_webhook(server, run):
    server.script = [(200, hook()), (200, hook(url="https://new.example.com/ps"))]
    result = run(id="wh1", url="https://new.example.com/ps")
    assert result["changed"] is True and writes(server) == [("PATCH", HOOKS + "/wh1")]
    assert server.requests[0]["path"] == HOOKS + "/wh1"
    assert json.loads(server.requests[1]["body"]) == dict(url="https://new.example.com/ps")


def test_a_missing_id_is_a_sentence_and_absent_by_id_is_no_change(server, run):
    server.script = [NOT_FOUND]
    with pytest.raises(ModuleFailure) as caught:
        run(id="wh9")
    assert caught.value.msg == ("Webhook 'wh9' of database 'shop' with id 'wh9' does not exist; leave id out to "
                                "create it.")
    server.script = [NOT_FOUND]
    assert run(id="wh9", state="absent") == dict(changed=False)


def test_return_secret_returns_it(server, run):
    server.script = [page(hook())]
    assert run(url=HOOK_URL, return_secret=True)["webhook"]["secret"] == SECRET


def test_delete_then_delete_again(server, run):
    server.script = [page(hook()), (204, b"")]
    result = run(diff=True, url=HOOK_URL, state="absent")
    assert result["changed"] is True and writes(server) == [("DELETE", HOOKS + "/wh1")]
    assert SECRET not in json.dumps(result)
    server.requests.clear()
    server.script = [page()]
    assert run(url=HOOK_URL, state="absent") == dict(changed=False) and writes(server) == []


@pytest.mark.parametrize("events,named", [
    (["deploy_request.opened", "deploy.opened"], "'deploy.opened' is"),
    (["branch.ready", "Branch.Ready", "x"], "'Branch.Ready', 'x' are"),
])
def test_an_unknown_event_is_named_with_the_valid_ones_before_any_request(server, run, events, named):
    with pytest.raises(ModuleFailure) as caught:
        run(url=HOOK_URL, events=events)
    assert caught.value.msg == "events: %s not an event of the platform; the events are %s." % (
        named, ", ".join(EVENTS))
    assert "webhook.test" in caught.value.msg and server.requests == []


@pytest.mark.parametrize("url", ["hooks.example.com/ps", "ftp://hooks.example.com", "https://", " https://a.example",
                                 "https://a.example:99999/x"])
def test_a_url_that_is_not_one_is_refused_before_any_request(server, run, url):
    with pytest.raises(ModuleFailure) as caught:
        run(url=url)
    assert caught.value.msg.startswith("url must be an absolute http or https URL") and server.requests == []


def test_one_of_url_and_id_is_required_and_a_blank_url_is_refused(server, run):
    assert run.validate().error_messages == ["one of the following is required: url, id"]
    with pytest.raises(ModuleFailure) as caught:
        run(url=" ")
    assert caught.value.msg == "url must not be empty." and server.requests == []


def test_several_webhooks_of_one_url_are_not_guessed(server, run):
    server.script = [page(hook(), hook(id="wh2"))]
    with pytest.raises(ModuleFailure) as caught:
        run(url=HOOK_URL, enabled=False)
    assert caught.value.msg == ("2 webhooks of database 'shop' send to %s (IDs wh1, wh2); give id to name one."
                                % HOOK_URL)
    assert writes(server) == []


def test_a_sixth_webhook_is_a_sentence(server, run):
    five = [hook(id="h%d" % n, url="https://x.example.com/%d" % n) for n in range(5)]
    refusal = (422, dict(code="unprocessable", message="Database has reached the webhook limit"))
    server.script = [page(*five), refusal, page(*five)]
    with pytest.raises(ModuleFailure) as caught:
        run(url=HOOK_URL)
    assert caught.value.msg == (
        "Database 'shop' has 5 webhooks, the most the platform allows, so it refused to create webhook %r of "
        "database 'shop' (HTTP 422: Database has reached the webhook limit). Delete one (state absent) or reuse one "
        "(give its id and the new url)." % HOOK_URL)
    assert caught.value.result["status"] == 422


def test_a_create_refused_because_another_run_made_it_is_that_webhook(server, run):
    server.script = [page(), (422, dict(code="unprocessable", message="url taken")), page(hook()), page(hook())]
    result = run(url=HOOK_URL)
    assert result["changed"] is False and result["webhook"]["id"] == "wh1"


def test_a_create_whose_answer_was_lost_is_read_back_by_url_not_sent_twice(server, run, sleeps):
    server.script = [page(), (502, {"code": "bad_gateway"}), page(hook())]
    result = run(url=HOOK_URL, events=["branch.ready"])
    assert result["changed"] is True and result["webhook"]["id"] == "wh1" and "secret" not in result["webhook"]
    assert writes(server) == [("POST", HOOKS)]


def test_send_test_posts_the_test_and_is_a_change(server, run):
    server.script = [page(hook()), (204, b"")]
    result = run(url=HOOK_URL, send_test=True)
    assert result["changed"] is True and writes(server) == [("POST", HOOKS + "/wh1/test")]
    assert "secret" not in result["webhook"]


def test_send_test_in_check_mode_sends_nothing_and_is_a_change(server, run):
    server.script = [page(hook())]
    result = run(check_mode=True, url=HOOK_URL, send_test=True)
    assert result["changed"] is True and writes(server) == []
    server.script = [page()]
    assert run(check_mode=True, url=HOOK_URL, send_test=True)["changed"] is True and writes(server) == []


def test_a_new_webhook_gets_its_test_after_the_create(server, run):
    server.script = [page(), (201, hook()), (204, b"")]
    assert run(url=HOOK_URL, send_test=True)["changed"] is True
    assert writes(server) == [("POST", HOOKS), ("POST", HOOKS + "/wh1/test")]


@pytest.mark.parametrize("status", [429])
def test_a_refused_test_is_a_sentence_carrying_the_webhook_without_its_secret(server, run, status):
    server.script = [page(hook()), (status, dict(code="rate_limited", message="Too soon"))]
    with pytest.raises(ModuleFailure) as caught:
        run(url=HOOK_URL, send_test=True)
    assert caught.value.msg == (
        "The platform refused to send a test delivery to webhook %r of database 'shop' (HTTP %d: Too soon): it sends "
        "at most one every 20 seconds. Run the task again later." % (HOOK_URL, status))
    assert caught.value.result["changed"] is False and caught.value.result["webhook"]["id"] == "wh1"
    assert SECRET not in json.dumps(caught.value.result)


def test_a_test_whose_answer_was_lost_and_then_refused_was_sent(server, run, sleeps):
    server.script = [page(hook()), (502, {}), (429, dict(code="rate_limited", message="Too soon"))]
    result = run(url=HOOK_URL, send_test=True)
    assert result["changed"] is True
    assert writes(server) == [("POST", HOOKS + "/wh1/test")] * 2


def test_a_test_whose_answer_was_lost_before_it_was_sent_is_sent_again(server, run, sleeps):
    server.script = [page(hook()), (502, {}), (204, b"")]
    assert run(url=HOOK_URL, send_test=True)["changed"] is True
    assert writes(server) == [("POST", HOOKS + "/wh1/test")] * 2


def test_a_missing_database_hints_at_the_names(server, run):
    server.script = [NOT_FOUND]
    with pytest.raises(ModuleFailure) as caught:
        run(url=HOOK_URL)
    assert caught.value.msg.endswith("Check that organization 'acme' and database 'shop' exist and that the "
                                     "credentials can see them.")


def test_after_a_lost_answer_the_refusal_is_not_waited_out_with_the_clients_retries(server, run, sleeps):
    refusal = (429, dict(code="rate_limited", message="Too soon"), {"Retry-After": "19"})
    server.script = [page(hook()), (502, {}), refusal, (204, b"")]
    assert run(url=HOOK_URL, send_test=True, api_retries=3)["changed"] is True
    assert writes(server) == [("POST", HOOKS + "/wh1/test")] * 2 and 19 not in sleeps


def test_the_clients_retries_come_back_after_a_block_without_them(server, sleeps):
    from ansible_collections.planetscale.cloud.plugins.module_utils.client import ApiError, Client

    client = Client(server.url, retries=2)
    server.script = [(429, {}, {"Retry-After": "1"}), (429, {}, {"Retry-After": "1"}), (200, {"ok": True})]
    with pytest.raises(ApiError) as caught:
        with client.retrying(0):
            client.get("/x")
    assert caught.value.status == 429 and len(server.requests) == 1
    assert client.get("/x") == {"ok": True} and len(server.requests) == 3


def test_a_test_refused_for_another_reason_is_the_apis_sentence(server, run):
    server.script = [page(hook()), (422, dict(code="unprocessable", message="Webhook is disabled"))]
    with pytest.raises(ModuleFailure) as caught:
        run(url=HOOK_URL, send_test=True)
    assert caught.value.msg.startswith("POST %s/wh1/test failed with HTTP 422: unprocessable, Webhook is disabled."
                                       % HOOKS[len("/v1"):])
    assert caught.value.result["webhook"]["id"] == "wh1" and "secret" not in caught.value.result["webhook"]


@pytest.mark.parametrize("zero", ["0001-01-01T00:00:00Z", "0001-01-01T00:00:00.000Z"])
def test_the_zero_time_of_a_new_webhook_is_null(server, run, zero):
    """The platform answers a create with last_sent_at the zero time (recorded): a time that has not been is null."""
    server.script = [page(), (201, hook(last_sent_at=zero, last_sent_success=False, last_sent_result=""))]
    result = run(url=HOOK_URL, return_secret=True)
    assert result["changed"] is True
    assert result["webhook"]["last_sent_at"] is None
    assert result["webhook"]["created_at"] == "2026-01-01T00:00:00Z" and result["webhook"]["secret"] == SECRET
