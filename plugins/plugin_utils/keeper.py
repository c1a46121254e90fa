# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The connection keeper: a process of the user's own that keeps the platform's connections open across the tasks
of one playbook run (the in-process path only), as SSH's ControlPersist keeps a host's connection.

A worker (plugin_utils/persist.py) starts it once per run and connects to its unix socket, one socket per HTTP
connection its urllib3 pool would open. The first line the worker sends names the connection it wants (the digest
of its session key, scheme, host, port, TLS settings); the keeper lends it an idle connection of exactly that key,
or opens one (TCP, then TLS here), answers one line, and from then on relays the worker's HTTP/1.1 requests and
the server's answers byte for byte. The worker's Client keeps its logic: retries, unknown outcomes, the rate-limit
gate and every sentence are decided where they are today; only the connection is kept here.

The rules (tests/unit/plugins/plugin_utils/test_persist.py):
- a connection is lent to one worker socket at a time and only to the key it was opened for;
- it goes back to the idle ones only at a boundary between exchanges (the answer read to its end, no byte of a
  next request), never after a fault, a cut-short answer, `Connection: close`, or a worker that asks to discard it
  (a NUL byte where a request would start: its Client saw a fault);
- an idle connection the server closed (or wrote to) is closed, never lent;
- only the user who runs it may connect (SO_PEERCRED), the socket is 0600 in a 0700 directory;
- it ends after `idle` seconds without a worker connected, and when the playbook run's process ends.
Nothing is written to disk but the socket itself; no credential reaches this process (only a digest of a digest).
"""

from __future__ import annotations

import json
import os
import select
import socket
import ssl
import struct
import sys
import threading
import time

LINE_MAX = 65536
DISCARD = b"\x00"  # a worker's word that the connection must not be lent again
NO_BODY = frozenset((204, 304))
TICK = 0.5  # seconds between the checks of the idle timeout and of the run's end


def peer_uid(sock):
    """The uid of the process at the other end of a unix socket."""
    creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    return struct.unpack("3i", creds)[1]


def process_start(pid):
    """The start time of a process (Linux: /proc), to tell it from a later process that reuses its pid."""
    fields = _stat(pid)
    return fields[19] if fields and len(fields) > 19 else None


def _stat(pid):
    """The fields of /proc/<pid>/stat after the command's name (the state first), or None."""
    try:
        with open("/proc/%d/stat" % pid, encoding="ascii", errors="replace") as handle:
            return handle.read().rpartition(")")[2].split()
    except OSError:
        return None


def running(pid, start=None):
    """Whether the process runs (not ended, not a zombie waiting for its parent) and, given its start time, is the
    same process."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    fields = _stat(pid)
    if fields is None:
        return not os.path.isdir("/proc/self")  # without /proc, os.kill is all there is to know
    if fields[0] in ("Z", "X"):
        return False
    return start is None or (len(fields) > 19 and fields[19] == start)


class Faulted(Exception):
    """The connection is not at a boundary any more: it is closed, never lent again."""


class Stream:
    """A socket read through a buffer of its own, so that what is left unread is known."""

    def __init__(self, sock):
        self.sock = sock
        self.buffer = b""

    def fill(self):
        data = self.sock.recv(65536)
        if not data:
            raise EOFError()
        self.buffer += data

    def line(self):
        while b"\n" not in self.buffer:
            if len(self.buffer) > LINE_MAX:
                raise Faulted("a line too long")
            self.fill()
        line, _nl, self.buffer = self.buffer.partition(b"\n")
        return line + b"\n"

    def head(self):
        """Lines up to the empty line, as bytes."""
        lines = [self.line()]
        while lines[-1] not in (b"\r\n", b"\n"):
            lines.append(self.line())
            if len(lines) > 200:
                raise Faulted("too many header lines")
        return b"".join(lines)

    def chunk(self, most):
        if not self.buffer:
            self.fill()
        data, self.buffer = self.buffer[:most], self.buffer[most:]
        return data


def headers(head):
    """(first line, {lower-case name: value}) of a message head."""
    lines = head.decode("latin-1").split("\n")
    found = {}
    for line in lines[1:]:
        name, colon, value = line.partition(":")
        if colon:
            found[name.strip().lower()] = value.strip()
    return lines[0].strip(), found


def relay_body(source, target, fields, until_close=False):
    """Copy a message body from source (a Stream) to target (a socket), as its headers frame it."""
    if "chunked" in fields.get("transfer-encoding", "").lower():
        while True:
            size_line = source.line()
            target.sendall(size_line)
            size = int(size_line.split(b";")[0].strip() or b"x", 16)
            if size == 0:
                target.sendall(source.head())  # the trailer, up to its empty line
                return
            copy(source, target, size + 2)
    elif "content-length" in fields:
        copy(source, target, int(fields["content-length"]))
    elif until_close:
        while True:
            try:
                data = source.chunk(65536)
            except EOFError:
                raise Faulted("the answer ends with the connection")
            target.sendall(data)


def awaiting(upstream, conn):
    """Wait for the server's answer, and end the exchange when the worker goes away first (its read timed out, it was
    stopped): the server must see the connection close as it would have seen the worker's own, never an exchange
    kept open for nobody."""
    deadline = time.monotonic() + (upstream.sock.gettimeout() or 3600.0)
    while not upstream.stream.buffer and not getattr(upstream.sock, "pending", lambda: 0)():
        left = deadline - time.monotonic()
        if left <= 0:
            raise Faulted("no answer in time")
        readable, _writable, _failed = select.select([upstream.sock, conn], [], [], left)
        if upstream.sock in readable:
            return
        if conn in readable and not conn.recv(1, socket.MSG_PEEK):
            raise Faulted("the worker went away before the answer")
        if conn in readable:
            time.sleep(0.01)  # bytes of the worker's next request (none is sent before an answer): wait on


def copy(source, target, size):
    while size > 0:
        data = source.chunk(size)
        target.sendall(data)
        size -= len(data)


class Upstream:
    """One kept connection to the platform."""

    def __init__(self, key, sock):
        self.key = key
        self.sock = sock
        self.stream = Stream(sock)

    def alive(self):
        """Whether an idle connection can be lent: the server neither closed it nor wrote to it."""
        if self.stream.buffer:
            return False
        self.sock.setblocking(False)
        try:
            data = self.sock.recv(1)
        except (ssl.SSLWantReadError, ssl.SSLWantWriteError, BlockingIOError):
            return True
        except OSError:
            return False
        finally:
            try:
                self.sock.setblocking(True)
            except OSError:
                pass
        return False  # closed by the server, or bytes no request asked for

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass


def open_upstream(want):
    """A new connection to the platform: TCP, then TLS with the worker's settings."""
    sock = socket.create_connection((want["host"], want["port"]), timeout=want["timeout"])
    try:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if want["scheme"] == "https":
            sock = tls_context(want).wrap_socket(sock, server_hostname=want["host"].rstrip(".")
                                                 if want["verify"] else want["host"])
    except BaseException:
        sock.close()
        raise
    return sock


