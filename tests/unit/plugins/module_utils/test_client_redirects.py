# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Redirects: a credential never follows one to another scheme, host or port, and another host's
answer is taken only where the API documents the redirect (the signed report download)."""

from __future__ import annotations

import json
from urllib.parse import parse_qs

import pytest

from ansible_collections.planetscale.cloud.plugins.module_utils import client as client_module
from ansible_collections.planetscale.cloud.plugins.module_utils.client import ApiError, Client

SECRET = "pscale_tkn_very_secret_value"
CLIENT_SECRET = "pscale_cs_the+client/secret"
REFRESH = "pscale_rt_refresh_token_value"
TOKEN = (200, {"access_token": "stolen", "refresh_token": "stolen", "token_type": "Bearer"})
DOWNLOAD = "/organizations/acme/databases/shop/branches/main/query-patterns/r1/download"


def make_client(server, authorization="svc:" + SECRET, root="/v1"):
    return Client(server.url + root, authorization=authorization, retries=0,
                  secrets=[SECRET, CLIENT_SECRET, REFRESH])


@pytest.fixture
def elsewhere(server):
    """A second server: another port of the same host."""
    other = type(server)()
    yield other
    other.close()


def other_host(server):
    return server.url.replace("127.0.0.1", "localhost")


def form():
    return dict(grant_type="refresh_token", client_id="app", client_secret=CLIENT_SECRET, refresh_token=REFRESH)


@pytest.mark.parametrize("status", [307, 308])
def test_the_token_form_is_not_sent_again_to_another_host(server, status):
    server.script = [(status, b"", {"Location": other_host(server) + "/oauth/token"}), TOKEN]
    with pytest.raises(ApiError) as caught:
        make_client(server, authorization=None, root="").post("/oauth/token", data=form())
    assert len(server.requests) == 1  # the host of the redirect got nothing: neither the secret nor the token
    message = str(caught.value)
    assert message.startswith("POST /oauth/token failed with HTTP %d: the server redirected the request to "
                              "http://localhost:" % status)
    assert "another scheme, host or port, which the collection does not follow" in message
    assert "/oauth/token" not in message.split("failed", 1)[1] and not caught.value.outcome_unknown


def test_the_deprecated_application_token_endpoint_does_not_follow_to_another_port(server, elsewhere):
    elsewhere.script = [TOKEN]
    server.script = [(308, b"", {"Location": elsewhere.url + "/v1/organizations/acme/oauth-applications/a/token"})]
    with pytest.raises(ApiError, match="HTTP 308: the server redirected the request to http://127.0.0.1:%d, "
                       % elsewhere.httpd.server_address[1]):
        make_client(server).post("/organizations/acme/oauth-applications/a/token", json=form())
    assert elsewhere.requests == []


def test_a_change_of_scheme_is_refused(server):
    server.script = [(301, b"", {"Location": server.url.replace("http:", "https:") + "/v1/user"})]
    with pytest.raises(ApiError, match="redirected the request to https://127.0.0.1:"):
        make_client(server).get("/user")
    assert len(server.requests) == 1


def test_a_read_redirected_to_another_host_is_not_taken_as_the_answer(server):
    server.script = [(302, b"", {"Location": other_host(server) + "/v1/user"}), (200, {"id": "someone-else"})]
    with pytest.raises(ApiError, match="GET /user failed with HTTP 302: the server redirected"):
        make_client(server).get("/user")
    assert len(server.requests) == 1


def test_the_documented_download_follows_to_another_host_without_credentials(server):
    server.script = [(302, b"", {"Location": other_host(server) + "/signed/r1?signature=abc&expires=1"}),
                     (200, {"report": "ok"})]
    assert make_client(server).get(DOWNLOAD, params=dict(x="1")) == {"report": "ok"}
    first, second = server.requests
    assert first["headers"]["Authorization"] == "svc:" + SECRET
    assert "Authorization" not in second["headers"]
    assert second["path"] == "/signed/r1" and second["query"] == parse_qs("signature=abc&expires=1")


def test_a_caller_may_allow_another_host_for_a_read_only(server):
    server.script = [(302, b"", {"Location": other_host(server) + "/file"}), (200, {"ok": 1})]
    assert make_client(server).get("/anything", offsite=True) == {"ok": 1}
    assert "Authorization" not in server.requests[1]["headers"]
    server.script = [(307, b"", {"Location": other_host(server) + "/file"})]
    with pytest.raises(ApiError, match="does not follow"):
        make_client(server).request("POST", "/anything", json=dict(secret=SECRET), offsite=True)
    assert len(server.requests) == 3


@pytest.mark.parametrize("status", [307, 308])
def test_a_redirect_on_the_same_origin_is_followed_with_method_body_and_credentials(server, status):
    server.script = [(status, b"", {"Location": "/v1/oauth/token/"}), TOKEN]
    assert make_client(server).post("/oauth/token", data=form()) == TOKEN[1]
    first, second = server.requests
    assert second["method"] == "POST" and second["path"] == "/v1/oauth/token/"
    assert parse_qs(second["body"]) == parse_qs(first["body"])
    assert second["headers"]["Authorization"] == "svc:" + SECRET


def test_a_see_other_redirect_becomes_a_read_without_body(server):
    server.script = [(303, b"", {"Location": "/v1/done"}), (200, {"id": "x"})]
    assert make_client(server).post("/start", json=dict(a=1)) == {"id": "x"}
    assert [(r["method"], r["path"], r["body"]) for r in server.requests] == [
        ("POST", "/v1/start", json.dumps(dict(a=1))), ("GET", "/v1/done", "")]


def test_redirects_are_bounded(server):
    server.default = (302, b"", {"Location": "/v1/again"})
    with pytest.raises(ApiError) as caught:
        make_client(server).get("/user")
    assert str(caught.value) == "GET /user failed with HTTP 302: the server redirected the request more than %d times." % (
        client_module.MAX_REDIRECTS)
    assert len(server.requests) == client_module.MAX_REDIRECTS + 1
