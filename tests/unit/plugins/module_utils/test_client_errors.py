# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Failure sentences: what the server said (also in the validation shape), bounded, with every encoding
of a secret masked; accurate words for an answer cut short, plain HTTP on an https URL's port, and an
answer of the wrong JSON type."""

from __future__ import annotations

import json
import socket
import threading
from urllib.parse import quote, quote_plus, urlencode

import pytest
import requests
from urllib3.exceptions import MaxRetryError, NewConnectionError, ProtocolError

from ansible_collections.planetscale.cloud.plugins.module_utils import client as client_module
from ansible_collections.planetscale.cloud.plugins.module_utils import errors as errors_module
from ansible_collections.planetscale.cloud.plugins.module_utils.client import ApiError, Client

SECRET = "pscale+cs/ä b&c=d\"e"  # every character that one encoding or another spells differently


def make_client(server, **kwargs):
    kwargs.setdefault("retries", 0)
    return Client(server.url + "/v1", authorization="svc:token", secrets=[SECRET], **kwargs)


def failure(server, method="GET", url_path="/user", **kwargs):
    with pytest.raises(ApiError) as caught:
        make_client(server).request(method, url_path, **kwargs)
    return caught.value


# What the server said ------------------------------------------------------------------------

def test_a_validation_failure_names_each_namespace_name_and_message(server):
    server.script = [(422, {"errors": [
        {"namespace": "branch", "name": "name", "errors": ["has already been taken", "is too long"]},
        {"namespace": "password", "name": "ttl", "errors": ["must be positive"]}]})]
    error = failure(server, "POST", "/branches", json={})
    assert str(error) == ("POST /branches failed with HTTP 422: branch name: has already been taken, is too long; "
                          "password ttl: must be positive.")
    assert error.status == 422 and not error.outcome_unknown


def test_a_validation_failure_keeps_the_code_and_message_beside_the_details(server):
    server.script = [(422, {"code": "unprocessable", "message": "Validation failed.",
                            "errors": [{"namespace": "database", "name": "region", "errors": ["is invalid"]}]})]
    assert str(failure(server)) == ("GET /user failed with HTTP 422: unprocessable, Validation failed "
                                    "(database region: is invalid).")


def test_a_long_error_message_is_quoted_only_in_part(server):
    server.script = [(400, {"code": "bad_request", "message": "x" * 2000000})]
    error = failure(server)
    assert len(str(error)) < 600 and len(error.message) < 500
    assert str(error).endswith("x... [cut: %d more characters not shown]." % (2000000 - errors_module.QUOTE_MAX))
    assert len(repr(error.as_dict())) < 700


def test_a_long_validation_list_is_quoted_only_in_part(server):
    server.script = [(422, {"errors": [{"namespace": "n", "name": "f%d" % i, "errors": ["bad"]} for i in range(50000)]})]
    assert len(str(failure(server))) < 600


@pytest.mark.parametrize("encode", [
    lambda s: s,
    quote_plus,
    lambda s: quote(s, safe=""),
    quote,  # leaves / as it is
    lambda s: quote(s, safe="").lower(),  # percent-encodings in lower case
    lambda s: urlencode(dict(client_secret=s)).split("=", 1)[1],
    lambda s: json.dumps(s)[1:-1],
    lambda s: json.dumps(s, ensure_ascii=False)[1:-1],
    lambda s: json.dumps(s)[1:-1].replace("/", "\\/"),
], ids=["raw", "quote_plus", "quote", "quote_keeping_slash", "lower_hex", "form", "json", "json_utf8",
        "json_escaped_slash"])
def test_every_encoding_of_a_secret_in_an_echoed_body_is_masked(server, encode):
    echoed = "invalid client_secret=%s&grant_type=refresh_token" % encode(SECRET)
    assert (SECRET in echoed) == (encode(SECRET) == SECRET)  # each case but raw spells the secret otherwise
    server.script = [(400, {"error": "invalid_client", "error_description": echoed})]
    error = failure(server, "POST", "/oauth/token", data=dict(client_secret=SECRET))
    assert error.message == "invalid client_secret=********&grant_type=refresh_token"


def test_a_secret_echoed_in_a_form_inside_json_text_is_masked(server):
    server.script = [(400, b'{"message": "bad form: %s"}' % json.dumps(urlencode(dict(s=SECRET)))[1:-1].encode())]
    assert failure(server).message == "bad form: s=********"


# Accurate sentences --------------------------------------------------------------------------

@pytest.fixture
def cut_short():
    """A server that announces 100 bytes of answer, sends 11 and closes the connection."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(5)

    def serve():
        while True:
            try:
                conn, dummy = listener.accept()
            except OSError:
                return
            conn.recv(65536)
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n"
                         b'{"data": [1')
            conn.close()

    threading.Thread(target=serve, daemon=True).start()
    yield "http://127.0.0.1:%d" % listener.getsockname()[1]
    listener.close()


