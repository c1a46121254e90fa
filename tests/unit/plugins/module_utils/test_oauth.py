# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The OAuth helpers: expiry arithmetic (module_utils/oauth.py), a grant's tokens and the RFC 6749 error sentences
(module_utils/grants.py), the token module's refresh, and the base options they need."""

from __future__ import annotations

import pytest

from ansible_collections.planetscale.cloud.plugins.module_utils import base, grants, oauth
from ansible_collections.planetscale.cloud.plugins.module_utils import options as shared
from ansible_collections.planetscale.cloud.plugins.module_utils.base import Module, TaskContext
from ansible_collections.planetscale.cloud.plugins.module_utils.client import ApiError
from ansible_collections.planetscale.cloud.plugins.modules import token as token_module

T0 = 1795313550  # 2026-11-22T02:12:30Z
SCOPE = "read_user read_organization"


class FakeClient:
    def __init__(self, server_date):
        self.server_date = server_date


# Expiry arithmetic ------------------------------------------------------------------------------

@pytest.mark.parametrize("timestamp, text", [
    (0, "1970-01-01T00:00:00Z"),
    (T0, "2026-11-22T02:12:30Z"),
    (T0 + 0.9, "2026-11-22T02:12:30Z"),
    (None, None),
])
def test_iso8601_is_utc_to_the_second(timestamp, text):
    assert oauth.iso8601(timestamp) == text


@pytest.mark.parametrize("text, timestamp", [
    ("2026-11-22T02:12:30Z", T0),
    ("2026-11-22T02:12:30.999Z", T0),
    ("2026-11-22T02:12:30.1234567Z", T0),
    ("2026-11-22T02:12:30", T0),
    ("2026-11-22T04:12:30+02:00", T0),
    ("2026-11-22T00:12:30-0200", T0),
    (" 2026-11-22 02:12:30z ", T0),
    ("2026-13-40T02:12:30Z", None),
    ("yesterday", None),
    ("", None),
    (None, None),
    (1795313550, None),
])
def test_parse_iso8601_reads_the_api_timestamps_and_drops_fractions(text, timestamp):
    assert grants.parse_iso8601(text) == timestamp


def test_http_date_reads_the_date_header():
    assert oauth.http_date("Sun, 22 Nov 2026 02:12:30 GMT") == T0
    assert oauth.http_date("not a date") is None
    assert oauth.http_date(None) is None


def test_server_now_is_the_end_of_the_servers_second(monkeypatch):
    monkeypatch.setattr(oauth.time, "time", lambda: 1.5)
    assert oauth.server_now(FakeClient("Sun, 22 Nov 2026 02:12:30 GMT")) == T0 + 1
    assert oauth.server_now(FakeClient(None)) == 1.5
    assert oauth.server_now(FakeClient("garbage")) == 1.5


@pytest.mark.parametrize("expires, now, left", [
    (T0 + 3600, T0, 3600),
    (T0 + 3600, T0 + 0.5, 3599),
    (T0, T0 + 10, 0),
    (None, T0, None),
])
def test_seconds_left_are_whole_and_never_negative(expires, now, left):
    assert oauth.seconds_left(expires, now) == left


def test_issued_token_computes_expires_at_from_when_it_arrived():
    body = dict(access_token="a", refresh_token="r", token_type="Bearer", expires_in=3600, scope=SCOPE)
    assert grants.issued_token(body, T0) == dict(
        access_token="a", refresh_token="r", token_type="Bearer", expires_in=3600,
        expires_at="2026-11-22T03:12:30Z", scope=SCOPE, scopes=["read_user", "read_organization"])


@pytest.mark.parametrize("expires_in", [None, "3600", True])
def test_issued_token_without_a_numeric_lifetime_has_no_expiry(expires_in):
    token = grants.issued_token(dict(access_token="a", expires_in=expires_in), T0)
    assert (token["expires_in"], token["expires_at"], token["token_type"], token["scopes"]) == (None, None, "Bearer", [])


def test_recorded_token_reads_the_deprecated_record():
    record = dict(token="a", plain_text_refresh_token="r", expires_at="2026-11-22T03:12:30.000Z",
                  service_token_accesses=[dict(access="read_user"), dict(access="read_organization"),
                                          dict(access="read_user"), "junk", dict(id="no-access")])
    assert grants.recorded_token(record, T0 + 600) == dict(
        access_token="a", refresh_token="r", token_type="Bearer", expires_in=3000,
        expires_at="2026-11-22T03:12:30Z", scope=SCOPE, scopes=["read_user", "read_organization"])


