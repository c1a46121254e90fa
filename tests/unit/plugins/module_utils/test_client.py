# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

import socket
import threading

import pytest
import requests

from ansible_collections.planetscale.cloud.plugins.module_utils import client as client_module
from ansible_collections.planetscale.cloud.plugins.module_utils.client import ApiError, Client, path

SECRET = "pscale_tkn_very_secret_value"


def make_client(server, **kwargs):
    kwargs.setdefault("retries", 3)
    return Client(server.url + "/v1", authorization="svc:" + SECRET, secrets=[SECRET], **kwargs)


def test_get_decodes_json_and_sends_credentials_and_user_agent(server):
    server.script = [(200, {"id": "u1"})]
    assert make_client(server).get("/user") == {"id": "u1"}
    sent = server.requests[0]
    assert sent["path"] == "/v1/user"
    assert sent["headers"]["Authorization"] == "svc:" + SECRET
    assert sent["headers"]["User-Agent"].startswith("planetscale.cloud/")


@pytest.mark.parametrize("status", [429, 502, 503, 504])
def test_get_is_retried_on_transient_status(server, sleeps, status):
    server.script = [(status, {"code": "x"}), (200, {"ok": True})]
    assert make_client(server).get("/user") == {"ok": True}
    assert len(server.requests) == 2


def test_retry_after_is_honoured(server, sleeps):
    server.script = [(429, {"code": "rate_limited"}, {"Retry-After": "7"}), (200, {})]
    make_client(server).get("/user")
    assert sleeps == [7.0]


def test_retry_after_is_capped(server, sleeps):
    server.script = [(429, {}, {"Retry-After": "3600"}), (200, {})]
    make_client(server).get("/user")
    assert sleeps == [client_module.RETRY_AFTER_MAX]


def test_backoff_grows_exponentially_with_jitter(server, sleeps):
    server.script = [(503, {})] * 3 + [(200, {})]
    make_client(server).get("/user")
    assert len(sleeps) == 3
    for attempt, wait in enumerate(sleeps):
        ceiling = client_module.BACKOFF_FACTOR * 2 ** attempt
        assert ceiling / 2 <= wait <= ceiling


def test_retries_stop_at_the_bound_and_name_the_endpoint(server, sleeps):
    server.default = (503, {"code": "unavailable", "message": "Service Unavailable"})
    with pytest.raises(ApiError) as caught:
        make_client(server, retries=2).get("/organizations/acme/teams")
    assert len(server.requests) == 3
    assert caught.value.status == 503
    assert "GET /organizations/acme/teams" in str(caught.value)
    assert "503" in str(caught.value)


def test_retries_stop_at_the_time_bound(server, sleeps, monkeypatch):
    monkeypatch.setattr(client_module, "RETRY_TIME_MAX", 5.0)
    server.default = (429, {}, {"Retry-After": "4"})
    with pytest.raises(ApiError):
        make_client(server, retries=10).get("/user")
    assert sleeps == [4.0]  # a second wait of 4 s would pass the 5 s bound


@pytest.mark.parametrize("status", [502, 503, 504, 500])
def test_post_is_not_retried_when_it_may_have_been_applied(server, sleeps, status):
    server.default = (status, {"code": "bad_gateway"})
    with pytest.raises(ApiError) as caught:
        make_client(server).post("/organizations/acme/teams", json={"name": "x"})
    assert len(server.requests) == 1
    assert caught.value.outcome_unknown


@pytest.mark.parametrize("retries", [0, 7])
def test_a_write_that_may_have_been_applied_carries_the_users_api_retries(server, sleeps, retries):
    """write_and_settle resends a write proven not applied as often as the user allows any request to be sent."""
    server.default = (502, {"code": "bad_gateway"})
    with pytest.raises(ApiError) as caught:
        make_client(server, retries=retries).post("/x", json={})
    assert caught.value.outcome_unknown and caught.value.resends == retries


def test_post_is_retried_when_it_cannot_have_been_applied(server, sleeps):
    server.script = [(429, {}), (201, {"id": "b1"})]
    assert make_client(server).post("/x", json={}) == {"id": "b1"}
    assert len(server.requests) == 2


def test_post_answered_503_carries_the_retry_after_it_asked_for(server, sleeps):
    server.default = (503, {"code": "unavailable"}, {"Retry-After": "90"})
    with pytest.raises(ApiError) as caught:
        make_client(server).post("/x", json={})
    assert len(server.requests) == 1 and sleeps == []
    assert caught.value.outcome_unknown
    assert caught.value.retry_after == 60.0  # capped