def tls_context(want):
    """The TLS settings urllib3 gives the worker's own connections: its context, the worker's CA and verification."""
    from urllib3.util.ssl_ import create_urllib3_context  # pylint: disable=import-outside-toplevel

    context = create_urllib3_context(cert_reqs=ssl.CERT_REQUIRED if want["verify"] else ssl.CERT_NONE)
    if want["verify"]:
        if want.get("cafile") or want.get("capath"):
            context.load_verify_locations(cafile=want.get("cafile"), capath=want.get("capath"))
        else:
            context.load_default_certs()
        context.check_hostname = True
    else:
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    context.set_alpn_protocols(["http/1.1"])
    return context


def failure(error):
    """A failure to connect, as the worker raises it again (the kind, the errno and the words of the error)."""
    if isinstance(error, socket.timeout):
        kind = "timeout"
    elif isinstance(error, ssl.SSLCertVerificationError):
        kind = "certificate"
    elif isinstance(error, ssl.SSLError):
        kind = "tls"
    elif isinstance(error, socket.gaierror):
        kind = "dns"
    elif isinstance(error, OSError):
        kind = "os"
    else:
        kind = "other"
    found = dict(error=kind, errno=getattr(error, "errno", None), text=getattr(error, "strerror", None))
    if isinstance(error, ssl.SSLError):
        names = ("reason", "library", "verify_code", "verify_message")
        found.update((name, getattr(error, name, None)) for name in names)
    if not isinstance(found["text"], str):
        found["text"] = str(error)
    return found


