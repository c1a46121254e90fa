# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

import http.server
import json
import time
from urllib.parse import parse_qs

import pytest

from ansible.module_utils.common.arg_spec import ModuleArgumentSpecValidator

from ansible_collections.planetscale.cloud.plugins.module_utils.base import ModuleFailure, TaskContext
from ansible_collections.planetscale.cloud.plugins.modules.token import Token

CLIENT_SECRET = "pscale_app_secret_top"
REFRESH = "pscale_ref_old_refresh"
ACCESS = "pscale_oauth_current_access"
CODE = "one-time-code-xyz"
SERVICE_SECRET = "pscale_tkn_service_secret"
T0 = 1795313550  # 2026-11-22T02:12:30Z
DATE = "Sun, 22 Nov 2026 02:12:30 GMT"
GRANT = (200, dict(access_token="pscale_oauth_new", refresh_token="pscale_ref_new", token_type="Bearer",
                   expires_in=3600, scope="read_user read_organization"))
APP_PATH = "/v1/organizations/acme/oauth-applications/app1/token"
RECORD = dict(id="grant1", token="pscale_oauth_new", plain_text_refresh_token="pscale_ref_new",
              expires_at="2026-11-22T03:12:30.000Z", service_token_accesses=[dict(access="read_user")])
ENVIRONMENT = ("PLANETSCALE_ACCESS_TOKEN", "PLANETSCALE_CLIENT_ID", "PLANETSCALE_CLIENT_SECRET", "PLANETSCALE_ORG",
               "PLANETSCALE_SERVICE_TOKEN_ID", "PLANETSCALE_SERVICE_TOKEN", "PLANETSCALE_AUTH_URL", "PLANETSCALE_API_URL")


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch):
    for name in ENVIRONMENT:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def server_date(monkeypatch):
    """Let the scripted server's Date header say what the test needs (the server's clock)."""
    def set_date(text):
        monkeypatch.setattr(http.server.BaseHTTPRequestHandler, "date_time_string", lambda self, timestamp=None: text)
    return set_date


MODULE = Token  # run by the `run` fixture (tests/unit/conftest.py) with ARGS
ARGS = dict(client_id="cid", client_secret=CLIENT_SECRET)


def fails(run, **args):
    with pytest.raises(ModuleFailure) as caught:
        run(**args)
    return caught.value


def refresh(**args):
    values = dict(grant_type="refresh_token", refresh_token=REFRESH)
    values.update(args)
    return values


def keep_valid(**args):
    values = refresh(access_token=ACCESS, min_ttl=600)
    values.update(args)
    return values


def exchange(**args):
    values = dict(grant_type="authorization_code", code=CODE, redirect_uri="https://app/cb")
    values.update(args)
    return values


def info(exp, iat=T0):
    return (200, dict(active=True, scope="read_user", client_id="cid", token_type="Bearer", exp=exp, iat=iat, sub="u1"))


def form(request):
    return dict((key, values[0]) for key, values in parse_qs(request["body"]).items())


def test_code_exchange_posts_the_form_without_authorization(server, run, server_date):
    server_date(DATE)
    server.script = [GRANT]
    result = run(**exchange())
    request = server.requests[0]
    assert (request["method"], request["path"]) == ("POST", "/oauth/token")
    assert request["headers"]["Content-Type"] == "application/x-www-form-urlencoded"
    assert "Authorization" not in request["headers"]
    assert form(request) == dict(grant_type="authorization_code", code=CODE, redirect_uri="https://app/cb",
                                 client_id="cid", client_secret=CLIENT_SECRET)
    assert result == dict(changed=True, token=dict(
        access_token="pscale_oauth_new", refresh_token="pscale_ref_new", token_type="Bearer", expires_in=3600,
        expires_at="2026-11-22T03:12:30Z", scope="read_user read_organization",
        scopes=["read_user", "read_organization"]))


def test_refresh_sends_only_the_refresh_fields(server, run):
    server.script = [GRANT]
    result = run(**refresh(redirect_uri="https://app/cb", access_token=ACCESS))
    assert form(server.requests[0]) == dict(grant_type="refresh_token", refresh_token=REFRESH, client_id="cid",
                                            client_secret=CLIENT_SECRET)
    assert result["changed"] is True and "msg" not in result


@pytest.mark.parametrize("args, phrase", [
    (exchange(), "the code would be exchanged for tokens"),
    (refresh(), "the tokens would be refreshed"),
])
def test_check_mode_sends_nothing(server, run, args, phrase):
    result = run(check_mode=True, **args)
    assert result["changed"] is True and "token" not in result
    assert phrase in result["msg"] and "nothing was sent to the token endpoint" in result["msg"]
    assert server.requests == []


