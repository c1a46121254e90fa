# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""TLS: against the emulator over HTTPS with a CA of its own (a fresh one each run), the
default settings fail at once (one handshake, counted by the emulator) with a sentence about
the certificate; validate_certs false
works with a warning; ca_path works with validation on. After a redirect to another host
(the signed download of a query-pattern report), the client sends no credentials.
"""

from __future__ import annotations

import sys

import certifi
import pytest

from harness import FQCN, module_defaults, play

CHECKS = ("Read the user", "Check a token at the OAuth server")


def _tasks(**connection):
    return [{"name": CHECKS[0], FQCN + "user_info": dict(connection), "ignore_errors": True},
            {"name": CHECKS[1], FQCN + "token_info": dict(connection, access_token="{{ access_token }}"),
             "ignore_errors": True}]


@pytest.fixture
def https(tls_emulator, watch):
    tls_emulator.reset()
    tokens = tls_emulator.tokens()
    watch.learn(tokens["access_token"], tokens["refresh_token"])
    tls_emulator.clear_requests()
    return tls_emulator, dict(access_token=tokens["access_token"])


@pytest.mark.parametrize("in_process", [True, False], ids=["in_process", "module"])
def test_tls_by_default_ca_path_and_validate_certs_false(https, ansible, in_process):
    emulator, extra_vars = https
    assert emulator.url.startswith("https://127.0.0.1:")
    netloc = emulator.url.split("://", 1)[1]
    plays = [play(_tasks(), defaults=module_defaults(), name="default settings"),
             play(_tasks(ca_path=emulator.ca), defaults=module_defaults(), name="ca_path"),
             play(_tasks(validate_certs=False), defaults=module_defaults(), name="validate_certs false")]
    # A CA bundle in the environment, as CI machines and corporate setups have: ca_path and validate_certs win over it.
    bundle = dict(REQUESTS_CA_BUNDLE=certifi.where(), CURL_CA_BUNDLE=certifi.where())
    run = ansible.run(plays, extra_vars, emulator=emulator, in_process=in_process, env=bundle,
                      label="tls, in_process=%s" % in_process)
    by_play = [run.tasks[index:index + 2] for index in (0, 2, 4)]

    for task, endpoint in zip(by_play[0], ("GET /user", "GET /oauth/token/info")):
        assert task.failed, task
        msg = task.result["msg"]
        assert msg.startswith("%s failed: the TLS certificate of %s could not be verified (" % (endpoint, netloc)), msg
        assert "set ca_path to the CA bundle that signed it" in msg and "certificate verify failed" in msg, msg
    # Not retried, a certificate does not heal: one refused handshake per task (which the request log never sees).
    assert emulator.connections()["refused"] == len(by_play[0])
    for task in by_play[1]:
        assert not task.failed and not task.result.get("warnings"), task
    assert by_play[1][0].result["user"]["email"] == emulator.world["user"]["email"]
    assert by_play[1][1].result["token_info"]["active"] is True
    # One warning, Ansible's (which shows a message once a run), and not urllib3's on stderr.
    warning = "[WARNING]: validate_certs is false: the server's TLS certificate is not checked."
    assert run.output.count(warning) == 1 and run.output.index(warning) > run.output.index("PLAY [validate_certs false]")
    assert "InsecureRequestWarning" not in run.output
    for task in by_play[2]:
        assert not task.failed, task
    assert [entry["status"] for entry in emulator.requests()] == [200] * 4  # the refused handshakes sent nothing


def _client_module(ansible):
    """The collection's client, imported from the collection path the harness made."""
    path = ansible.collections_path
    if path not in sys.path:
        sys.path.insert(0, path)
    from ansible_collections.planetscale.cloud.plugins.module_utils import client  # pylint: disable=import-outside-toplevel
    return client


@pytest.mark.parametrize("scheme", ["http", "https"])
def test_credentials_are_not_sent_after_a_redirect_to_another_host(emulator, tls_emulator, ansible, scheme):
    server = emulator if scheme == "http" else tls_emulator
    server.reset()
    world = server.world
    report = server.control("POST", "/seed", dict(reports=dict(branch=world["branch"], count=1)))["reports"][0]
    client = _client_module(ansible)
    token = world["service_token"]
    api = client.Client(server.api_url, authorization="%s:%s" % (token["id"], token["token"]),
                        ca_path=server.ca, retries=0)
    try:
        url = client.path("organizations", world["organization"], "databases", world["database"], "branches",
                          world["branch"], "query-patterns", report, "download")
        try:
            api.get(url)
        except client.ApiError as error:  # the report is not JSON: what matters is who was sent what
            assert error.status == 200, error
    finally:
        api.close()
    log = server.requests()
    assert [(entry["path"].rsplit("/", 1)[-1], entry["status"], entry["authorization_sent"]) for entry in log] == [
        ("download", 302, True), (report, 200, False)]