def test_described_info_adds_scopes_and_lifetime():
    info = dict(active=True, scope=SCOPE, client_id="cid", token_type="Bearer", exp=T0 + 3600, iat=T0, sub="u1",
                extra="ignored")
    assert oauth.described_info(info, T0 + 100) == dict(
        active=True, scope=SCOPE, client_id="cid", token_type="Bearer", exp=T0 + 3600, iat=T0, sub="u1",
        scopes=["read_user", "read_organization"], expires_at="2026-11-22T03:12:30Z", expires_in=3500)


@pytest.mark.parametrize("info", [dict(active=False), dict(active="true", exp=T0), {}, None, [], "active"])
def test_described_info_of_anything_but_an_active_token_is_inactive(info):
    assert oauth.described_info(info, T0) == dict(active=False)


@pytest.mark.parametrize("info, min_ttl, reason", [
    (dict(active=True, expires_in=600), 600, None),
    (dict(active=True, expires_in=3600), 0, None),
    (dict(active=True, expires_in=599), 600, "lives 599 more seconds, less than min_ttl 600"),
    (dict(active=True, expires_in=None), 0, "did not say when"),
    (dict(active=False), 0, "not active"),
])
def test_refresh_reason(info, min_ttl, reason):
    got = token_module.refresh_reason(info, min_ttl)
    assert got is None if reason is None else reason in got


def test_kept_token_carries_no_secret():
    info = oauth.described_info(dict(active=True, scope=SCOPE, exp=T0 + 10, iat=T0, token_type="Bearer"), T0)
    assert token_module.kept_token(info) == dict(token_type="Bearer", expires_in=10, expires_at="2026-11-22T02:12:40Z",
                                                 scope=SCOPE, scopes=["read_user", "read_organization"])


@pytest.mark.parametrize("grant, fields", [
    ("authorization_code", dict(grant_type="authorization_code", client_id="c", client_secret="s", code="k",
                                redirect_uri="u")),
    ("refresh_token", dict(grant_type="refresh_token", client_id="c", client_secret="s", refresh_token="r")),
])
def test_grant_form_has_the_fields_of_the_grant_only(grant, fields):
    params = dict(grant_type=grant, client_id="c", client_secret="s", code="k", redirect_uri="u", refresh_token="r",
                  access_token="a", min_ttl=5)
    assert grants.grant_form(params) == fields


@pytest.mark.parametrize("body, missing", [
    (dict(access_token="a", refresh_token="r"), []),
    (dict(access_token="a", refresh_token=""), ["refresh_token"]),
    (dict(access_token=1, refresh_token="r"), ["access_token"]),
    ({}, ["access_token", "refresh_token"]),
    (None, ["access_token", "refresh_token"]),
    ([dict(access_token="a", refresh_token="r")], ["access_token", "refresh_token"]),
])
def test_missing_tokens_are_absent_empty_or_not_text(body, missing):
    assert grants.missing_tokens(body, grants.ISSUED_FIELDS) == missing


@pytest.mark.parametrize("body, shape", [(7, "a JSON number"), (True, "a JSON boolean"), (2.5, "a JSON number")])
def test_require_tokens_names_the_json_type_of_an_answer_that_is_no_object(body, shape):
    with pytest.raises(base.ModuleFailure) as caught:
        grants.require_tokens(body, grants.ISSUED_FIELDS, "POST /oauth/token", "refresh_token", "auth_url is right")
    assert caught.value.msg.startswith("POST /oauth/token succeeded with %s instead of an object, which is no token"
                                       % shape)
    assert grants.require_tokens(dict(access_token="a", refresh_token="r"), grants.ISSUED_FIELDS,
                                 "POST /oauth/token", "refresh_token", "auth_url is right") is None


# The error sentences ----------------------------------------------------------------------------

def error(status, code=None, outcome_unknown=False, path=grants.TOKEN_PATH):
    return ApiError("POST", path, status, code, "described by the server", outcome_unknown=outcome_unknown)


@pytest.mark.parametrize("status, code, grant, phrase", [
    (400, "invalid_grant", "authorization_code", "The authorization code was refused (invalid grant)"),
    (400, "invalid_grant", "refresh_token", "The refresh token was refused (invalid grant)"),
    (401, "invalid_client", "refresh_token", "refused the client (invalid client)"),
    (400, "invalid_client", "refresh_token", "refused the client (invalid client)"),
    (401, None, "refresh_token", "refused the client (invalid client)"),
    (401, "unauthorized", "authorization_code", "refused the client (invalid client)"),
    (400, "invalid_request", "refresh_token", "(invalid request)"),
    (400, None, "refresh_token", "(invalid request)"),
    (400, "unauthorized_client", "refresh_token", "allow it in the application's settings"),
    (400, "unsupported_grant_type", "refresh_token", "check that auth_url"),
    (400, "invalid_scope", "authorization_code", "(invalid scope)"),
])
def test_token_endpoint_errors_say_what_to_do(status, code, grant, phrase):
    assert phrase in grants.token_hint(error(status, code), grant)


