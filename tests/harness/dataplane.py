# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The emulator's data plane: a throwaway MariaDB and PostgreSQL in a temp dir, on free ports on 127.0.0.1.

Both require TLS with a certificate of the emulator's CA (valid for 127.0.0.1 and localhost). ``start()``
writes ``dataplane.json`` (addresses, the administrative logins over the servers' Unix sockets, the CA file, the
directory, and the clients the emulator's backups run: mariadb-dump, mariadb, pg_dump, pg_restore)
for ``python -m emulator --dataplane FILE``; ``stop()`` stops the servers by their process ids and removes
the directory. A reaper process stops them too when the process that started them dies without stop()
(it waits on a pipe that closes with that process), and atexit calls stop(). Standard library only: the
ansible virtualenvs and the emulator's import the harness.

Debian's packages (make dataplane: mariadb-server, postgresql): MARIADB_BIN and POSTGRES_BIN name other
directories of the binaries. initdb refuses root: PostgreSQL runs as the ``postgres`` OS user then, and that user
must enter every directory above its files. So as root the directory is made in the first of the temp dir (TMPDIR),
/tmp and /var/tmp that the postgres user can enter (never in the project, which may sit in root's home, mode 0700),
open to that user's group only; initdb runs below it too.
"""

from __future__ import annotations

import atexit
import glob
import json
import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

MARIADB_BIN = os.environ.get("MARIADB_BIN", "")
POSTGRES_BIN = os.environ.get("POSTGRES_BIN", "")
HOST = "127.0.0.1"

# Written with the emulator's Python (trustme): a CA, and a certificate for 127.0.0.1 and localhost both as
# server.pem (key and chain, the emulator's HTTPS) and as server.crt / server.key (the database servers).
CERTIFICATES = """
import sys, trustme
ca = trustme.CA()
cert = ca.issue_cert("127.0.0.1", "localhost")
d = sys.argv[1]
ca.cert_pem.write_to_path(d + "/ca.pem")
cert.private_key_and_cert_chain_pem.write_to_path(d + "/server.pem")
cert.private_key_pem.write_to_path(d + "/server.key")
with open(d + "/server.crt", "wb") as out:
    out.write(b"".join(blob.bytes() for blob in cert.cert_chain_pems))
"""

# The reaper: waits until its stdin closes (the harness process ended), then stops the servers and removes
# the directory. argv: directory, then signal:pid pairs.
REAPER = """
import os, shutil, signal, sys, time
signal.signal(signal.SIGINT, signal.SIG_IGN)
signal.signal(signal.SIGTERM, signal.SIG_IGN)
sys.stdin.buffer.read()
pids = []
for item in sys.argv[2:]:
    sig, pid = item.split(":")
    try:
        os.kill(int(pid), int(sig))
        pids.append(int(pid))
    except OSError:
        pass
deadline = time.monotonic() + 10
while pids and time.monotonic() < deadline:
    time.sleep(0.05)
    for pid in list(pids):
        try:
            os.kill(pid, 0)
        except OSError:
            pids.remove(pid)
for pid in pids:
    try:
        os.kill(pid, signal.SIGKILL)
    except OSError:
        pass
time.sleep(0.2)
shutil.rmtree(sys.argv[1], ignore_errors=True)
"""


# Where root's data plane may go besides the temp dir (TMPDIR): the postgres user must be able to enter it.
TEMP_ROOTS = ("/tmp", "/var/tmp")

# Query statistics for the emulator's insights and metrics (tests/emulator/dataplane/insights.py). MariaDB: the
# performance schema with only the statement instruments, each statement kept in events_statements_history_long (a
# ring of STATEMENTS_KEPT) and summed by digest; the init file leaves root (the emulator's own administration, the
# dumps and loads of backups) out of both, so they hold what the branches' passwords ran. PostgreSQL:
# pg_stat_statements, preloaded when the server has it. Together about 0.1 s of MariaDB's start.
STATEMENTS_KEPT = 10000
MARIADB_STATISTICS = ["--performance-schema=ON", "--performance-schema-instrument=%=OFF",
                      "--performance-schema-instrument=statement/%=ON",
                      "--performance-schema-consumer-events-statements-current=ON",
                      "--performance-schema-consumer-events-statements-history-long=ON",
                      "--performance-schema-events-statements-history-long-size=%d" % STATEMENTS_KEPT]
NOT_ROOT = ("INSERT INTO performance_schema.setup_actors (HOST, USER, ROLE, ENABLED, HISTORY) "
            "VALUES ('%', 'root', '%', 'NO', 'NO');\n")


class DataPlaneError(Exception):
    """A server is missing or did not start."""


def enters(path, account):
    """Whether the OS user of account (user, group) can enter path: it and every directory above it searchable.
    Asked of the kernel, as that user (modes, ACLs, mounts)."""
    return subprocess.run(["test", "-x", path], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL, check=False, **account).returncode == 0


def parent_dir(as_postgres):
    """Where a data plane's directory is made: the temp dir; as root, the first of it, /tmp and /var/tmp that the
    postgres user can enter, else a sentence saying what to do."""
    if not as_postgres:
        return tempfile.gettempdir()
    candidates = list(dict.fromkeys([tempfile.gettempdir()] + list(TEMP_ROOTS)))
    for candidate in candidates:
        if os.path.isdir(candidate) and enters(candidate, as_postgres):
            return candidate
    raise DataPlaneError("Run as root, PostgreSQL runs as the postgres OS user, which can enter none of %s: set "
                         "TMPDIR to a directory it can enter (every directory above it searchable by others), or run "
                         "as an ordinary user." % ", ".join(candidates))


def write_certificates(cert_dir, python=None):
    """A fresh CA and a server certificate for 127.0.0.1 and localhost in cert_dir (see CERTIFICATES)."""
    os.makedirs(cert_dir, exist_ok=True)
    done = subprocess.run([python or sys.executable, "-c", CERTIFICATES, cert_dir], capture_output=True, text=True,
                          check=False)
    if done.returncode:
        raise DataPlaneError("Could not write the certificates with %s: %s"
                             % (python or sys.executable, done.stderr[-2000:]))
    return os.path.join(cert_dir, "ca.pem")


def free_port():
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return sock.getsockname()[1]


def find(name, directories):
    for directory in directories:
        path = os.path.join(directory, name)
        if directory and os.access(path, os.X_OK):
            return path
    found = shutil.which(name)
    if found:
        return found
    raise DataPlaneError("No %s found (looked in %s and on PATH): run `make dataplane` (Debian's mariadb-server "
                         "and postgresql) or name the directory in MARIADB_BIN / POSTGRES_BIN."
                         % (name, ", ".join(d for d in directories if d)))


def postgres_bin():
    versions = sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=lambda p: int(p.split("/")[-2]), reverse=True)
    return [POSTGRES_BIN] + versions


def listening(path, process, deadline, what, log):
    """Wait for the server's Unix socket (made once its TCP port is bound) while the process runs."""
    while time.monotonic() < deadline:
        if process.poll() is not None:
            break
        if os.path.exists(path):
            return
        time.sleep(0.03)
    raise DataPlaneError("%s did not start (exit %s); the end of its log %s:\n%s" % (
        what, process.poll(), log, tail(log)))


def tail(path):
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read()[-3000:]
    except OSError:
        return ""


def run(command, log, **kwargs):
    with open(log, "ab") as out:
        return subprocess.run(command, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, check=False,
                              **kwargs).returncode


def cache_dir():
    """Where initialised data directories are kept (DATAPLANE_CACHE, else build/dataplane of the project)."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    return os.environ.get("DATAPLANE_CACHE") or os.path.join(root, "build", "dataplane")


def initialised(install_db, initdb, mariadbd, as_postgres, scratch, attempts=3):
    """A directory with freshly initialised data directories (mariadb/, postgres/) for these binaries: made once
    (mariadb-install-db and initdb side by side, 1-3 s) and copied by every start. The bootstrap of MariaDB crashed
    once in a few dozen runs on a busy machine: it is tried again."""
    key = "-".join("%d" % os.stat(path).st_mtime_ns for path in (mariadbd, initdb))
    target = os.path.join(cache_dir(), "initialised-" + key)
    if os.path.isdir(target):
        return target
    os.makedirs(cache_dir(), exist_ok=True)
    work = tempfile.mkdtemp(prefix="initialising-", dir=cache_dir())
    log = os.path.join(scratch, "initialise.log")
    user = "--user=" + pwd.getpwuid(os.geteuid()).pw_name
    # initdb writes below the data plane's directory, which its user can enter (the cache may be in root's home)
    pg_parent = tempfile.mkdtemp(prefix="initdb-", dir=scratch)
    if as_postgres:
        os.chown(pg_parent, as_postgres["user"], as_postgres["group"])
    results = {}

    def mariadb():
        for _attempt in range(attempts):
            shutil.rmtree(os.path.join(work, "mariadb"), ignore_errors=True)
            results["mariadb"] = run([install_db, "--no-defaults", "--auth-root-authentication-method=normal",
                                      "--skip-test-db", user, "--datadir=" + os.path.join(work, "mariadb")], log)
            if not results["mariadb"]:
                return

    def postgres():
        results["postgres"] = run([initdb, "-N", "-A", "trust", "-U", "postgres", "-E", "UTF8", "--locale=C", "-D",
                                   os.path.join(pg_parent, "data")], log, cwd=pg_parent, **as_postgres)

    jobs = [threading.Thread(target=mariadb), threading.Thread(target=postgres)]
    for job in jobs:
        job.start()
    for job in jobs:
        job.join()
    if results.get("mariadb") or results.get("postgres"):
        shutil.rmtree(work, ignore_errors=True)
        shutil.rmtree(pg_parent, ignore_errors=True)
        raise DataPlaneError("%s failed; its log %s:\n%s" % (
            "mariadb-install-db" if results.get("mariadb") else "initdb", log, tail(log)))
    shutil.move(os.path.join(pg_parent, "data"), os.path.join(work, "postgres"))
    os.rmdir(pg_parent)
    try:
        os.rename(work, target)
    except OSError:  # another start made it meanwhile
        shutil.rmtree(work, ignore_errors=True)
    return target


class DataPlane:
    """A MariaDB and a PostgreSQL server in a temp dir, with TLS from cert_dir's CA (write_certificates)."""

    def __init__(self, cert_dir, directory=None):
        self.cert_dir = cert_dir
        self.directory = directory
        self.mariadb = None
        self.postgres = None
        self.reaper = None
        self.config = None
        self.config_path = None
        self.timings = {}

    @property
    def ca_file(self):
        return os.path.join(self.cert_dir, "ca.pem")

    def start(self, timeout=120):
        started = time.monotonic()
        mariadbd = find("mariadbd", [MARIADB_BIN, "/usr/sbin"])
        install_db = find("mariadb-install-db", [MARIADB_BIN, "/usr/bin"])
        initdb = find("initdb", postgres_bin())
        postgres = os.path.join(os.path.dirname(initdb), "postgres")
        as_postgres = {}
        if os.geteuid() == 0:
            account = pwd.getpwnam("postgres")
            as_postgres = dict(user=account.pw_uid, group=account.pw_gid, extra_groups=[])
        self.directory = self.directory or tempfile.mkdtemp(prefix="dataplane-", dir=parent_dir(as_postgres))
        os.chmod(self.directory, 0o700)
        if as_postgres:  # the postgres user (PostgreSQL, PgBouncer) goes through it: its group, and nobody else
            os.chown(self.directory, -1, as_postgres["group"])
            os.chmod(self.directory, 0o710)
            if not enters(self.directory, as_postgres):  # a directory given that sits where it cannot go
                raise DataPlaneError("Run as root, PostgreSQL runs as the postgres OS user, which cannot enter %s: "
                                     "make a data plane in a directory it can enter." % self.directory)
        my_dir, pg_dir = os.path.join(self.directory, "mariadb"), os.path.join(self.directory, "postgres")
        my_log, pg_log = os.path.join(self.directory, "mariadb.log"), os.path.join(self.directory, "postgres.log")
        try:
            template = initialised(install_db, initdb, mariadbd, as_postgres, self.directory)
        except DataPlaneError:
            self.stop()  # no directory left behind (the error holds the end of the log)
            raise
        os.makedirs(my_dir)
        os.makedirs(pg_dir, mode=0o700)
        shutil.copytree(os.path.join(template, "mariadb"), os.path.join(my_dir, "data"), symlinks=True)
        shutil.copytree(os.path.join(template, "postgres"), os.path.join(pg_dir, "data"), symlinks=True)
        os.chmod(os.path.join(pg_dir, "data"), 0o700)
        if as_postgres:
            for path in [pg_dir] + [os.path.join(top, name) for top, dirs, files in os.walk(pg_dir)
                                    for name in dirs + files]:
                os.chown(path, as_postgres["user"], as_postgres["group"])
        self.timings["initialise"] = round(time.monotonic() - started, 2)
        # PostgreSQL reads its key only when its user owns it, mode 0600
        for name in ("server.crt", "server.key"):
            target = os.path.join(pg_dir, name)
            shutil.copyfile(os.path.join(self.cert_dir, name), target)
            os.chmod(target, 0o600)
            if as_postgres:
                os.chown(target, as_postgres["user"], as_postgres["group"])
        with open(os.path.join(pg_dir, "data", "pg_hba.conf"), "w", encoding="utf-8") as hba:
            hba.write("# the emulator's administrative login over the socket; every other login: TLS and a password\n"
                      "local all postgres trust\n"
                      "hostssl all all 127.0.0.1/32 scram-sha-256\n"
                      "host all all 0.0.0.0/0 reject\n")
        my_socket = os.path.join(my_dir, "mysqld.sock")
        for attempt in range(3):  # a port another process took between free_port() and the server's bind: again
            my_port, pg_port = free_port(), free_port()
            self._launch(mariadbd, postgres, (my_dir, my_port, my_socket, my_log), (pg_dir, pg_port, pg_log),
                         as_postgres)
            deadline = time.monotonic() + timeout
            try:
                # each server makes its Unix socket (in this directory) once its TCP port is bound
                listening(my_socket, self.mariadb, deadline, "mariadbd", my_log)
                listening(os.path.join(pg_dir, ".s.PGSQL.%d" % pg_port), self.postgres, deadline, "postgres", pg_log)
                break
            except DataPlaneError:
                if attempt == 2 or "in use" not in tail(my_log) + tail(pg_log):
                    self.stop()
                    raise
                self._stop_servers()
                for log in (my_log, pg_log):
                    os.rename(log, "%s.%d" % (log, attempt))
        self.config = {
            "ca_file": self.ca_file,
            # the server certificate (for 127.0.0.1 and localhost) the emulator's MySQL edge shows its clients
            "tls": {"cert": os.path.join(self.cert_dir, "server.crt"), "key": os.path.join(self.cert_dir, "server.key")},
            "mysql": {"host": HOST, "port": my_port, "socket": my_socket, "user": "root", "pid": self.mariadb.pid},
            "postgres": {"host": HOST, "port": pg_port, "socket_dir": pg_dir, "user": "postgres",
                         "pid": self.postgres.pid},
            "directory": self.directory,  # the emulator writes its backups' dumps below it
            # the clients of backups and restores, of the servers' own versions
            "clients": {"mysqldump": find("mariadb-dump", [MARIADB_BIN, "/usr/bin"]),
                        "mysql": find("mariadb", [MARIADB_BIN, "/usr/bin"]),
                        "pg_dump": find("pg_dump", [os.path.dirname(initdb)]),
                        "pg_restore": find("pg_restore", [os.path.dirname(initdb)])},
        }
        self.config_path = os.path.join(self.directory, "dataplane.json")
        with open(self.config_path, "w", encoding="utf-8") as handle:
            json.dump(self.config, handle, indent=2)
        self.timings["start"] = round(time.monotonic() - started, 2)
        return self

    def _launch(self, mariadbd, postgres, mariadb_at, postgres_at, as_postgres):
        """Both servers, in sessions of their own (a terminal's ^C is for the harness), and the reaper."""
        my_dir, my_port, my_socket, my_log = mariadb_at
        pg_dir, pg_port, pg_log = postgres_at
        new_session = dict(start_new_session=True, stdin=subprocess.DEVNULL, stderr=subprocess.STDOUT)
        init_file = os.path.join(my_dir, "init.sql")
        with open(init_file, "w", encoding="utf-8") as handle:
            handle.write(NOT_ROOT)
        preload = []
        if os.path.exists(os.path.join(os.path.dirname(os.path.dirname(postgres)), "lib", "pg_stat_statements.so")):
            preload = ["-c", "shared_preload_libraries=pg_stat_statements"]
        with open(my_log, "ab") as out:
            self.mariadb = subprocess.Popen(  # pylint: disable=consider-using-with
                [mariadbd, "--no-defaults", "--datadir=" + os.path.join(my_dir, "data"),
                 "--user=" + pwd.getpwuid(os.geteuid()).pw_name, "--port=%d" % my_port, "--bind-address=" + HOST,
                 "--socket=" + my_socket, "--pid-file=" + os.path.join(my_dir, "mariadb.pid"),
                 "--skip-name-resolve", "--skip-log-bin", *MARIADB_STATISTICS, "--init-file=" + init_file,
                 "--innodb-buffer-pool-size=32M", "--innodb-log-file-size=16M", "--innodb-flush-log-at-trx-commit=0",
                 "--innodb-doublewrite=0", "--character-set-server=utf8mb4",
                 "--ssl-ca=" + self.ca_file, "--ssl-cert=" + os.path.join(self.cert_dir, "server.crt"),
                 "--ssl-key=" + os.path.join(self.cert_dir, "server.key"), "--max-connections=500"],
                stdout=out, **new_session)
        with open(pg_log, "ab") as out:
            self.postgres = subprocess.Popen(  # pylint: disable=consider-using-with
                [postgres, "-D", os.path.join(pg_dir, "data"), "-c", "listen_addresses=" + HOST, "-c",
                 "port=%d" % pg_port, "-c", "unix_socket_directories=" + pg_dir, "-c", "fsync=off", "-c",
                 "synchronous_commit=off", "-c", "full_page_writes=off", "-c", "ssl=on", "-c",
                 "ssl_cert_file=" + os.path.join(pg_dir, "server.crt"), "-c",
                 "ssl_key_file=" + os.path.join(pg_dir, "server.key"), "-c", "max_connections=200",
                 "-c", "shared_buffers=16MB", "-c", "password_encryption=scram-sha-256", *preload],
                stdout=out, cwd=pg_dir, **new_session, **as_postgres)
        self._start_reaper()
        atexit.register(self.stop)

    def _signal_servers(self):
        """Stop both servers by their process ids (mariadbd: SIGTERM, postgres: SIGINT, a fast shutdown), killing
        one that has not stopped in 15 s."""
        for process, sig in ((self.mariadb, signal.SIGTERM), (self.postgres, signal.SIGINT)):
            if process is not None and process.poll() is None:
                process.send_signal(sig)
        for process in (self.mariadb, self.postgres):
            if process is not None:
                try:
                    process.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()

    def _stop_servers(self):
        """Stop both servers and the reaper, keeping the directory (a launch tried again)."""
        self._signal_servers()
        if self.reaper is not None and self.reaper.poll() is None:
            self.reaper.kill()  # without closing its pipe first: that would remove the directory
            self.reaper.wait()
        self.mariadb = self.postgres = self.reaper = None

    def describe(self):
        """One line for people: where the servers listen, the CA, how long they took to start."""
        return "data plane: MariaDB on %s:%s, PostgreSQL on %s:%s, TLS with the CA %s (started in %.1f s)" % (
            self.config["mysql"]["host"], self.config["mysql"]["port"], self.config["postgres"]["host"],
            self.config["postgres"]["port"], self.ca_file, self.timings["start"])

    def _start_reaper(self):
        pids = ["%d:%d" % (signal.SIGTERM, self.mariadb.pid), "%d:%d" % (signal.SIGINT, self.postgres.pid)]
        self.reaper = subprocess.Popen(  # pylint: disable=consider-using-with
            [sys.executable, "-c", REAPER, self.directory] + pids, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL, start_new_session=True)

    def stop(self):
        """Stop both servers by their process ids, then the reaper, which removes the directory."""
        self._signal_servers()
        if self.reaper is not None and self.reaper.poll() is None:
            self.reaper.stdin.close()  # nothing left to stop: it removes the directory
            try:
                self.reaper.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.reaper.kill()
        elif self.directory:
            shutil.rmtree(self.directory, ignore_errors=True)
        self.mariadb = self.postgres = self.reaper = None
        atexit.unregister(self.stop)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc_info):
        self.stop()
