# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Connections kept across tasks by the run's connection keeper (plugin_utils/keeper.py, persist.py), counted at a
real server, never timed: one connection for the tasks of a key, never shared between keys, discarded after a
fault, the keeper gone after its idle timeout and with its run, another user refused, no secret in a file."""

from __future__ import annotations

import os
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time
from types import SimpleNamespace

import pytest

from ansible.errors import AnsibleActionFail

from ansible_collections.planetscale.cloud.plugins.module_utils.client import ApiError, Client
from ansible_collections.planetscale.cloud.plugins.plugin_utils import in_process, keeper, persist, sessions

pytestmark = pytest.mark.skipif(not persist.SUPPORTED, reason="the keeper needs SO_PEERCRED (Linux)")

SECRET = "s3cret-token-value"


@pytest.fixture
def directory():
    """A short private directory (a unix socket's path has at most 107 bytes)."""
    base = tempfile.mkdtemp(prefix="pk", dir="/tmp")
    yield persist.private_directory(base)
    shutil.rmtree(base, ignore_errors=True)


@pytest.fixture
def link(directory):
    """The link of this process's tasks to a keeper of a run that is this process; the keeper ended after the test."""
    found = persist.Link(directory, os.getpid(), idle=30)
    yield found
    status = found.status() if os.path.exists(found.path) else None
    if status:
        os.kill(status["pid"], 15)
        wait_gone(status["pid"])


def task(server, link, token="one", path="/v1/things/a", suspect=False):
    """One task as a worker runs it: a pool of its own, a Client, a request, the pool closed at the worker's end."""
    pool = sessions.SessionPool()
    pool.keeper = link
    client = Client(server.url + "/v1", authorization="id-%s:%s-%s" % (token, SECRET, token), retries=0, pool=pool,
                    secrets=[SECRET])
    try:
        return client.request("GET", path[len("/v1"):])
    finally:
        client._suspect = client._suspect or suspect
        client.close()
        pool.close()


def gone(pid):
    """Whether the process ended (reaped when it is this process's child)."""
    try:
        if os.waitpid(pid, os.WNOHANG)[0] == pid:
            return True
    except ChildProcessError:
        pass
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def wait_gone(pid, within=20.0):
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if gone(pid):
            return True
        time.sleep(0.05)
    return False


def test_the_tasks_of_a_run_share_one_connection(server, link):
    server.default = (200, {"id": "a"})
    assert [task(server, link) for dummy in range(5)] == [{"id": "a"}] * 5
    assert len(server.requests) == 5
    assert server.connections == 1
    status = link.status()
    assert (status["opened"], status["lent"], status["discarded"]) == (1, 4, 0)


def test_without_the_keeper_each_task_opens_its_own(server):
    server.default = (200, {"id": "a"})
    for dummy in range(3):
        task(server, None)
    assert server.connections == 3


def test_two_keys_never_share_a_connection(server, link):
    seen = []
    server.default = lambda request: seen.append(request["headers"]["Authorization"]) or (200, {"id": "a"})
    for dummy in range(3):
        task(server, link, token="one")
        task(server, link, token="two")
    assert server.connections == 2
    assert link.status()["opened"] == 2
    assert [value.split(":")[0] for value in seen] == ["id-one", "id-two"] * 3


def test_a_dropped_connection_is_discarded(server, link):
    server.script = [(200, {"id": "a"}), "drop", (200, {"id": "a"})]
    task(server, link)
    with pytest.raises(ApiError):
        task(server, link)
    assert task(server, link) == {"id": "a"}
    assert server.connections == 2  # the dropped one was not lent again
    assert link.status()["discarded"] == 1


def test_a_session_a_fault_touched_is_not_lent_again(server, link):
    """The worker's Client saw a fault the keeper could not see (its session is suspect): the keeper is told."""
    server.default = (200, {"id": "a"})
    task(server, link, suspect=True)
    task(server, link)
    assert server.connections == 2
    assert link.status()["discarded"] == 1


def test_an_idle_connection_the_server_closed_or_wrote_to_is_not_lent():
    ours, theirs = socket.socketpair()
    with ours, theirs:
        assert keeper.Upstream("k", ours).alive()
        theirs.sendall(b"HTTP/1.1 408 Request Timeout\r\n\r\n")  # what no request asked for
        assert not keeper.Upstream("k", ours).alive()
    ours, theirs = socket.socketpair()
    with ours:
        theirs.close()
        assert not keeper.Upstream("k", ours).alive()


def test_an_answer_that_closes_its_connection_is_not_kept(server, link):
    server.script = [(200, {"id": "a"}, {"Connection": "close"})]
    server.default = (200, {"id": "b"})
    task(server, link)
    assert task(server, link) == {"id": "b"}
    assert server.connections == 2


def test_a_failed_connect_fails_as_without_the_keeper(link):
    """The keeper cannot connect: the worker connects by itself, and the failure says what it always said."""
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()  # nothing listens there now
    server = SimpleNamespace(url="http://127.0.0.1:%d" % port)
    with pytest.raises(ApiError) as kept:
        task(server, link)
    with pytest.raises(ApiError) as alone:
        task(server, None)
    assert str(kept.value) == str(alone.value) and "could not connect" in str(kept.value)
    assert not link.off  # the keeper was reached: it answered that it could not connect


def test_the_keeper_ends_after_its_idle_timeout(server, directory):
    server.default = (200, {"id": "a"})
    short = persist.Link(directory, os.getpid(), idle=0.5)
    task(server, short)
    pid = short.status()["pid"]
    assert wait_gone(pid)
    assert not os.path.exists(short.path)


def test_the_keeper_ends_with_its_run(server, directory):
    server.default = (200, {"id": "a"})
    run = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])  # pylint: disable=R1732
    try:
        of_run = persist.Link(directory, run.pid, idle=300)
        task(server, of_run)
        pid = of_run.status()["pid"]
        assert not gone(pid)
        run.kill()  # not reaped yet: the run's process is a zombie, which has ended all the same
        assert wait_gone(pid)
        assert not os.path.exists(of_run.path)
    finally:
        run.kill()
        run.wait()