def test_what_to_do_after_an_invalid_grant_depends_on_the_grant():
    assert "authorization step again" in grants.token_hint(error(400, "invalid_grant"), "authorization_code")
    hint = grants.token_hint(error(400, "invalid_grant"), "refresh_token")
    assert "refresh_token saved from the latest token" in hint


@pytest.mark.parametrize("grant, phrase", [("authorization_code", "redeemed the code"),
                                           ("refresh_token", "ends this refresh token")])
def test_a_lost_answer_warns_that_the_grant_may_be_spent(grant, phrase):
    hint = grants.token_hint(error(502, outcome_unknown=True), grant)
    assert phrase in hint and "run the task once more" in hint


@pytest.mark.parametrize("status", [500, 503, 429, 404])
def test_other_token_endpoint_errors_keep_the_shared_hints(status):
    assert grants.token_hint(error(status), "refresh_token") is None


@pytest.mark.parametrize("status, code, phrase", [
    (401, "unauthorized", "did not accept the service token"),
    (403, "forbidden", "are those of the OAuth application 'app1'"),
    (404, "not_found", "organization 'acme' and its OAuth application 'app1' exist"),
    (422, "unprocessable", "The refresh token was refused (invalid grant)"),
    (422, "invalid_params", "(invalid request)"),
    (400, "bad_request", "(invalid request)"),
])
def test_deprecated_endpoint_errors_say_what_to_do(status, code, phrase):
    hint = grants.application_token_hint(
        error(status, code, path="/organizations/acme/oauth-applications/app1/token"), "refresh_token", "acme", "app1")
    assert phrase in hint


def test_deprecated_endpoint_lost_answer_and_server_errors():
    assert "ends this refresh token" in grants.application_token_hint(
        error(504, outcome_unknown=True), "refresh_token", "acme", "app1")
    assert grants.application_token_hint(error(500), "refresh_token", "acme", "app1") is None


def test_oauth_module_explains_token_info_401_and_defers_the_rest():
    class Probe(oauth.OAuthModule):
        pass

    probe = Probe(dict(auth_url="http://auth"))
    assert "check access_token" in probe.explain(error(401, path=oauth.TOKEN_INFO_PATH))
    assert probe.explain(error(429, path=oauth.TOKEN_INFO_PATH)).endswith("raise api_retries.")


# The base options the OAuth modules use ----------------------------------------------------------

def test_a_module_taking_auth_url_alone_has_no_client_options():
    class AuthUrlOnly(Module):
        option_sets = (shared.AUTH_URL, shared.CONNECTION)

    options = AuthUrlOnly.spec()["argument_spec"]
    assert options["auth_url"]["default"] == "https://auth.planetscale.com"
    for unused in ("client_id", "client_secret", "service_token", "api_url"):
        assert unused not in options
    assert set(oauth.OAuthModule.spec()["argument_spec"]) == set(options)


def test_make_client_scrubs_every_no_log_option(server):
    class Secretive(Module):
        option_sets = (shared.CONNECTION,)
        argument_spec = dict(refresh_token=dict(type="str", no_log=True), numbers=dict(type="list", no_log=True))

    server.default = (400, {"error": "invalid_grant", "error_description": "refresh token r-123 is spent"})
    params = dict(refresh_token="r-123", numbers=[1], api_timeout=5, api_retries=0, validate_certs=True, ca_path=None)
    client = Secretive(params).make_client(server.url)
    with pytest.raises(ApiError) as caught:
        client.post("/oauth/token", data={})
    assert "r-123" not in str(caught.value) and "********" in str(caught.value)


def test_task_context_passes_the_collection_of_a_deprecation():
    seen = []
    ctx = TaskContext(deprecate=lambda msg, **kwargs: seen.append((msg, kwargs)))
    ctx.deprecate("old", version="1.0.0", collection_name="planetscale.cloud")
    without_collection = dict(version="2.0.0")
    ctx.deprecate("older", **without_collection)
    assert seen == [("old", dict(version="1.0.0", date=None, collection_name="planetscale.cloud")),
                    ("older", dict(version="2.0.0", date=None))]