def test_keep_valid_keeps_a_token_that_lives_long_enough(server, run, server_date):
    server_date(DATE)
    server.script = [info(T0 + 3600)]
    result = run(**keep_valid())
    assert [(r["method"], r["path"]) for r in server.requests] == [("GET", "/oauth/token/info")]
    assert server.requests[0]["headers"]["Authorization"] == "Bearer " + ACCESS
    assert result["changed"] is False
    assert result["token"] == dict(token_type="Bearer", expires_in=3599, expires_at="2026-11-22T03:12:30Z",
                                   scope="read_user", scopes=["read_user"])
    assert "lives 3599 more seconds, at least min_ttl 600" in result["msg"]


def test_keep_valid_measures_on_the_servers_clock(server, run, server_date):
    # By the controller's clock the token has an hour left; by the server's (its Date header) 300 seconds.
    exp = int(time.time()) + 3600
    server.script = [info(exp), GRANT]
    server_date(time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime(exp - 300)))
    result = run(**keep_valid())
    assert [r["path"] for r in server.requests] == ["/oauth/token/info", "/oauth/token"]
    assert result["changed"] is True
    assert result["msg"] == "The access token lives 299 more seconds, less than min_ttl 600: refreshed."
    assert result["token"]["access_token"] == "pscale_oauth_new"


def test_keep_valid_refreshes_an_inactive_token(server, run):
    server.script = [(200, dict(active=False)), GRANT]
    result = run(**keep_valid())
    assert [r["path"] for r in server.requests] == ["/oauth/token/info", "/oauth/token"]
    assert result["changed"] is True
    assert result["msg"] == "The access token is not active (expired, revoked or unknown): refreshed."
    assert result["token"]["refresh_token"] == "pscale_ref_new"


def test_keep_valid_in_check_mode_reads_token_info_only(server, run):
    server.script = [(200, dict(active=False))]
    result = run(check_mode=True, **keep_valid())
    assert [r["path"] for r in server.requests] == ["/oauth/token/info"]
    assert result["changed"] is True and "token" not in result
    assert result["msg"].startswith("The access token is not active")
    assert "the tokens would be refreshed (check mode: nothing was sent to the token endpoint)." in result["msg"]


def test_keep_valid_with_min_ttl_zero_keeps_any_active_token(server, run, server_date):
    server_date(DATE)
    server.script = [info(T0 + 1)]
    result = run(**keep_valid(min_ttl=0))
    assert result["changed"] is False and len(server.requests) == 1


@pytest.mark.parametrize("args, status, body, phrase", [
    (exchange(), 400, dict(error="invalid_grant", error_description="code %s already used" % CODE),
     "The authorization code was refused (invalid grant)"),
    (refresh(), 400, dict(error="invalid_grant", error_description="refresh token %s is spent" % REFRESH),
     "The refresh token was refused (invalid grant)"),
    (refresh(), 401, dict(error="invalid_client", error_description="bad secret %s" % CLIENT_SECRET),
     "refused the client (invalid client)"),
    (refresh(), 400, dict(error="invalid_request", error_description="Missing refresh_token"), "(invalid request)"),
])
def test_errors_are_sentences_without_secrets(server, run, args, status, body, phrase):
    server.script = [(status, body)]
    failure = fails(run, **args)
    assert failure.msg.startswith("POST /oauth/token failed with HTTP %s: %s" % (status, body["error"]))
    assert phrase in failure.msg
    assert failure.result["status"] == status and failure.result["error"]["code"] == body["error"]
    text = failure.msg + json.dumps(failure.result)
    for secret in (CODE, REFRESH, CLIENT_SECRET):
        assert secret not in text


def test_a_lost_answer_to_a_refresh_says_the_refresh_token_may_be_spent(server, run, sleeps):
    server.script = [(502, b"<html>Bad Gateway</html>"), (504, b"<html>Gateway Timeout</html>")]
    failure = fails(run, **refresh())
    assert len(server.requests) == 2  # sent once more, never more
    assert "may have issued new tokens before the answer was lost" in failure.msg


def test_a_grant_whose_answer_was_lost_is_sent_once_more(server, run, sleeps):
    server.script = [(502, b"<html>Bad Gateway</html>"), GRANT]
    result = run(**refresh())
    assert result["changed"] is True and result["token"]["refresh_token"] == "pscale_ref_new"
    assert [form(request)["refresh_token"] for request in server.requests] == [REFRESH, REFRESH]
    assert len(sleeps) == 1 and 0.25 <= sleeps[0] <= 0.5


