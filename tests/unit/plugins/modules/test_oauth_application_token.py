# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

import json

import pytest

from ansible_collections.planetscale.cloud.plugins.module_utils.base import ModuleFailure
from ansible_collections.planetscale.cloud.plugins.modules.oauth_application_token import OAuthApplicationToken

APP = "/v1/organizations/acme/oauth-applications/app1"
TOKEN = APP + "/tokens/tk1"

MODULE = OAuthApplicationToken  # run by the `run` fixture (tests/unit/conftest.py) with ARGS
ARGS = dict(organization="acme", service_token_id="svc", service_token="s3cret", application_id="app1", id="tk1",
            state="absent")
NOT_FOUND = (404, dict(code="not_found", message="Not Found"))
LOST = "drop"  # the connection drops after the request was sent: whether the server applied it is unknown


def token(token_id="tk1"):
    """A token as the platform's reads answer it: with its access token and refresh token."""
    return dict(id=token_id, name=None, display_name="CLI (Ada)", token="leaked-access",
                plain_text_refresh_token="leaked-refresh", created_at="2026-01-14T10:19:23Z",
                last_used_at="2026-02-01T08:00:00Z", actor_display_name="Ada")


def calls(server):
    return [(r["method"], r["path"]) for r in server.requests]


def test_revokes_the_token_it_was_given_and_shows_who_held_it_never_its_secrets(server, run):
    server.script = [(200, token()), (204, b"")]
    result = run(diff=True)
    assert result["changed"] is True and "leaked" not in json.dumps(result)
    secrets = ("token", "plain_text_refresh_token")
    assert result["oauth_token"] == dict((key, value) for key, value in token().items() if key not in secrets)
    assert result["diff"] == dict(before=dict(id="tk1", display_name="CLI (Ada)", actor_display_name="Ada",
                                              created_at="2026-01-14T10:19:23Z", last_used_at="2026-02-01T08:00:00Z"),
                                  after={})
    assert calls(server) == [("GET", TOKEN), ("DELETE", TOKEN)]


def test_check_mode_predicts_the_revocation_and_sends_no_write(server, run):
    server.script = [(200, token())]
    predicted = run(check_mode=True)
    assert predicted["changed"] is True and predicted["oauth_token"]["id"] == "tk1"
    assert calls(server) == [("GET", TOKEN)]


def test_a_token_already_gone_is_no_change_in_an_application_that_exists(server, run):
    server.script = [NOT_FOUND, (200, dict(id="app1", name="CLI"))]
    assert run() == dict(changed=False)
    assert calls(server) == [("GET", TOKEN), ("GET", APP)]


def test_an_application_that_does_not_exist_fails_naming_it(server, run):
    server.script = [NOT_FOUND, NOT_FOUND]
    with pytest.raises(ModuleFailure) as caught:
        run()
    assert caught.value.msg.endswith("Check that organization 'acme' and OAuth application 'app1' exist and that the "
                                     "credentials can see them.")
    assert [method for method, dummy in calls(server)] == ["GET", "GET"]


def test_an_answer_about_another_token_revokes_nothing(server, run):
    server.script = [(200, token("tk9"))]
    with pytest.raises(ModuleFailure) as caught:
        run()
    assert "the answer is not the OAuth token 'tk1' (it names 'tk9'); nothing was revoked" in caught.value.msg
    assert calls(server) == [("GET", TOKEN)]


def test_a_lost_answer_is_read_back_and_the_revocation_never_sent_twice(server, run):
    server.script = [(200, token()), LOST, NOT_FOUND, (200, dict(id="app1"))]
    assert run()["changed"] is True
    assert calls(server) == [("GET", TOKEN), ("DELETE", TOKEN), ("GET", TOKEN), ("GET", APP)]

    server.requests.clear()
    server.script = [(200, token()), LOST, (200, token())]
    with pytest.raises(ModuleFailure) as caught:
        run()
    assert "Reading it back shows that OAuth token 'tk1' of application 'app1' still exists" in caught.value.msg
    assert "leaked" not in caught.value.msg
    assert [method for method, dummy in calls(server)] == ["GET", "DELETE", "GET"]


@pytest.mark.parametrize("state", [None, "present"])
def test_the_task_must_say_state_absent(run, state):
    assert "state" in run.validate(state=state).errors.msg
