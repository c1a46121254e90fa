# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The worker's side of the connections kept across tasks (in-process path only; the keeper is keeper.py).

A Client of the in-process path borrows a session from the worker's pool (sessions.py). With the keeper on, that
session's adapter (KeptAdapter) makes each urllib3 connection a unix socket to the run's keeper instead of a TCP
connection of its own: the keeper lends a kept connection of the same key, or opens one, and relays the bytes.
Everything above the socket is the worker's, as before: urllib3's retries, the Client's unknown-outcome rules,
the rate-limit gate, TLS settings (sent to the keeper, which verifies with them) and every sentence.

When the keeper cannot open a connection (refused, no such host, a timeout, TLS refused) it answers how, and the
worker raises what urllib3 raises for that failure, with the same words, where urllib3 raises it: the Client's
sentences, retries and unknown-outcome rules see what they always saw (and the server one attempt, not two).
When the keeper cannot be reached or trusted, the worker connects by itself too: a kept connection is an
optimisation, never a reason for a task to fail.

Trust (the keeper's own rules are in keeper.py): the directory is the user's, 0700 and not a link; the socket is
the user's and 0600; the process that listens on it runs as the user (SO_PEERCRED). A socket that fails a check is
never used; a stale one (nobody listens) in the private directory is replaced.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import socket
import ssl
import stat
import subprocess
import sys
import tempfile
import threading
import time
import weakref

from ansible_collections.planetscale.cloud.plugins.plugin_utils import keeper as keeper_module

try:
    from requests.adapters import HTTPAdapter
    from urllib3.connection import HTTPConnection, HTTPSConnection
    from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool
    from urllib3.exceptions import ConnectTimeoutError, NewConnectionError
except ImportError:  # the action runs the module process then (HAS_REQUESTS), which never keeps connections
    HAS_REQUESTS = False
    HTTPAdapter = HTTPConnection = HTTPSConnection = HTTPConnectionPool = HTTPSConnectionPool = object
    ConnectTimeoutError = NewConnectionError = OSError
    NameResolutionError = None
else:
    HAS_REQUESTS = True
    try:
        from urllib3.exceptions import NameResolutionError  # urllib3 2; 1.26 raises NewConnectionError
    except ImportError:
        NameResolutionError = None

KEEPER = os.path.abspath(keeper_module.__file__.replace(".pyc", ".py"))
DEFAULT_IDLE = 60  # seconds a keeper waits for a next task, as SSH's ControlPersist's usual value
START_WAIT = 5.0  # seconds a worker waits for the keeper it started to listen
FAREWELL_WAIT = 2.0  # seconds a worker waits for the keeper to take back a connection it is done with
SUPPORTED = HAS_REQUESTS and hasattr(socket, "SO_PEERCRED") and hasattr(socket, "AF_UNIX")
PROXY_ENVIRONMENT = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")
DEFAULT_PORTS = dict(http=80, https=443)
KEEPER_ENVIRONMENT = ("PATH", "LANG", "LC_ALL", "TZ", "SSL_CERT_FILE", "SSL_CERT_DIR", "OPENSSL_CONF")


class Untrusted(Exception):
    """A path or a peer that is not the user's own: never used."""


def private_directory(base=None):
    """The user's 0700 directory for keepers' sockets, made if missing; Untrusted if it is not private."""
    base = base or os.environ.get("XDG_RUNTIME_DIR") or tempfile.gettempdir()
    path = os.path.join(base, "planetscale-cloud-%d" % os.getuid())
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    found = os.lstat(path)
    if not stat.S_ISDIR(found.st_mode) or found.st_uid != os.getuid() or found.st_mode & 0o077:
        raise Untrusted("%s is not a private directory of this user" % path)
    return path


RUN_STARTS = {}  # pid: start time, of ansible-playbook's own process, remembered there (remember_run)


def remember_run():
    """In ansible-playbook's own process: its start time, which every worker it forks inherits. A worker reading
    it from /proc pays most of a millisecond (the kernel sums a large process's threads); the run, once."""
    RUN_STARTS[os.getpid()] = keeper_module.process_start(os.getpid())


class Refused(Exception):
    """The keeper could not connect: its answer says how, for the worker to raise what urllib3 raises."""

    def __init__(self, answer):
        super().__init__(answer.get("error"))
        self.answer = answer


class Link:
    """The way of one worker to its run's keeper: found, checked, started when missing."""

    def __init__(self, directory, run_pid, idle=DEFAULT_IDLE, debug=None):
        self.directory = directory
        self.run_pid = run_pid
        self.run_start = RUN_STARTS[run_pid] if run_pid in RUN_STARTS else keeper_module.process_start(run_pid)
        self.idle = idle
        self.name = "run-%d-%s.sock" % (run_pid, self.run_start or "-")
        self.path = os.path.join(directory, self.name)
        self.debug = debug or (lambda message: None)
        self.off = False  # set when the keeper cannot be used: this worker connects by itself
        self.opened = 0  # connections this worker had lent through the keeper (kept or new)
        self._lock = threading.Lock()

    def dial(self):
        """A connected socket to the keeper, checked; the keeper started first when none listens."""
        sock = self._trusted()
        if sock is not None:
            return sock
        lock_path = os.path.join(self.directory, self.name + ".lock")
        with os.fdopen(os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o600)) as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # one worker starts the keeper; the others wait, then use it
            sock = self._trusted()
            if sock is not None:
                return sock
            if os.path.lexists(self.path):
                os.unlink(self.path)  # nobody listens: a stale socket of a keeper that ended
            subprocess.Popen(  # pylint: disable=consider-using-with  # it outlives this worker
                [sys.executable, "-I", KEEPER, self.directory, self.name, str(self.run_pid), self.run_start or "-",
                 str(self.idle)], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                close_fds=True, start_new_session=True, cwd="/", env=keeper_environment())
            deadline = time.monotonic() + START_WAIT
            while time.monotonic() < deadline:
                sock = self._trusted()
                if sock is not None:
                    return sock
                time.sleep(0.01)
        raise OSError("the connection keeper did not start")

    def _trusted(self):
        """A socket connected to the keeper when one listens and every check passes; None when none listens."""
        try:
            found = os.lstat(self.path)
        except FileNotFoundError:
            return None
        if not stat.S_ISSOCK(found.st_mode) or found.st_uid != os.getuid() or found.st_mode & 0o077:
            raise Untrusted("%s is not a socket of this user's alone" % self.path)
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.settimeout(START_WAIT)
            sock.connect(self.path)
            if keeper_module.peer_uid(sock) != os.getuid():
                raise Untrusted("the process listening on %s is another user's" % self.path)
        except (ConnectionRefusedError, FileNotFoundError):
            sock.close()
            return None
        except BaseException:
            sock.close()
            raise
        return sock

    def open(self, key, want):
        """A socket relayed to a kept connection of this key, or None when the keeper cannot be used (connect by
        yourself); Refused, with the keeper's answer, when the keeper could not connect."""
        if self.off:
            return None
        try:
            sock = self.dial()
            sock.settimeout(float(want["timeout"]) + 5.0)
            sock.sendall(json.dumps(dict(want, key=key)).encode("utf-8") + b"\n")
            answer = json.loads(_line(sock))
        except (OSError, ValueError, Untrusted) as error:  # Refused is none of these: the caller raises it again
            self.off = True
            self.debug("planetscale.cloud: connections are not kept across tasks (%s)" % error)
            return None
        if answer.get("ok"):
            with self._lock:
                self.opened += 1
            return sock
        sock.close()
        raise Refused(answer)

    def status(self):
        """The keeper's counts (connections opened, lent, discarded; peers refused; idle ones), for tests."""
        sock = self._trusted()
        if sock is None:
            return None
        with sock:
            sock.sendall(b'{"op": "status"}\n')
            return json.loads(_line(sock))