def test_post_dropped_connection_is_an_unknown_outcome(server, sleeps):
    server.default = "drop"
    with pytest.raises(ApiError) as caught:
        make_client(server).post("/x", json={})
    assert len(server.requests) == 1
    assert caught.value.outcome_unknown
    assert caught.value.status is None


def test_get_dropped_connection_is_retried(server, sleeps):
    server.script = ["drop", (200, {"ok": 1})]
    assert make_client(server).get("/x") == {"ok": 1}


def test_connection_refused_is_retried_and_reported(sleeps):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    client = Client("http://127.0.0.1:%d/v1" % port, retries=2)
    with pytest.raises(ApiError) as caught:
        client.post("/x", json={})
    assert len(sleeps) == 2  # a POST that never connected is retried
    assert not caught.value.outcome_unknown
    assert "could not connect" in str(caught.value)


def test_error_carries_api_code_and_message_but_no_secret(server):
    server.script = [(401, {"code": "unauthorized", "message": "token %s is invalid" % SECRET})]
    with pytest.raises(ApiError) as caught:
        make_client(server).get("/user")
    error = caught.value
    assert (error.method, error.path, error.status, error.code) == ("GET", "/user", 401, "unauthorized")
    assert SECRET not in str(error)
    assert SECRET not in repr(error.as_dict())
    assert "Authorization" not in str(error.as_dict())


def test_error_from_non_json_body_uses_the_reason(server):
    server.script = [(502, b"<html>bad gateway</html>")]
    with pytest.raises(ApiError) as caught:
        make_client(server, retries=0).get("/user")
    assert caught.value.status == 502
    assert caught.value.message == "Bad Gateway"


def test_oauth_error_body_is_understood(server):
    server.script = [(400, {"error": "invalid_grant", "error_description": "code already used"})]
    with pytest.raises(ApiError) as caught:
        make_client(server).post("/oauth/token", data={"a": "b"})
    assert (caught.value.code, caught.value.message) == ("invalid_grant", "code already used")


def test_missing_is_none_only_when_asked(server):
    server.default = (404, {"code": "not_found", "message": "Not Found"})
    assert make_client(server).get("/x", missing_ok=True) is None
    with pytest.raises(ApiError):
        make_client(server).get("/x")


@pytest.mark.parametrize("segment, escaped", [
    ("main", "main"), ("a/b", "a%2Fb"), ("x?y=1", "x%3Fy%3D1"), ("#frag", "%23frag"), ("ü ber", "%C3%BC%20ber"),
])
def test_path_segments_are_escaped(segment, escaped):
    assert path("organizations", segment) == "/organizations/" + escaped


@pytest.mark.parametrize("segment", ["", ".", ".."])
def test_dot_segments_are_refused(segment):
    with pytest.raises(ValueError):
        path("organizations", segment, "teams")


def test_escaped_path_reaches_the_server_as_one_segment(server):
    server.script = [(200, {})]
    make_client(server).get(path("organizations", "../user"))
    assert server.requests[0]["path"] == "/v1/organizations/..%2Fuser"


def test_credentials_are_not_sent_across_hosts_on_the_documented_redirect(server):
    other = server.url.replace("127.0.0.1", "localhost")
    server.script = [(302, b"", {"Location": other + "/signed/file"}), (200, {"ok": True})]
    assert make_client(server).get("/organizations/acme/query-patterns/r1/download") == {"ok": True}
    assert "Authorization" in server.requests[0]["headers"]
    assert "Authorization" not in server.requests[1]["headers"]


def test_a_netrc_entry_for_the_api_host_does_not_replace_the_credentials(server, tmp_path, monkeypatch):
    netrc = tmp_path / "netrc"
    netrc.write_text("machine 127.0.0.1\nlogin someone\npassword other-secret\n")
    monkeypatch.setenv("NETRC", str(netrc))
    server.script = [(200, {"id": "u1"})]
    make_client(server).get("/user")
    assert server.requests[0]["headers"]["Authorization"] == "svc:" + SECRET


@pytest.mark.parametrize("method", ["PATCH", "DELETE"])
def test_a_write_answered_500_is_an_unknown_outcome(server, method):
    server.default = (500, {"code": "internal_server_error"})
    with pytest.raises(ApiError) as caught:
        make_client(server).request(method, "/organizations/acme/teams/t1", json={})
    assert caught.value.outcome_unknown