def test_a_grant_answered_503_is_sent_once_more_after_retry_after_never_more(server, run, sleeps):
    # a 503 may come after the grant was applied: the grant is sent once more, not api_retries times
    server.script = [(503, {"error": "unavailable"}, {"Retry-After": "3"})] * 2
    failure = fails(run, **refresh(api_retries=5))
    assert len(server.requests) == 2 and sleeps == [3.0]
    assert "may have issued new tokens before the answer was lost" in failure.msg


@pytest.mark.parametrize("grant, phrase", [(exchange(), "the first request redeemed the code"),
                                           (refresh(), "the first request used it up")])
def test_a_grant_refused_after_a_lost_answer_says_its_tokens_are_lost(server, run, sleeps, grant, phrase):
    server.script = [(500, {"error": "server_error"}), (400, {"error": "invalid_grant", "error_description": "used"})]
    failure = fails(run, **grant)
    assert phrase in failure.msg and "authorization step again" in failure.msg


def test_deprecated_endpoint_posts_json_with_the_service_token_and_warns(server, run, server_date):
    server_date("Sun, 22 Nov 2026 02:22:30 GMT")
    server.script = [(200, RECORD)]
    legacy = dict(application_id="app1", organization="acme", api_url=server.url + "/v1", service_token_id="svc",
                  service_token=SERVICE_SECRET)
    ctx = TaskContext()
    result = run(ctx=ctx, **exchange(**legacy))
    request = server.requests[0]
    assert (request["method"], request["path"]) == ("POST", APP_PATH)
    assert request["headers"]["Authorization"] == "svc:" + SERVICE_SECRET
    assert json.loads(request["body"]) == dict(grant_type="authorization_code", code=CODE,
                                               redirect_uri="https://app/cb", client_id="cid",
                                               client_secret=CLIENT_SECRET)
    assert result["token"] == dict(access_token="pscale_oauth_new", refresh_token="pscale_ref_new",
                                   token_type="Bearer", expires_in=2999, expires_at="2026-11-22T03:12:30Z",
                                   scope="read_user", scopes=["read_user"])
    assert result["token_record"] == RECORD and result["changed"] is True
    assert [(d["version"], "deprecated" in d["msg"]) for d in ctx.deprecations] == [("1.0.0", True)]


def test_deprecated_endpoint_in_check_mode_sends_nothing_but_warns(server, run):
    legacy = dict(application_id="app1", organization="acme", service_token_id="svc", service_token=SERVICE_SECRET)
    ctx = TaskContext(check_mode=True)
    result = run(ctx=ctx, **refresh(**legacy))
    assert server.requests == [] and result["changed"] is True
    assert len(ctx.deprecations) == 1


def test_deprecated_endpoint_invalid_grant_is_a_sentence(server, run):
    server.script = [(422, dict(code="unprocessable", message="The refresh token is invalid"))]
    failure = fails(run, **refresh(application_id="app1", organization="acme", api_url=server.url + "/v1",
                                   service_token_id="svc", service_token=SERVICE_SECRET))
    assert failure.msg.startswith("POST /organizations/acme/oauth-applications/app1/token failed with HTTP 422")
    assert "The refresh token was refused (invalid grant)" in failure.msg


@pytest.mark.parametrize("args, phrase", [
    (refresh(client_secret=""), "client_id and client_secret of the OAuth application are required"),
    (refresh(client_id=None), "client_id and client_secret of the OAuth application are required"),
    (refresh(refresh_token=None), "refresh_token must be set and not empty with grant_type refresh_token"),
    (refresh(refresh_token=" "), "refresh_token must be set and not empty with grant_type refresh_token"),
    (exchange(code=None, redirect_uri=None),
     "code and redirect_uri must be set and not empty with grant_type authorization_code"),
    (refresh(code=CODE), "code cannot be used with grant_type refresh_token"),
    (exchange(refresh_token=REFRESH), "refresh_token cannot be used with grant_type authorization_code"),
    (exchange(access_token=ACCESS, min_ttl=60), "needs grant_type refresh_token"),
    (keep_valid(min_ttl=-1), "0 or more seconds"),
    (keep_valid(access_token="  "), "a non-empty access_token"),
    (refresh(application_id="app1", organization="acme"), "missing: service_token_id, service_token"),
    (refresh(application_id="app1", service_token_id="s", service_token="t"), "missing: organization"),
    (refresh(application_id="..", organization="acme", service_token_id="s", service_token="t"),
     "application_id must be a name"),
])
def test_bad_input_fails_before_any_request(server, run, args, phrase):
    failure = fails(run, **args)
    assert phrase in failure.msg
    assert server.requests == []