def keeper_environment():
    """The keeper's environment: what a TLS connection may read, never the task's (credentials may be there)."""
    return dict((name, os.environ[name]) for name in KEEPER_ENVIRONMENT if name in os.environ)


def _line(sock):
    """One line from a socket, read a byte at a time: nothing after it is this reader's."""
    data = b""
    while not data.endswith(b"\n"):
        byte = sock.recv(1)
        if not byte:
            raise OSError("the connection keeper closed the connection")
        data += byte
        if len(data) > 65536:
            raise ValueError("the connection keeper's answer is too long")
    return data


def session_id(key):
    """What the keeper knows of a session's key: a digest (the key holds a digest of the credentials)."""
    return hashlib.sha256(repr(key).encode("utf-8")).hexdigest()


class _Kept:
    """A urllib3 connection whose socket is a keeper's relay to a kept connection (the adapter sets `adapter`)."""

    adapter = None
    scheme = "http"

    def connect(self):
        want = dict(scheme=self.scheme, host=self.host, port=self.port or DEFAULT_PORTS[self.scheme],
                    timeout=self.timeout if isinstance(self.timeout, (int, float)) else 30.0, **self._tls())
        try:
            sock = self.adapter.link.open(self.adapter.key, want)
        except Refused as refused:
            error = self._failure(refused.answer)
            if error is None:
                return super().connect()  # a failure of another kind: the worker's own attempt says it
            raise error
        if sock is None:
            return super().connect()
        sock.settimeout(self.timeout if isinstance(self.timeout, (int, float)) else None)
        self.sock = sock
        self.adapter.kept.add(self)
        if self.scheme == "https":
            self.is_verified = want["verify"]
        return None

    def _tls(self):
        return dict(verify=False, cafile=None, capath=None)

    def _failure(self, answer):
        """The exception urllib3 raises where its own connect fails as the keeper's did (the same words), or None."""
        kind, text, number = answer.get("error"), answer.get("text") or "", answer.get("errno")
        if kind == "timeout":
            return ConnectTimeoutError(self, "Connection to %s timed out. (connect timeout=%s)"
                                       % (self.host, self.timeout))
        if kind in ("certificate", "tls"):
            error = (ssl.SSLCertVerificationError if kind == "certificate" else ssl.SSLError)(number or 1, text)
            for name in ("reason", "library", "verify_code", "verify_message"):
                setattr(error, name, answer.get(name))
            return error
        if kind == "dns":
            cause = socket.gaierror(number, text)
            if NameResolutionError is not None:
                return _caused(NameResolutionError(self.host, self, cause), cause)
        elif kind == "os":
            cause = OSError(number, text) if number is not None else OSError(text)
        else:
            return None
        return _caused(NewConnectionError(self, "Failed to establish a new connection: %s" % cause), cause)