def test_a_read_that_gets_no_answer_in_time_says_so_after_its_retries(server, sleeps):
    server.default = lambda request: (threading.Event().wait(0.6), (200, {}))[1]  # time.sleep is the test's
    with pytest.raises(ApiError) as caught:
        make_client(server, retries=1, timeout=0.2).get("/user")
    assert str(caught.value) == "GET /user failed: no answer within 0.2 seconds (api_timeout)."
    assert len(sleeps) == 1 and not caught.value.outcome_unknown


def test_a_dropped_connection_is_reported_in_a_sentence(server, sleeps):
    server.default = "drop"
    with pytest.raises(ApiError) as caught:
        make_client(server, retries=0).get("/user")
    assert str(caught.value).startswith("GET /user failed: the connection to 127.0.0.1:")
    assert "broke after the request was sent (" in str(caught.value) and "Connection aborted" not in str(caught.value)


@pytest.mark.parametrize("options, verify", [(dict(validate_certs=False), False), (dict(ca_path="/ca.pem"), "/ca.pem"),
                                             (dict(), "/etc/ssl/the-environments.pem")])
def test_ca_path_and_validate_certs_win_over_requests_ca_bundle(server, monkeypatch, options, verify):
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", "/etc/ssl/the-environments.pem")
    seen = []
    send = requests.adapters.HTTPAdapter.send
    monkeypatch.setattr(requests.adapters.HTTPAdapter, "send",
                        lambda adapter, request, **kwargs: seen.append(kwargs["verify"]) or send(adapter, request, **kwargs))
    server.script = [(200, {})]
    make_client(server, **options).get("/user")
    assert seen == [verify]


def spaces(count, size=1000, pause=0.0):
    """A body of count chunks of spaces (JSON cannot parse it), each after pause seconds: as long as the tests need,
    and no longer, so that a client that reads it whole ends too."""
    for dummy in range(count):
        if pause:
            threading.Event().wait(pause)  # time.sleep may be a test's
        yield b" " * size


def test_an_answer_that_never_ends_stops_at_the_size_bound_and_the_next_request_is_answered(server, monkeypatch):
    monkeypatch.setattr(client_module, "MAX_ANSWER_BYTES", 100000)
    server.script = [(200, spaces(10000)), (200, {"login": "ok"})]  # 10 MB: "never ends" for a bound of 100 kB
    client = make_client(server, retries=0)
    with pytest.raises(ApiError) as caught:
        client.get("/user")
    assert str(caught.value) == ("GET /user failed: the answer goes on past 100000 bytes, the most the collection "
                                 "reads of an answer; stopped reading it.")
    assert client.get("/user") == {"login": "ok"}


def test_an_answer_longer_than_the_size_bound_by_its_content_length_is_not_read(server, monkeypatch):
    monkeypatch.setattr(client_module, "MAX_ANSWER_BYTES", 2 * 1024 * 1024)
    body = b'{"schema": "%s"}' % (b"x" * (2 * 1024 * 1024))
    server.script = [(200, body)]
    with pytest.raises(ApiError) as caught:
        make_client(server, retries=0).post("/organizations/acme/databases", json={})
    assert str(caught.value) == ("POST /organizations/acme/databases failed: the answer would be %d bytes (its "
                                 "Content-Length), more than the 2 MiB the collection reads of an answer; stopped "
                                 "reading it." % len(body))
    assert caught.value.outcome_unknown  # the write's answer was not read


@pytest.mark.parametrize("headers", [{}, {"Content-Length": "1000"}], ids=["chunked", "content-length"])
def test_an_answer_that_keeps_coming_slowly_stops_at_the_time_bound(server, monkeypatch, headers):
    monkeypatch.setattr(client_module, "ANSWER_TIME_MIN", 0)
    # a byte in time for each wait of api_timeout, for 10 s; under a Content-Length one read waits for every byte,
    # and only the client's watchdog ends it in time
    server.script = [(200, spaces(200, size=1, pause=0.05), headers)]
    with pytest.raises(ApiError) as caught:
        make_client(server, retries=0, timeout=0.5).get("/user")
    message = str(caught.value)
    assert message.startswith("GET /user failed: the answer was still arriving after 0.5 seconds (")
    assert message.endswith("bytes so far): an answer must arrive in full within api_timeout, or 0 seconds where "
                            "that is longer; stopped reading it.")