@pytest.mark.parametrize("args, phrase", [
    (dict(grant_type="refresh_token"), "missing: refresh_token"),
    (dict(grant_type="authorization_code", code=CODE), "missing: redirect_uri"),
    (dict(grant_type="password", refresh_token=REFRESH), "grant_type"),
    (refresh(min_ttl=60), "access_token"),
])
def test_argument_spec_rules(args, phrase):
    spec = Token.spec()
    spec.pop("supports_check_mode")
    validation = ModuleArgumentSpecValidator(**spec).validate(dict(args, client_id="c", client_secret="s"))
    assert phrase in " ".join(validation.error_messages)


def test_secret_options_are_no_log_and_the_environment_fills_the_rest(monkeypatch, server):
    monkeypatch.setenv("PLANETSCALE_CLIENT_ID", "env-cid")
    monkeypatch.setenv("PLANETSCALE_CLIENT_SECRET", CLIENT_SECRET)
    monkeypatch.setenv("PLANETSCALE_ACCESS_TOKEN", ACCESS)
    spec = Token.spec()
    no_log = sorted(name for name, option in spec["argument_spec"].items() if option.get("no_log"))
    assert no_log == ["access_token", "client_secret", "code", "refresh_token", "service_token"]
    spec.pop("supports_check_mode")
    args = dict(keep_valid(), auth_url=server.url)
    del args["access_token"]
    validation = ModuleArgumentSpecValidator(**spec).validate(args)
    assert not validation.error_messages
    assert (validation.validated_parameters["client_id"], validation.validated_parameters["access_token"]) == (
        "env-cid", ACCESS)
    assert {CLIENT_SECRET, ACCESS, REFRESH} <= validation._no_log_values


@pytest.mark.parametrize("grant", [exchange(), refresh()], ids=["authorization_code", "refresh_token"])
@pytest.mark.parametrize("body, shape", [
    ({}, "an answer without access_token and refresh_token"),
    (b"null", "an empty answer"),
    (b"", "an empty answer"),
    ([], "a JSON list instead of an object"),
    ("pscale_oauth_new", "a JSON string instead of an object"),
    (dict(access_token="pscale_oauth_new", token_type="Bearer", expires_in=3600), "an answer without refresh_token"),
    (dict(access_token=None, refresh_token="pscale_ref_new"), "an answer without access_token"),
    (dict(access_token="pscale_oauth_new", refresh_token=" "), "an answer without refresh_token"),
    (dict(access_token=["pscale_oauth_new"], refresh_token="pscale_ref_new"), "an answer without access_token"),
])
def test_an_answer_without_both_tokens_fails_and_returns_nothing_to_keep(server, run, grant, body, shape):
    server.script = [(200, body)]
    failure = fails(run, **grant)
    assert failure.msg.startswith("POST /oauth/token succeeded with %s, which is no token: the task fails so that the "
                                  "token you keep is not replaced. Check that auth_url is the platform's OAuth server."
                                  % shape)
    assert ("The code may be used up" if grant["grant_type"] == "authorization_code"
            else "Keep the refresh token you have") in failure.msg
    assert failure.result == {} and len(server.requests) == 1
    for secret in ("pscale_oauth_new", "pscale_ref_new", REFRESH, CODE, CLIENT_SECRET):
        assert secret not in failure.msg


@pytest.mark.parametrize("record, missing", [
    ({}, "token and plain_text_refresh_token"),
    (dict(RECORD, plain_text_refresh_token=None), "plain_text_refresh_token"),
    (dict(RECORD, token=""), "token"),
])
def test_a_deprecated_endpoint_answer_without_both_tokens_fails(server, run, record, missing):
    server.script = [(200, record)]
    failure = fails(run, **refresh(application_id="app1", organization="acme", api_url=server.url + "/v1",
                                   service_token_id="svc", service_token=SERVICE_SECRET))
    assert failure.msg.startswith("POST /organizations/acme/oauth-applications/app1/token succeeded with an answer "
                                  "without %s, which is no token" % missing)
    assert "Check that api_url is the platform's API." in failure.msg
    assert "pscale_oauth_new" not in failure.msg and "pscale_ref_new" not in failure.msg


def test_a_plain_http_auth_url_to_another_host_warns_and_the_unused_api_url_does_not(run):
    ctx = TaskContext()
    Token(run.params(auth_url="http://auth.example.com", api_url="http://api.example.com/v1", **refresh()),
          ctx).warn_about_transport()
    assert ctx.warnings == ["auth_url is plain http to auth.example.com, which is not this machine: credentials and "
                            "tokens would cross the network in clear text. Use https (plain http is for a server on "
                            "localhost)."]
    ctx = TaskContext()
    Token(run.params(api_url="http://api.example.com/v1", **refresh(
        application_id="app1", organization="acme", service_token_id="svc", service_token=SERVICE_SECRET)),
        ctx).warn_about_transport()
    assert [warning.split(" ")[0] for warning in ctx.warnings] == ["api_url"]
