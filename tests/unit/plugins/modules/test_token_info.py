# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

import http.server
import json

import pytest

from ansible.module_utils.common.arg_spec import ModuleArgumentSpecValidator

from ansible_collections.planetscale.cloud.plugins.module_utils.base import ModuleFailure
from ansible_collections.planetscale.cloud.plugins.modules.token_info import TokenInfo

ACCESS = "pscale_oauth_the_token_to_check"
T0 = 1795313550  # 2026-11-22T02:12:30Z
ACTIVE = dict(active=True, scope="read_user read_organization", client_id="cid", token_type="Bearer",
              exp=T0 + 3600, iat=T0, sub="u1")


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch):
    for name in ("PLANETSCALE_ACCESS_TOKEN", "PLANETSCALE_AUTH_URL"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(autouse=True)
def server_clock(monkeypatch):
    """The scripted server's Date header: one minute after T0."""
    monkeypatch.setattr(http.server.BaseHTTPRequestHandler, "date_time_string",
                        lambda self, timestamp=None: "Sun, 22 Nov 2026 02:13:30 GMT")


MODULE = TokenInfo  # run by the `run` fixture (tests/unit/conftest.py) with ARGS
ARGS = dict(access_token=ACCESS)


def validate(args):
    spec = TokenInfo.spec()
    spec.pop("supports_check_mode")
    return ModuleArgumentSpecValidator(**spec).validate(args)


@pytest.mark.parametrize("check_mode", [False, True])
def test_an_active_token_is_described_with_its_lifetime(server, run, check_mode):
    server.script = [(200, ACTIVE)]
    result = run(check_mode=check_mode)
    request = server.requests[0]
    assert (request["method"], request["path"]) == ("GET", "/oauth/token/info")
    assert request["headers"]["Authorization"] == "Bearer " + ACCESS
    assert result == dict(changed=False, token_info=dict(
        ACTIVE, scopes=["read_user", "read_organization"], expires_at="2026-11-22T03:12:30Z", expires_in=3539))


def test_an_inactive_token_is_an_answer(server, run):
    server.script = [(200, dict(active=False))]
    assert run() == dict(changed=False, token_info=dict(active=False))


def test_fail_if_inactive_turns_it_into_a_sentence_without_the_token(server, run):
    server.script = [(200, dict(active=False))]
    with pytest.raises(ModuleFailure) as caught:
        run(fail_if_inactive=True)
    assert caught.value.msg.startswith("The access token is not active: it expired, was revoked or is unknown")
    assert "planetscale.cloud.token" in caught.value.msg
    assert caught.value.result == dict(token_info=dict(active=False))
    assert ACCESS not in caught.value.msg


def test_fail_if_inactive_accepts_an_active_token(server, run):
    server.script = [(200, ACTIVE)]
    assert run(fail_if_inactive=True)["token_info"]["active"] is True


def test_a_refused_bearer_token_says_which_option_to_check(server, run):
    server.script = [(401, dict(error="invalid_request", error_description="Bearer %s is malformed" % ACCESS))]
    with pytest.raises(ModuleFailure) as caught:
        run()
    assert caught.value.msg.startswith("GET /oauth/token/info failed with HTTP 401")
    assert "check access_token (or PLANETSCALE_ACCESS_TOKEN)" in caught.value.msg
    assert ACCESS not in caught.value.msg + json.dumps(caught.value.result)


def test_an_empty_token_fails_before_any_request(server, run):
    with pytest.raises(ModuleFailure) as caught:
        run(access_token=" ")
    assert "access_token is empty" in caught.value.msg
    assert server.requests == []


def test_access_token_is_required_secret_and_read_from_the_environment(monkeypatch):
    assert "access_token" in " ".join(validate({}).error_messages)
    monkeypatch.setenv("PLANETSCALE_ACCESS_TOKEN", ACCESS)
    monkeypatch.setenv("PLANETSCALE_AUTH_URL", "http://auth.example")
    validation = validate({})
    assert not validation.error_messages
    assert validation.validated_parameters["access_token"] == ACCESS
    assert validation.validated_parameters["auth_url"] == "http://auth.example"
    assert ACCESS in validation._no_log_values


def test_the_options_used_are_the_oauth_server_ones_and_the_rest_of_the_group_is_not_its_own():
    options = TokenInfo.spec()["argument_spec"]
    assert options["access_token"]["required"] is True and "fallback" in options["auth_url"]
    for unused in ("service_token_id", "service_token", "api_url", "organization", "client_id", "client_secret"):
        assert unused not in options  # the action plugin leaves them out when module_defaults for the group sets them
