# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Connections kept across the items of a loop in the in-process path, counted at a real server:
one session per key, never shared between keys, discarded after a fault, closed at the worker's end."""

from __future__ import annotations

import os
from multiprocessing import util as multiprocessing_util
from types import SimpleNamespace

import pytest

from ansible_collections.planetscale.cloud.plugins.module_utils.base import Module
from ansible_collections.planetscale.cloud.plugins.module_utils.client import ApiError, Client
from ansible_collections.planetscale.cloud.plugins.module_utils.options import CONNECTION, CREDENTIALS
from ansible_collections.planetscale.cloud.plugins.plugin_utils import in_process, sessions
from ansible_collections.planetscale.cloud.plugins.plugin_utils.in_process import InProcessAction


class Reader(Module):
    """One GET per task, as a no-op module's read."""

    option_sets = (CREDENTIALS, CONNECTION)
    argument_spec = dict(thing=dict(type="str", default="a"))

    def run(self):
        return dict(thing=self.client.get(self.path("things", self.params["thing"])))


class ReaderAction(InProcessAction):
    module_class = Reader


@pytest.fixture
def pool(monkeypatch):
    """A fresh pool as the worker's, closed after the test."""
    fresh = sessions.SessionPool()
    monkeypatch.setattr(in_process, "worker_pool", lambda: fresh)
    yield fresh
    fresh.close()


def run_item(server, token="one", **args):
    action = ReaderAction.__new__(ReaderAction)
    options = dict(api_url=server.url + "/v1", service_token_id="id-" + token, service_token="secret-" + token,
                   api_retries=0)
    options.update(args)
    action._task = SimpleNamespace(args=options, check_mode=False, diff=False, action="reader", async_val=0)
    action._compute_environment_string = lambda raw_environment_out: None
    return action._in_process_result({})


def test_the_items_of_a_loop_share_one_connection(server, pool):
    server.default = (200, {"id": "a"})
    results = [run_item(server) for dummy in range(5)]
    assert all(result.get("thing") == {"id": "a"} for result in results)
    assert len(server.requests) == 5
    assert server.connections == 1
    assert pool.built == 1


def test_the_module_path_opens_a_connection_per_item(server):
    """Without a pool (a module process per item) each Client owns its session and closes it."""
    server.default = (200, {"id": "a"})
    for dummy in range(3):
        client = Client(server.url + "/v1", authorization="id:secret", retries=0)
        client.get("/things/a")
        client.close()
    assert server.connections == 3


def test_two_credentials_never_share_a_session(server, pool):
    server.default = (200, {"id": "a"})
    for token in ("one", "two", "one", "two"):
        run_item(server, token=token)
    assert [r["headers"]["Authorization"] for r in server.requests] == [
        "id-one:secret-one", "id-two:secret-two", "id-one:secret-one", "id-two:secret-two"]
    assert pool.built == 2
    assert server.connections == 2


@pytest.mark.parametrize("change", [
    dict(authorization="id:other"),
    dict(base_url="http://127.0.0.1:1/v2"),
    dict(validate_certs=False),
    dict(ca_path=__file__),
    dict(retries=1),
    dict(environment=dict(HTTPS_PROXY="http://proxy.example:3128")),
    dict(environment=dict(no_proxy="example.com")),
    dict(environment=dict(REQUESTS_CA_BUNDLE=__file__)),
])
def test_each_setting_that_makes_a_session_unsafe_to_share_is_in_its_key(monkeypatch, change):
    for name in sessions_environment():
        monkeypatch.delenv(name, raising=False)
    base = dict(base_url="http://127.0.0.1:1/v1", authorization="id:secret", validate_certs=True, ca_path=None,
                retries=0)

    def key(**settings):
        for name, value in settings.pop("environment", {}).items():
            monkeypatch.setenv(name, value)
        client = Client(settings.pop("base_url"), **settings)
        return client.session_key(settings["authorization"], client.session.verify, settings["retries"])

    first = key(**dict(base))
    assert key(**dict(base)) == first
    assert key(**dict(base, **change)) != first