def unanswered(sock, question):
    """Whether the keeper closes the socket without a word to a question: the end of the stream, a reset (Linux
    resets a unix socket closed with the peer's bytes unread: the keeper refuses before it reads any), or a broken
    pipe (it closed before the question was sent)."""
    try:
        sock.sendall(question)
        return sock.recv(100) == b""
    except (ConnectionResetError, BrokenPipeError):
        return True


def test_another_user_is_refused_by_the_peer_check(directory):
    """The keeper serves only its owner: here it takes another uid for its owner, so this process is the stranger."""
    path = os.path.join(directory, "stranger.sock")
    stranger = keeper.Keeper(path, idle=30, owner=os.getuid() + 1).bind()
    thread = threading.Thread(target=stranger.serve, daemon=True)
    thread.start()
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(10)
            sock.connect(path)
            assert unanswered(sock, b'{"op": "status"}\n')
        assert stranger.counts["refused"] == 1
    finally:
        stranger.idle = 0
        thread.join(10)


@pytest.mark.skipif(os.getuid() != 0, reason="running a client under another uid needs root")
def test_a_process_of_another_uid_is_refused(server, link, directory):
    server.default = (200, {"id": "a"})
    task(server, link)
    # only for this test, let the other user reach the socket: the peer check alone must refuse it
    os.chmod(os.path.dirname(directory), 0o755)
    os.chmod(directory, 0o711)
    os.chmod(link.path, 0o666)
    client = ("import socket, sys; s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])\n"
              "try:\n    s.sendall(b'{\"op\": \"status\"}\\n')\n    print(repr(s.recv(100)))\n"
              "except (ConnectionResetError, BrokenPipeError):\n    print(repr(b''))\n")
    python = shutil.which("python3", path="/usr/bin:/bin") or sys.executable  # one another user may run
    done = subprocess.run([python, "-I", "-c", client, link.path], user=65534, capture_output=True, text=True,
                          timeout=30, check=False, cwd="/")
    os.chmod(link.path, 0o600)
    os.chmod(directory, 0o700)
    assert done.stdout.strip() == "b''", done.stderr
    assert link.status()["refused"] == 1


def test_a_socket_others_may_use_is_never_trusted(server, link):
    server.default = (200, {"id": "a"})
    task(server, link)
    os.chmod(link.path, 0o666)
    fresh = persist.Link(link.directory, os.getpid(), idle=30)
    assert task(server, fresh) == {"id": "a"}  # the task connects by itself
    assert fresh.off and fresh.opened == 0
    os.chmod(link.path, 0o600)


def test_a_directory_others_may_enter_is_not_used():
    base = tempfile.mkdtemp(prefix="pk", dir="/tmp")
    try:
        os.mkdir(os.path.join(base, "planetscale-cloud-%d" % os.getuid()), 0o755)
        os.chmod(os.path.join(base, "planetscale-cloud-%d" % os.getuid()), 0o755)
        with pytest.raises(persist.Untrusted):
            persist.private_directory(base)
    finally:
        shutil.rmtree(base)