@pytest.mark.parametrize("method, unknown", [("GET", False), ("POST", True)])
def test_an_answer_cut_short_says_so(cut_short, method, unknown):
    with pytest.raises(ApiError) as caught:
        Client(cut_short + "/v1", retries=0).request(method, "/user")
    assert str(caught.value) == ("%s /user failed: the connection to %s closed in the middle of the answer, which was "
                                 "cut short (11 of 100 bytes arrived)." % (method, cut_short.split("//")[1]))
    assert caught.value.outcome_unknown is unknown


def test_https_to_a_plain_http_port_says_the_server_does_not_speak_tls(server):
    url = server.url.replace("http:", "https:")
    with pytest.raises(ApiError) as caught:
        Client(url + "/v1", retries=0).get("/user")
    message = str(caught.value)
    assert message.startswith("GET /user failed: %s does not speak TLS on that port (" % url.split("//")[1])
    assert message.endswith("): use an http:// URL, or the port where the server serves HTTPS.")
    assert "ca_path" not in message and "certificate" not in message


@pytest.mark.parametrize("body, kind", [(b"[1, 2]", "a list"), (b'"text"', "a string"), (b"null", "null"),
                                        (b"42", "a number"), (b"true", "a boolean")])
@pytest.mark.parametrize("method", ["GET", "POST", "PATCH"])
def test_an_answer_that_is_no_json_object_is_a_sentence_naming_the_endpoint(server, body, kind, method):
    server.script = [(200, body)]
    assert str(failure(server, method, "/organizations/acme/teams/t1", json={})) == (
        "%s /organizations/acme/teams/t1 failed with HTTP 200: the answer was %s where a JSON object was expected."
        % (method, kind))


def test_a_read_answered_with_nothing_is_a_sentence_not_a_missing_record(server):
    server.script = [(200, b"")]
    with pytest.raises(ApiError, match="GET /user failed with HTTP 200: the answer was empty where a JSON object"):
        make_client(server).get("/user", missing_ok=True)


def test_a_delete_is_done_whatever_shape_its_answer_has(server):
    server.script = [(200, b"[]")]
    assert make_client(server).delete("/teams/t1") is None


def test_never_connected_judges_exception_types_not_their_text():
    refused_text = requests.exceptions.ConnectionError(MaxRetryError(None, "/x", ProtocolError(
        "Connection aborted.", ConnectionResetError(104, "Connection refused by the peer (ConnectTimeoutError)"))))
    assert not client_module._never_connected(refused_text)  # pylint: disable=protected-access
    new_connection = NewConnectionError(None, "Failed to establish a new connection")
    new_connection.__cause__ = ConnectionRefusedError(111, "refused")
    refused = requests.exceptions.ConnectionError(MaxRetryError(None, "/x", new_connection))
    assert client_module._never_connected(refused)  # pylint: disable=protected-access
    dns = requests.exceptions.ConnectionError(socket.gaierror(-2, "Name or service not known"))
    assert client_module._never_connected(dns)  # pylint: disable=protected-access


@pytest.fixture
def not_tls():
    """A TCP server that answers every connection with plain HTTP, counting the connections it accepts."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    accepted = []

    def serve():
        while True:
            try:
                connection, dummy = listener.accept()
            except OSError:
                return
            accepted.append(1)
            connection.recv(4096)
            connection.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            connection.close()
    threading.Thread(target=serve, daemon=True).start()
    yield "https://127.0.0.1:%d" % listener.getsockname()[1], accepted
    listener.close()


def test_a_tls_failure_is_not_retried(not_tls, sleeps):
    """A handshake that fails fails the same way again: one connection, no wait, whatever api_retries says."""
    url, accepted = not_tls
    with pytest.raises(ApiError) as caught:
        Client(url + "/v1", retries=5).get("/user")
    assert "does not speak TLS" in str(caught.value)
    assert len(accepted) == 1 and sleeps == []