def sessions_environment():
    from ansible_collections.planetscale.cloud.plugins.module_utils.client import SESSION_ENVIRONMENT
    return SESSION_ENVIRONMENT


def test_the_key_holds_no_credential():
    client = Client("http://127.0.0.1:1/v1", authorization="id:s3cr3t-Value")
    assert "s3cr3t-Value" not in repr(client.session_key("id:s3cr3t-Value", True, 0))


def test_a_dropped_connection_discards_the_session(server, pool):
    server.default = (200, {"id": "a"})
    run_item(server)
    server.script = ["drop"]
    failed = run_item(server)
    assert failed["failed"] and "connection" in failed["msg"]
    assert len(pool) == 0 and pool.discarded == 1
    run_item(server)
    assert pool.built == 2
    assert server.connections == 2  # the first connection, dropped; then a new session's


def test_an_http_error_keeps_the_session(server, pool):
    server.script = [(404, {"code": "not_found", "message": "Not Found"})]
    server.default = (200, {"id": "a"})
    assert run_item(server)["failed"]
    run_item(server)
    assert pool.discarded == 0 and pool.built == 1
    assert server.connections == 1


def test_any_other_exception_discards_the_session(server, pool):
    server.default = (200, {"id": "a"})
    client = Client(server.url + "/v1", authorization="id:secret", retries=0, pool=pool)
    client.get("/things/a")

    def broken(*args, **kwargs):
        raise RuntimeError("a bug")

    client._send = broken
    with pytest.raises(RuntimeError):
        client.get("/things/a")
    client.close()
    assert len(pool) == 0 and pool.discarded == 1


def test_a_session_is_lent_to_one_client_at_a_time(server, pool):
    server.default = (200, {"id": "a"})
    first = Client(server.url + "/v1", authorization="id:secret", retries=0, pool=pool)
    second = Client(server.url + "/v1", authorization="id:secret", retries=0, pool=pool)
    assert first.session is not second.session
    first.close()
    second.close()  # one idle session per key is kept; the other is closed
    assert len(pool) == 1


def test_a_forked_process_never_uses_its_parent_s_sessions(server, pool, monkeypatch):
    server.default = (200, {"id": "a"})
    run_item(server)
    assert len(pool) == 1
    parent = pool._idle.copy()
    closed = []
    for session in parent.values():
        monkeypatch.setattr(session, "close", lambda: closed.append(True))
    monkeypatch.setattr(os, "getpid", lambda: -1)
    run_item(server)
    assert pool.built == 2 and not closed  # a new session; the parent's sockets left alone
    assert server.connections == 2


def test_the_worker_s_end_closes_its_sessions(server):
    server.default = (200, {"id": "a"})
    pool = sessions.worker_pool()
    assert any(getattr(entry, "_callback", None) == pool.close
               for entry in multiprocessing_util._finalizer_registry.values())
    client = Client(server.url + "/v1", authorization="id:secret", retries=0, pool=pool)
    client.get("/things/a")
    session = client.session
    client.close()
    closed = []
    session.close = lambda: closed.append(True)
    pool.close()
    assert closed == [True] and len(pool) == 0


def test_a_failed_request_of_a_pooled_client_is_still_an_error_sentence(server, pool):
    server.script = ["drop"]
    client = Client(server.url + "/v1", authorization="id:secret", retries=0, pool=pool)
    with pytest.raises(ApiError, match="connection"):
        client.get("/things/a")
    client.close()
    assert pool.discarded == 1


def test_a_client_closed_twice_gives_its_session_back_once(server, pool):
    server.default = (200, {"id": "a"})
    client = Client(server.url + "/v1", authorization="id:secret", retries=0, pool=pool)
    client.get("/things/a")
    client.close()
    client.close()
    owned = Client(server.url + "/v1", authorization="id:secret", retries=0)
    owned.close()
    owned.close()
    assert len(pool) == 1