class Keeper:
    """The kept connections of one playbook run, served on a unix socket."""

    def __init__(self, path, run_pid=None, run_start=None, idle=60.0, owner=None):
        self.path = path
        self.run_pid, self.run_start = run_pid, run_start
        self.idle = idle
        self.owner = os.getuid() if owner is None else owner  # the only uid allowed to connect
        self.lock = threading.Lock()
        self.kept = {}  # key -> [idle Upstream]
        self.active = 0
        self.last = time.monotonic()
        self.counts = dict(opened=0, lent=0, discarded=0, refused=0)
        self.listener = None
        self.inode = None

    def bind(self):
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        old = os.umask(0o177)
        try:
            listener.bind(self.path)
        finally:
            os.umask(old)
        os.chmod(self.path, 0o600)
        self.inode = os.lstat(self.path).st_ino
        listener.listen(64)
        listener.settimeout(TICK)
        self.listener = listener
        return self

    def serve(self):
        try:
            while not self.done():
                try:
                    conn, _address = self.listener.accept()
                except socket.timeout:
                    continue
                except OSError:
                    break
                with self.lock:
                    self.active += 1
                    self.last = time.monotonic()
                threading.Thread(target=self.worker, args=(conn,), daemon=True).start()
        finally:
            self.close()

    def done(self):
        with self.lock:
            if self.active == 0 and time.monotonic() - self.last > self.idle:
                return True
        return self.run_pid is not None and not running(self.run_pid, self.run_start)

    def close(self):
        if self.listener is not None:
            self.listener.close()
            try:
                if os.lstat(self.path).st_ino == self.inode:
                    os.unlink(self.path)
                    os.unlink(self.path + ".lock")  # the workers' lock of the keeper's start (empty)
            except OSError:
                pass
        with self.lock:
            kept, self.kept = self.kept, {}
        for upstreams in kept.values():
            for upstream in upstreams:
                upstream.close()

    def worker(self, conn):
        try:
            if peer_uid(conn) != self.owner:
                with self.lock:
                    self.counts["refused"] += 1
                return
            self.session(conn)
        except (OSError, ValueError, EOFError, Faulted):
            pass
        finally:
            conn.close()
            with self.lock:
                self.active -= 1
                self.last = time.monotonic()

    def session(self, conn):
        down = Stream(conn)
        want = json.loads(down.line())
        if want.get("op") == "status":
            with self.lock:
                status = dict(self.counts, idle=sum(len(v) for v in self.kept.values()), pid=os.getpid())
            conn.sendall(json.dumps(status).encode() + b"\n")
            return
        key = json.dumps([want[name] for name in ("key", "scheme", "host", "port", "verify", "cafile", "capath")])
        upstream = self.lend(key)
        if upstream is None:
            try:
                upstream = Upstream(key, open_upstream(want))
            except (OSError, ValueError) as error:
                conn.sendall(json.dumps(dict(failure(error), ok=False)).encode() + b"\n")
                return
            with self.lock:
                self.counts["opened"] += 1
        conn.sendall(b'{"ok": true}\n')
        self.relay(down, conn, upstream, want)

    def lend(self, key):
        while True:
            with self.lock:
                idle = self.kept.get(key) or []
                upstream = idle.pop() if idle else None
                if upstream is not None:
                    self.counts["lent"] += 1
            if upstream is None or upstream.alive():
                return upstream
            upstream.close()

    def relay(self, down, conn, upstream, want):
        """Each request of the worker to the server and its answer back, until the worker closes at a boundary."""
        keep = False
        try:
            while True:
                if not down.buffer:
                    try:
                        down.fill()
                    except EOFError:
                        keep = True  # the worker closed between exchanges: the connection is clean
                        return
                if down.buffer.startswith(DISCARD):
                    keep = False  # the worker's Client saw a fault: whatever the last exchange said
                    return
                if not upstream.alive():
                    # the server closed it while it was idle (as urllib3 finds before it reuses a connection):
                    # nothing of the request was sent, so it goes on a new connection
                    upstream.close()
                    upstream = Upstream(upstream.key, open_upstream(want))
                    with self.lock:
                        self.counts["opened"] += 1
                upstream.sock.settimeout(float(want["timeout"]) + 5.0)
                keep = self.exchange(down, conn, upstream)
                if not keep:
                    return
        except (OSError, ValueError, EOFError, Faulted):
            keep = False
        finally:
            if keep and not upstream.stream.buffer:
                with self.lock:
                    self.kept.setdefault(upstream.key, []).append(upstream)
            else:
                with self.lock:
                    self.counts["discarded"] += 1
                upstream.close()

    def exchange(self, down, conn, upstream):
        """One request and its answer; whether the connection may serve another."""
        request = down.head()
        line, fields = headers(request)
        method = line.split(" ", 1)[0].upper()
        upstream.sock.sendall(request)
        relay_body(down, upstream.sock, fields)
        awaiting(upstream, conn)
        while True:
            head = upstream.stream.head()
            status_line, answer = headers(head)
            version, _sp, rest = status_line.partition(" ")
            status = int(rest[:3])
            conn.sendall(head)
            if 100 <= status < 200 and status != 101:
                continue
            break
        close = "close" in answer.get("connection", "").lower() or version.upper() == "HTTP/1.0" or status == 101
        if method != "HEAD" and status not in NO_BODY:
            framed = "content-length" in answer or "chunked" in answer.get("transfer-encoding", "").lower()
            relay_body(upstream.stream, conn, answer, until_close=not framed)
        return not close


def main(argv):
    directory, name, run_pid, run_start, idle = argv[1:6]
    keeper = Keeper(os.path.join(directory, name), int(run_pid), None if run_start == "-" else run_start, float(idle))
    try:
        keeper.bind()
    except OSError:
        return 1  # another keeper of this run was quicker
    keeper.serve()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