def _caused(error, cause):
    error.__cause__ = cause
    return error


class KeptHTTPConnection(_Kept, HTTPConnection):
    pass


class KeptHTTPSConnection(_Kept, HTTPSConnection):
    scheme = "https"

    def _tls(self):
        verify = self.cert_reqs not in ("CERT_NONE", "NONE", 0) and self.cert_reqs is not False
        cafile, capath = getattr(self, "ca_certs", None), getattr(self, "ca_cert_dir", None)
        if verify and not (cafile or capath):
            from requests.certs import where  # pylint: disable=import-outside-toplevel

            cafile = where()  # what requests verifies with when verify is true
        return dict(verify=bool(verify), cafile=cafile if verify else None, capath=capath if verify else None)


class KeptAdapter(HTTPAdapter):
    """requests' adapter whose connections are relayed by the keeper; discard() when a fault touched the session."""

    def __init__(self, link, key, **kwargs):
        self.link, self.key = link, session_id(key)
        self.kept = weakref.WeakSet()
        super().__init__(**kwargs)

    def init_poolmanager(self, *args, **kwargs):
        super().init_poolmanager(*args, **kwargs)
        classes = {}
        for scheme, pool, connection, plain in (("http", HTTPConnectionPool, KeptHTTPConnection, HTTPConnection),
                                                ("https", HTTPSConnectionPool, KeptHTTPSConnection, HTTPSConnection)):
            # named as urllib3's own: its sentences name the connection's class ("HTTPConnection(host=...)")
            bound = type(plain.__name__, (connection,), dict(adapter=self))
            classes[scheme] = type("Kept" + pool.__name__, (pool,), dict(ConnectionCls=bound))
        self.poolmanager.pool_classes_by_scheme = classes

    def discard(self):
        """Tell the keeper that none of this adapter's connections may be lent again, and close them."""
        for connection in list(self.kept):
            if getattr(connection, "sock", None) is not None:
                farewell(connection, keeper_module.DISCARD)

    def close(self):
        """Give the idle connections back to the keeper, once it has them back (the next task may want them at
        once), then close the adapter. A connection in the middle of an exchange is never among them."""
        for connection in self._idle():
            farewell(connection)
        super().close()

    def _idle(self):
        """The connections of this adapter that its urllib3 pools hold idle: between exchanges, clean."""
        found, pools = [], self.poolmanager.pools
        for key in list(pools.keys()):
            try:
                queue = getattr(pools[key], "pool", None)
            except KeyError:
                continue
            for connection in list(getattr(queue, "queue", None) or ()):
                if connection is not None and connection in self.kept and getattr(connection, "sock", None):
                    found.append(connection)
        return found


def farewell(connection, word=b""):
    """Close a relayed connection once the keeper has taken it back (or discarded it, after the word DISCARD)."""
    sock = connection.sock
    try:
        if word:
            sock.sendall(word)
        sock.shutdown(socket.SHUT_WR)
        sock.settimeout(FAREWELL_WAIT)
        while sock.recv(4096):
            pass
    except OSError:
        pass
    connection.close()


def proxied():
    """Whether the environment names a proxy: requests then connects through it, and nothing is kept."""
    return any(os.environ.get(name) for name in PROXY_ENVIRONMENT)


def link_for_worker(idle, debug=None):
    """The keeper's link of this worker (its run is the worker's parent, ansible-playbook), or None where the
    platform cannot check a peer's user."""
    if not SUPPORTED:
        return None
    try:
        return Link(private_directory(), os.getppid(), idle=idle, debug=debug)
    except (OSError, Untrusted) as error:
        if debug:
            debug("planetscale.cloud: connections are not kept across tasks (%s)" % error)
        return None