def test_a_stale_socket_is_replaced(server, directory):
    server.default = (200, {"id": "a"})
    stale = persist.Link(directory, os.getpid(), idle=30)
    dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    dead.bind(stale.path)  # bound, never listening: what a keeper killed by a signal leaves
    dead.close()
    os.chmod(stale.path, 0o600)
    task(server, stale)
    assert stale.opened == 1 and not stale.off
    os.kill(stale.status()["pid"], 15)


def test_no_secret_in_any_file_the_keeper_writes(server, link, monkeypatch):
    monkeypatch.setenv("PLANETSCALE_SERVICE_TOKEN", SECRET)  # the task's environment may hold a credential
    server.default = (200, {"id": "a"})
    task(server, link)
    pid = link.status()["pid"]
    written = []
    for name in os.listdir(link.directory):
        found = os.lstat(os.path.join(link.directory, name))
        assert found.st_mode & 0o077 == 0, name
        if stat.S_ISREG(found.st_mode):
            with open(os.path.join(link.directory, name), "rb") as handle:
                written.append(handle.read())
    for name in ("cmdline", "environ"):
        with open("/proc/%d/%s" % (pid, name), "rb") as handle:
            written.append(handle.read())
    assert written and not any(SECRET.encode() in data for data in written)


def test_the_action_keeps_connections_only_in_a_worker_and_when_on(monkeypatch, directory):
    action = in_process.InProcessAction.__new__(in_process.InProcessAction)
    action._templar = SimpleNamespace(template=lambda value: value)
    assert action._keeper({}) is None  # not a worker of a playbook run
    monkeypatch.setattr(in_process, "WorkerProcess", type(in_process.multiprocessing.current_process()))
    monkeypatch.setattr(persist, "private_directory", lambda: directory)
    monkeypatch.setattr(in_process, "_LINKS", {})
    assert isinstance(action._keeper({}), persist.Link)
    assert action._keeper({}).idle == persist.DEFAULT_IDLE
    assert action._keeper({in_process.KEEP: False}) is None
    assert action._keeper({in_process.KEEP_TIMEOUT: 5}).idle == 5
    with pytest.raises(AnsibleActionFail, match="planetscale_keep_connections_timeout must be"):
        action._keeper({in_process.KEEP_TIMEOUT: "soon"})


def test_a_write_and_its_unknown_outcome_are_what_they_are_without_the_keeper(server, link):
    outcomes = []
    for kept in (link, None):
        server.script = [(503, {"message": "busy"})]
        pool = sessions.SessionPool()
        pool.keeper = kept
        client = Client(server.url + "/v1", authorization="id:" + SECRET, retries=0, pool=pool, secrets=[SECRET])
        with pytest.raises(ApiError) as error:
            client.post("/things", json=dict(name="a" * 5000))  # a body larger than one read
        client.close()
        pool.close()
        outcomes.append((str(error.value), error.value.outcome_unknown, server.requests[-1]["body"]))
    assert outcomes[0] == outcomes[1] and outcomes[0][1] is True
    assert server.connections == 2  # one kept by the keeper, one of the Client without it


def test_a_chunked_answer_is_relayed_whole_and_ends_at_its_boundary():
    body = b"5\r\nhello\r\n6;x=y\r\n world\r\n0\r\nTrailer: a\r\n\r\n"
    source, feed = socket.socketpair()
    target, sink = socket.socketpair()
    with source, feed, target, sink:
        feed.sendall(body)
        stream = keeper.Stream(source)
        keeper.relay_body(stream, target, {"transfer-encoding": "chunked"})
        target.close()
        received = b""
        while True:
            data = sink.recv(4096)
            if not data:
                break
            received += data
    assert received == body and stream.buffer == b""


def test_a_worker_gone_before_the_answer_closes_the_server_connection(link):
    """A worker whose read timed out closes its socket: the server sees the connection close then, as it would have
    seen the worker's own (a slow write is then not applied later for nobody), not when its answer comes."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    want = dict(scheme="http", host="127.0.0.1", port=listener.getsockname()[1], timeout=30.0, verify=False,
                cafile=None, capath=None)
    with listener:
        worker = link.open("key", want)
        server_side, _address = listener.accept()
        with server_side:
            worker.sendall(b"POST /v1/things HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}")
            server_side.settimeout(10)
            received = b""
            while not received.endswith(b"{}"):
                received += server_side.recv(4096)
            worker.close()  # gone before the answer
            assert server_side.recv(100) == b""  # closed at once, long before the 30 s the keeper would wait
    assert link.status()["discarded"] == 1
