"""Real PgBouncers on the data plane: one Debian ``pgbouncer`` process per bouncer of a branch (world/bouncers.py).

Where ``pgbouncer`` is installed (``make dataplane`` installs it with the database servers), a bouncer the API makes
on a PostgreSQL branch whose database is on the data plane is a PgBouncer in front of that database, on a free port
of 127.0.0.1, speaking TLS to its clients with the emulator's certificate and to PostgreSQL. It authenticates a
client with SCRAM against the role's verifier (``auth_query`` as the superuser, whose password the emulator sets when
it starts the first bouncer) and logs the client in to PostgreSQL as itself with the keys of that exchange (SCRAM
pass-through): the emulator never sees a secret. A completed resize rewrites its configuration (``pool_mode``,
``default_pool_size``, ``max_client_conn``) and reloads it; a deleted bouncer's process stops, and so do those of a
world when the next world starts one, and every one when the emulator's process ends (the kernel's parent-death
signal: also when it is killed).

The platform reaches a dedicated bouncer with the role's user name and ``|<bouncer>``: that suffix is the platform's
routing, which a lone PgBouncer does not read, so here a role logs in with its own user name, on the bouncer's port
(``GET /_emulator/bouncers`` names it).
"""

import atexit
import os
import pwd
import secrets
import shutil
import signal
import socket
import subprocess
import time

CANDIDATES = ("/usr/sbin/pgbouncer", "/usr/bin/pgbouncer")
SETTINGS = ("pool_mode", "default_pool_size", "max_client_conn")
_running: dict[str, "PgBouncer"] = {}
_owners: dict[str, object] = {}  # bouncer id -> the world it belongs to


def binary() -> str | None:
    """The pgbouncer executable, or None when it is not installed."""
    return next((path for path in CANDIDATES if os.access(path, os.X_OK)), shutil.which("pgbouncer"))


def _die_with_the_emulator() -> None:
    """In the child before pgbouncer runs (after the switch to the postgres user): the kernel kills it when the
    emulator's process ends, however it ends (PR_SET_PDEATHSIG), so no PgBouncer outlives its emulator."""
    import ctypes

    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class PgBouncer:
    """One pgbouncer process in front of one database of the data plane's PostgreSQL."""

    def __init__(self, data, key: str, database: str, settings: dict):
        self.data = data
        self.key = key
        self.database = database
        self.directory = os.path.join(data.config["directory"], "bouncers", key)
        self.port = _free_port()
        self.process = None
        self.settings = dict(settings)

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def _owner(self) -> dict:
        """pgbouncer refuses to run as root: as root it runs as the postgres OS user, which owns its files."""
        if os.geteuid() != 0:
            return {}
        account = pwd.getpwnam("postgres")
        return dict(user=account.pw_uid, group=account.pw_gid, extra_groups=[])

    def _write(self, owner: dict) -> str:
        os.makedirs(self.directory, exist_ok=True)
        tls = self.data.config.get("tls") or {}
        files = {}
        for name in ("cert", "key"):
            if tls.get(name):
                files[name] = os.path.join(self.directory, f"client.{name}")
                shutil.copyfile(tls[name], files[name])
        pg = self.data.postgres
        lines = [
            "[databases]",
            f"{self.database} = host={pg['host']} port={pg['port']} dbname={self.database}",
            "[pgbouncer]",
            "listen_addr = 127.0.0.1",
            f"listen_port = {self.port}",
            "unix_socket_dir =",
            f"logfile = {os.path.join(self.directory, 'pgbouncer.log')}",
            f"pidfile = {os.path.join(self.directory, 'pgbouncer.pid')}",
            "auth_type = scram-sha-256",
            f"auth_file = {os.path.join(self.directory, 'users.txt')}",
            f"auth_user = {pg['user']}",
            "auth_query = SELECT usename, passwd FROM pg_shadow WHERE usename = $1",
            "server_tls_sslmode = require",
            "ignore_startup_parameters = extra_float_digits,options",
        ]
        if files:
            lines += ["client_tls_sslmode = require", f"client_tls_cert_file = {files['cert']}",
                      f"client_tls_key_file = {files['key']}"]
        lines += [f"{name} = {value}" for name, value in sorted(self.settings.items()) if name in SETTINGS]
        path = os.path.join(self.directory, "pgbouncer.ini")
        with open(path, "w", encoding="utf-8") as handle:
            handle.write("\n".join(lines) + "\n")
        with open(os.path.join(self.directory, "users.txt"), "w", encoding="utf-8") as handle:
            handle.write(f'"{pg["user"]}" "{self.data.bouncer_secret}"\n')
        for name in os.listdir(self.directory) + [""]:
            target = os.path.join(self.directory, name)
            os.chmod(target, 0o700 if os.path.isdir(target) else 0o600)
            if owner:
                os.chown(target, owner["user"], owner["group"])
        return path

    def start(self) -> None:
        owner = self._owner()
        path = self._write(owner)
        log = os.path.join(self.directory, "pgbouncer.out")
        with open(log, "wb") as out:
            self.process = subprocess.Popen(  # pylint: disable=consider-using-with,subprocess-popen-preexec-fn
                [binary(), path], stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
                preexec_fn=_die_with_the_emulator, **owner)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                with open(log, encoding="utf-8", errors="replace") as handle:
                    raise RuntimeError(f"pgbouncer exited: {handle.read()[-500:]}")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return
            except OSError:
                time.sleep(0.02)
        raise RuntimeError("pgbouncer did not listen within 20 seconds")

    def reconfigure(self, settings: dict) -> None:
        """New settings (a completed resize): the file rewritten, the process told to reload it (SIGHUP)."""
        if settings == self.settings:
            return
        self.settings = dict(settings)
        self._write(self._owner())
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGHUP)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)  # PgBouncer 1.18: immediate shutdown
            try:
                self.process.wait(5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)
        self.process = None
        shutil.rmtree(self.directory, ignore_errors=True)


def ensure(data, key: str, database: str, settings: dict, owner=None) -> PgBouncer | None:
    """The PgBouncer of a bouncer (key: its id) of the world owner, started when missing, with these settings; None
    without pgbouncer. Those of another world (a reset made a new one) stop."""
    if binary() is None:
        return None
    for other in [k for k, world in _owners.items() if world is not owner]:
        stop(other)
    found = _running.get(key)
    if found is not None:
        found.reconfigure(settings)
        return found
    if not getattr(data, "bouncer_secret", None):
        from psycopg import sql

        data.bouncer_secret = secrets.token_urlsafe(24)  # the superuser's, for auth_query over TCP and TLS
        data.pg(sql.SQL("ALTER ROLE {} PASSWORD {}").format(sql.Identifier(data.postgres["user"]),
                                                            sql.Literal(data.bouncer_secret)))
    made = PgBouncer(data, key, database, settings)
    made.start()
    _running[key], _owners[key] = made, owner
    return made


def stop(key: str) -> None:
    _owners.pop(key, None)
    found = _running.pop(key, None)
    if found is not None:
        found.stop()


def stop_all() -> None:
    for key in list(_running):
        stop(key)


def running(key: str) -> PgBouncer | None:
    return _running.get(key)


def addresses() -> dict[str, str]:
    """Bouncer id -> the address of its PgBouncer."""
    return {key: found.address for key, found in _running.items()}


atexit.register(stop_all)
