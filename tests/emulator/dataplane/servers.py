"""The data plane: real MariaDB and PostgreSQL servers behind the emulated API.

The test harness (tests/harness/dataplane.py) starts both servers with TLS from the emulator's CA and
names them in a JSON file: ``python -m emulator --dataplane FILE`` or the environment variable
``EMULATOR_DATAPLANE``. Without one the emulator has no data plane: its credentials log in nowhere.

How the platform maps onto the servers:

- a MySQL database's branch is a schema on MariaDB, ``<database>__<branch>`` (hashed when longer than 64
  characters), made when first needed (a password, a login, DDL, a deploy into it, a backup, a child of a made
  branch) from its template (the seed schema or an empty one, made once per emulator process) or, for a child of
  a made branch, from its parent's tables (``CREATE TABLE ... LIKE``); dropped with the branch. The server holds
  every branch's schema: schema reads, lint and deploy requests read its catalogs (schema.py);
- a password is a MariaDB user ``REQUIRE SSL`` with grants on its branch's schema after its role (reader:
  SELECT; writer: INSERT, UPDATE, DELETE; readwriter: both; admin: ALL, but on a branch with safe migrations the
  data only, no DDL, granted again when safe migrations are turned on or off); renew re-passwords it, delete drops
  it; once the emulator's clock passes its expiry the account is locked (checked when the world goes live and
  when the clock is advanced);
- a PostgreSQL database's branch is a database on PostgreSQL (``<database>__<branch>``, the roles'
  ``database_name``); a role is a real role ``LOGIN PASSWORD`` with its ``inherited_roles`` granted (those the
  server has), reset re-passwords it, delete drops it (with a successor: ``REASSIGN OWNED BY`` first), an
  expired role gets ``NOLOGIN``;
- a backup is a real dump, written to ``backups/`` of the servers' directory when the API takes it (``mysqldump
  --single-transaction`` of the branch's schema, ``pg_dump -Fc`` of its database; its ``size`` is the dump's),
  removed with the backup, its branch, or the world; a restore loads it into the new branch (``mysql``,
  ``pg_restore``). The seed's backups, taken before the servers hold the world, get a dump of the backup's schema
  (no rows: the servers held none) when a restore needs one.

A reset costs the servers nothing until the world changes or its seeded credentials are read
(GET /_emulator/world; ``DataPlaneHooks``); the template schemas stay on MariaDB across resets (a wipe keeps
them). Tests log in with real clients (PyMySQL, psycopg) with the connection details the API returns and the
CA file the world names; the emulator logs in for no one.

``DataPlaneHooks`` is mixed into state.World: every method runs under its lock.
"""

import hashlib
import json
import os
import shutil
import subprocess
import tempfile
import threading


MYSQL_GRANTS = {
    "reader": "SELECT",
    "writer": "INSERT, UPDATE, DELETE",
    "readwriter": "SELECT, INSERT, UPDATE, DELETE",
    "admin": "ALL PRIVILEGES",
}
# an admin's grant on a branch with safe migrations: the data, never the schema (direct DDL is refused there, as on
# the platform; the change goes through a deploy request)
SAFE_MIGRATIONS_ADMIN = "SELECT, INSERT, UPDATE, DELETE"
SYSTEM_SCHEMAS = ("mysql", "information_schema", "performance_schema", "sys")
SYSTEM_USERS = ("root", "mysql", "mariadb.sys")
ENVIRONMENT = "EMULATOR_DATAPLANE"
_loaded: dict[str, "DataPlane"] = {}


def current() -> "DataPlane | None":
    """The data plane the environment names (EMULATOR_DATAPLANE: the harness's dataplane.json), one per file."""
    path = os.environ.get(ENVIRONMENT)
    if not path:
        return None
    if path not in _loaded:
        with open(path, encoding="utf-8") as handle:
            _loaded[path] = DataPlane(json.load(handle))
    return _loaded[path]


def server_name(database: str, branch: str, limit: int = 63) -> str:
    """The schema (MariaDB, at most 64 characters) or database (PostgreSQL, 63) of a branch."""
    name = f"{database}__{branch}"
    if len(name) <= limit:
        return name
    digest = hashlib.sha256(name.encode()).hexdigest()[:12]
    return f"{name[:limit - 14]}__{digest}"


def mysql_privileges(role: str, safe_migrations: bool = False) -> str:
    """The privileges of a password's role on its branch's schema (an admin changes no schema under safe migrations)."""
    if role == "admin" and safe_migrations:
        return SAFE_MIGRATIONS_ADMIN
    return MYSQL_GRANTS.get(role, "SELECT")


class DataPlane:
    """Administrative access to both servers (over their Unix sockets)."""

    def __init__(self, config: dict):
        self.config = config
        self.ca_file = config["ca_file"]
        self.mysql = config["mysql"]
        self.postgres = config["postgres"]
        self.lock = threading.RLock()
        self._my = None
        self._pg = None
        self.reused: set[str] = set()  # databases the last wipe kept
        self.restored: set[str] = set()  # databases a restore loaded (their tables are the superuser's): not kept
        self.owner = None  # the world the servers hold
        self.templates: set[str] = set()  # template schemas, kept by a wipe
        self.described: dict[str, dict] = {}  # descriptions of schemas that never change (templates, backups)
        self.latest = None  # the world made last: the one the MySQL edge's logins go to
        self.hba = None  # (path, lines) of PostgreSQL's pg_hba.conf as the harness wrote it (set_hba)
        self.hba_lines: list[str] = []  # the IP restrictions' lines set_hba gave it
        self.edge = None
        if "tls" in config:
            from .edge import MySQLEdge

            self.edge = MySQLEdge((self.mysql["host"], self.mysql["port"]), config["tls"]["cert"],
                                  config["tls"]["key"], self.ca_file, self._route)

    def _route(self, username: str, database: str | None) -> str | None:
        world = self.latest
        return world.data_route(username, database) if world is not None else None

    def describe(self) -> dict:
        servers = {"mysql": f"{self.mysql['host']}:{self.mysql['port']}",
                   "postgres": f"{self.postgres['host']}:{self.postgres['port']}"}
        if self.edge is not None:
            servers["mysql_edge"] = self.edge.address
        return {"ca_file": self.ca_file, "dataplane": servers}

    @property
    def mysql_host(self) -> str:
        """Where passwords connect: the MySQL edge (the server itself when there is none)."""
        if self.edge is not None:
            return self.edge.address
        return f"{self.mysql['host']}:{self.mysql['port']}"

    @property
    def postgres_host(self) -> str:
        return f"{self.postgres['host']}:{self.postgres['port']}"

    # ------------------------------------------------------------ administrative connections

    def my(self, statement: str, args=None) -> list:
        """Run one statement as MariaDB's root (over the socket); answer its rows."""
        import pymysql

        with self.lock:
            for attempt in (1, 2):
                if self._my is None:
                    self._my = pymysql.connect(unix_socket=self.mysql["socket"], user=self.mysql["user"],
                                               autocommit=True)
                try:
                    with self._my.cursor() as cursor:
                        cursor.execute(statement, args)
                        return list(cursor.fetchall())
                except pymysql.err.OperationalError as error:
                    if attempt == 2 or error.args[0] not in (2006, 2013):  # gone away, lost: reconnect once
                        raise
                    self._my = None
        return []

    def pg(self, statement, args=None, database: str | None = None) -> list:
        """Run one statement as PostgreSQL's superuser (over the socket), in database (default postgres)."""
        import psycopg

        with self.lock:
            if database is not None:
                with psycopg.connect(**self._pg_admin(database)) as connection:
                    cursor = connection.execute(statement, args)
                    return cursor.fetchall() if cursor.description else []
            if self._pg is None or self._pg.closed:
                self._pg = psycopg.connect(**self._pg_admin("postgres"))
            cursor = self._pg.execute(statement, args)
            return cursor.fetchall() if cursor.description else []

    def _pg_admin(self, database: str) -> dict:
        return dict(host=self.postgres["socket_dir"], port=self.postgres["port"], user=self.postgres["user"],
                    dbname=database, autocommit=True)

    def wipe(self, keep_databases=()) -> None:
        """Every schema, user and role the emulator made goes (a world going live). PostgreSQL databases named
        in keep_databases stay, emptied of what the roles owned (``reused``): making one costs 0.1-0.2 s."""
        self.remove_dumps()
        self.set_hba([])
        keep_databases, self.restored = set(keep_databases) - self.restored, set()
        schemas = [row[0] for row in self.my("SELECT schema_name FROM information_schema.schemata")
                   if row[0] not in SYSTEM_SCHEMAS and row[0] not in self.templates]
        self.described = {name: kept for name, kept in self.described.items() if name in self.templates}
        for schema in schemas:
            self.my(f"DROP DATABASE `{schema}`")
        users = [(user, host) for user, host in self.my("SELECT user, host FROM mysql.user")
                 if user not in SYSTEM_USERS]
        if users:
            self.my("DROP USER " + ", ".join(["%s@%s"] * len(users)), [part for pair in users for part in pair])
        from psycopg import sql

        roles = [row[0] for row in self.pg("SELECT rolname FROM pg_roles WHERE rolname !~ '^pg_' AND rolname <> %s",
                                           [self.postgres["user"]])]
        owned = sql.SQL("DROP OWNED BY {}").format(sql.SQL(", ").join(map(sql.Identifier, roles)))
        self.reused = set()
        for (name,) in self.pg("SELECT datname FROM pg_database WHERE datname NOT IN "
                               "('postgres', 'template0', 'template1')"):
            if name in keep_databases:
                if roles:
                    self.pg(owned, database=name)
                self.pg(sql.SQL("ALTER DATABASE {} RESET ALL").format(sql.Identifier(name)))  # parameters set
                self.reused.add(name)
            else:
                self.pg(sql.SQL("DROP DATABASE {} WITH (FORCE)").format(sql.Identifier(name)))
        if roles:
            self.pg(owned)
            self.pg(sql.SQL("DROP ROLE {}").format(sql.SQL(", ").join(map(sql.Identifier, roles))))

    def set_hba(self, lines: list[str]) -> None:
        """PostgreSQL's pg_hba.conf with lines (IP restrictions) before its first host line, reloaded: returns once
        the server admits logins by the new rules (a new connection's pg_conf_load_time has moved)."""
        import time

        with self.lock:
            if lines == self.hba_lines:
                return
            if self.hba is None:
                path = self.pg("SHOW hba_file")[0][0]
                with open(path, encoding="utf-8") as handle:
                    self.hba = (path, handle.read().splitlines())
            path, base = self.hba
            at = next((i for i, line in enumerate(base) if line.split()[:1] in (["host"], ["hostssl"])), len(base))
            with open(path, "w", encoding="utf-8") as handle:
                handle.write("\n".join(base[:at] + lines + base[at:]) + "\n")
            errors = self.pg("SELECT line_number, error FROM pg_hba_file_rules WHERE error IS NOT NULL")
            if errors:
                raise RuntimeError(f"pg_hba.conf refused: {errors}")
            before = self.pg("SELECT pg_conf_load_time()", database="postgres")[0][0]
            self.pg("SELECT pg_reload_conf()")
            deadline = time.monotonic() + 10
            while self.pg("SELECT pg_conf_load_time()", database="postgres")[0][0] == before:
                if time.monotonic() > deadline:
                    raise RuntimeError("PostgreSQL did not reload pg_hba.conf in 10 seconds")
                time.sleep(0.01)
            self.hba_lines = list(lines)

    # ------------------------------------------------------------ MariaDB: schemas and users

    def drop_schema(self, schema: str) -> None:
        self.my(f"DROP DATABASE IF EXISTS `{schema}`")

    def frozen(self, schema: str, describe) -> dict:
        """The description of a schema that never changes once made (a template, a backup's copy), read once."""
        if schema not in self.described:
            self.described[schema] = describe(self, schema)
        return self.described[schema]

    def template(self, name: str, statements: list[str], run) -> str:
        """A template schema made with the statements, once per emulator process (kept by wipe)."""
        with self.lock:
            if name not in self.templates:
                self.my(f"DROP DATABASE IF EXISTS `{name}`")
                self.my(f"CREATE DATABASE `{name}`")
                run(self, name, statements)
                self.described.pop(name, None)
                self.templates.add(name)
        return name

    def create_user(self, username: str, secret: str, schema: str, role: str, safe_migrations: bool = False) -> None:
        self.my("CREATE USER %s@'%%' IDENTIFIED BY %s REQUIRE SSL", [username, secret])
        self.grant_user(username, schema, mysql_privileges(role, safe_migrations))

    def grant_user(self, username: str, schema: str, privileges: str) -> None:
        """The user's privileges on the schema, these and no others (granted again when safe migrations change)."""
        escaped = schema.replace("\\", "\\\\").replace("_", "\\_").replace("%", "\\%")  # no wildcards
        pattern = escaped.replace("%", "%%")  # the statement below is formatted with arguments
        granted = self.my("SELECT 1 FROM mysql.db WHERE user = %s AND host = '%%' AND db = %s", [username, escaped])
        if granted:
            self.my(f"REVOKE ALL PRIVILEGES ON `{pattern}`.* FROM %s@'%%'", [username])
        self.my(f"GRANT {privileges} ON `{pattern}`.* TO %s@'%%'", [username])

    def set_user_secret(self, username: str, secret: str) -> None:
        self.my("ALTER USER IF EXISTS %s@'%%' IDENTIFIED BY %s ACCOUNT UNLOCK", [username, secret])

    def lock_user(self, username: str) -> None:
        self.my("ALTER USER IF EXISTS %s@'%%' ACCOUNT LOCK", [username])

    def drop_user(self, username: str) -> None:
        self.my("DROP USER IF EXISTS %s@'%%'", [username])

    # ------------------------------------------------------------ PostgreSQL: databases and roles

    def create_database(self, name: str) -> None:
        from psycopg import sql

        self.pg(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))

    def drop_database(self, name: str) -> None:
        from psycopg import sql

        self.pg(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))

    def create_role(self, name: str, secret: str, inherited: list[str]) -> None:
        from psycopg import sql

        self.pg(sql.SQL("CREATE ROLE {} LOGIN PASSWORD {}").format(sql.Identifier(name), sql.Literal(secret)))
        known = {row[0] for row in self.pg("SELECT rolname FROM pg_roles WHERE rolname = ANY(%s)", [inherited])}
        for granted in [role for role in inherited if role in known]:
            self.pg(sql.SQL("GRANT {} TO {}").format(sql.Identifier(granted), sql.Identifier(name)))

    def set_role_secret(self, name: str, secret: str) -> None:
        from psycopg import sql

        self.pg(sql.SQL("ALTER ROLE {} LOGIN PASSWORD {}").format(sql.Identifier(name), sql.Literal(secret)))

    def lock_role(self, name: str) -> None:
        from psycopg import sql

        self.pg(sql.SQL("ALTER ROLE {} NOLOGIN").format(sql.Identifier(name)))

    def reassign_role(self, name: str, successor: str, database: str) -> None:
        from psycopg import sql

        self.pg(sql.SQL("REASSIGN OWNED BY {} TO {}").format(sql.Identifier(name), sql.Identifier(successor)),
                database=database)

    def drop_role(self, name: str, database: str, successor: str | None = None) -> None:
        from psycopg import sql

        if successor is not None:
            self.reassign_role(name, successor, database)
        self.pg(sql.SQL("DROP OWNED BY {}").format(sql.Identifier(name)), database=database)
        self.pg(sql.SQL("DROP ROLE IF EXISTS {}").format(sql.Identifier(name)))

    # ------------------------------------------------------------ backups: dumps and restores

    def _dumps_top(self) -> str:
        return os.path.join(self.config.get("directory") or os.path.dirname(self.postgres["socket_dir"]), "backups")

    def new_dump(self, backup_id: str, suffix: str) -> str:
        """A new file for a backup's dump, in backups/ of the servers' directory (unique: worlds share the
        servers and draw the same ids)."""
        os.makedirs(self._dumps_top(), exist_ok=True)
        handle, path = tempfile.mkstemp(prefix=f"{backup_id}-", suffix=suffix, dir=self._dumps_top())
        os.close(handle)
        return path

    def remove_dumps(self) -> None:
        """Every dump goes (the servers are emptied: the dumps belong to the world they held)."""
        shutil.rmtree(self._dumps_top(), ignore_errors=True)

    def _client(self, name: str) -> str:
        """A client of the servers (mysqldump, mysql, pg_dump, pg_restore): the one the harness found, of the
        servers' own version, else the one on PATH."""
        found = self.config.get("clients", {}).get(name) or shutil.which(name)
        if not found:
            raise ApiError(503, "unavailable", f"The data plane has no {name}: start it through the test harness")
        return found

    @staticmethod
    def _run(command: list[str], stdin=None) -> None:
        done = subprocess.run(command, stdin=stdin, capture_output=True, check=False)
        if done.returncode:
            raise RuntimeError(f"{os.path.basename(command[0])} exited with {done.returncode}: "
                               f"{done.stderr.decode(errors='replace')[-2000:]}")

    def _my_admin(self) -> list[str]:
        return ["--no-defaults", f"--socket={self.mysql['socket']}", f"--user={self.mysql['user']}",
                "--default-character-set=utf8mb4"]

    def _pg_admin_args(self) -> list[str]:
        return ["-h", self.postgres["socket_dir"], "-p", str(self.postgres["port"]), "-U", self.postgres["user"]]

    def dump_mysql(self, schema: str, path: str) -> int:
        """mysqldump of a schema's tables and rows (one transaction, no CREATE DATABASE / USE: it loads into
        any schema) to path; its size in bytes."""
        self._run([self._client("mysqldump"), *self._my_admin(), "--single-transaction", "--routines",
                   "--triggers", "--hex-blob", f"--result-file={path}", schema])
        return os.path.getsize(path)

    def load_mysql(self, schema: str, path: str) -> None:
        """A dump of dump_mysql loaded into schema (its tables dropped and made again, with their rows)."""
        with open(path, "rb") as dump:
            self._run([self._client("mysql"), *self._my_admin(), "--binary-mode", schema], stdin=dump)

    def dump_postgres(self, database: str, path: str) -> int:
        """pg_dump -Fc of a database (schema and data) to path; its size in bytes."""
        self._run([self._client("pg_dump"), *self._pg_admin_args(), "-Fc", "-f", path, "-d", database])
        return os.path.getsize(path)

    def restore_postgres(self, database: str, path: str) -> None:
        """pg_restore of a dump of dump_postgres into database: its objects, owned by the superuser (the source's
        roles are the source branch's), and their rows."""
        self._run([self._client("pg_restore"), *self._pg_admin_args(), "-d", database, "--no-owner",
                   "--no-privileges", "--clean", "--if-exists", "--exit-on-error", path])
        self.restored.add(database)


class DataPlaneHooks:
    """World methods that keep the servers in step with the emulated records (mixed into state.World).

    A reset costs the servers nothing: the world goes *live* (the servers emptied, then given the world's
    branches, passwords and roles as the model holds them) at its first change after the seeding, or when its
    seeded credentials are read; from then on every change reaches the servers as it is made.
    """

    data: DataPlane | None = None

    def data_setup(self) -> None:
        """The world's start (names of its branches on the servers: data_names, by branch id)."""
        self.data = current()
        if self.data is not None:
            self.data.latest = self
        self.data_names: dict[str, str] = {}
        self.data_secrets: dict[str, str] = {}  # password username -> secret, to make the users when going live
        self.data_locked: set[str] = set()
        self.data_made: set[str] = set()  # PostgreSQL branch databases on the server (made when first needed)
        self.data_schemas: set[str] = set()  # MySQL branch schemas on the server (made when first needed, schema.py)
        self.data_seeded = False  # set by seed.build_world: changes after it make the world live
        self.data_live = False
        self.data_dumps: dict[str, str] = {}  # backup id -> its dump on the servers' directory (data_backup_taken)

    def data_describe(self) -> dict:
        return self.data.describe() if self.data is not None else {}

    def _data_go_live(self) -> str | None:
        """None while changes stay in the model (no data plane, or the seeding); "made" when the world went live
        just now (the servers hold the model as it is, this change included); "live" when a change is to be made
        on the servers by the caller."""
        if self.data is None or not self.data_seeded:
            return None
        if not self.data_live or self.data.owner is not self:  # another world of this process went live since
            self._data_materialize()
            return "made"
        return "live"

    def _data_materialize(self) -> None:
        data = self.data
        branches = [(db, branch) for org in self.orgs.values() for db in org.databases.values()
                    for branch in db.branches.values() if branch.model.id in self.data_names]
        keep = [self.data_names[b.model.id] for db, b in branches if db.model.kind == "postgresql"]
        data.wipe(keep_databases=keep)
        self.data_dumps = {}  # the wipe removed them: a restore makes one from the backup's schema (_data_dump_of)
        data.owner = self
        self.data_live = True
        self.data_locked = set()
        self.data_made = set()
        self.data_schemas = set()
        for db, branch in branches:
            name = self.data_names[branch.model.id]
            if db.model.kind == "postgresql":
                if branch.roles:
                    self._data_database(name)
                for record in branch.roles.values():
                    data.create_role(record.model.username, record.secret, record.model.inherited_roles)
            else:  # a MySQL branch's schema is made when it is first needed: a password, a login, a deploy
                users = [(record, self.data_secrets.get(record.model.username)) for record in branch.passwords.values()]
                users = [(record, secret) for record, secret in users if secret is not None]
                if users:
                    self.made_schema(branch)
                for record, secret in users:
                    data.create_user(record.model.username, secret, name, record.model.role,
                                     branch.model.safe_migrations)
                    self._grant_keyspaces(branch, record)  # the branch's other keyspaces, made empty
        data.set_hba(self.hba_lines())  # world/network.py: the IP restrictions of the world's PostgreSQL databases
        self.data_expire()

    def data_branch_created(self, db, branch) -> None:
        if self.data is None:
            return
        postgres = db.model.kind == "postgresql"
        name = server_name(db.model.name, branch.model.name, 63 if postgres else 64)
        self.data_names[branch.model.id] = name
        if postgres and self._data_go_live() == "live":
            self.data.set_hba(self.hba_lines())  # the database's IP restrictions reach it (world/network.py)
        # a branch's schema (MySQL) or database (PostgreSQL) is made when a password, a role, a login or a deploy
        # needs it: seeding hundreds of branches costs the servers nothing (a PostgreSQL database takes 0.1-0.2 s,
        # many times that on a loaded machine)
        self._data_go_live()

    def _data_database(self, name: str) -> None:
        """A PostgreSQL branch's database on the server, made now when it is not there yet."""
        if name not in self.data_made:
            if name not in self.data.reused:
                self.data.create_database(name)
            self.data_made.add(name)

    def data_branch_removed(self, branch) -> None:
        for backup in branch.backups.values():  # a deleted branch's backups go with it
            self.data_backup_deleted(backup)
        keyspaces = self.data_keyspace_schemas_removed(branch)
        name = self.data_names.pop(branch.model.id, None)
        if self._data_go_live() != "live" or name is None:
            return
        for schema in keyspaces:
            self.data.drop_schema(schema)
            self.data_schemas.discard(schema)
        for record in branch.passwords.values():
            self.data.drop_user(record.model.username)
        for record in branch.roles.values():
            self.data.drop_role(record.model.username, name)
        if branch.model.kind == "postgresql":
            self.data.drop_database(name)
            self.data_made.discard(name)
        else:
            self.data.drop_schema(name)
            self.data_schemas.discard(name)

    # ------------------------------------------------------------ passwords

    def data_password_created(self, branch, record, secret: str) -> None:
        name = self.data_names.get(branch.model.id)
        if self.data is None or name is None:
            return
        record.model.access_host_url = record.model.access_host_regional_url = self.data.mysql_host
        self.data_secrets[record.model.username] = secret
        if self._data_go_live() == "live":
            self.made_schema(branch)
            self.data.create_user(record.model.username, secret, name, record.model.role, branch.model.safe_migrations)
            self._grant_keyspaces(branch, record)  # every other keyspace of the branch (dataplane/keyspaces.py)

    def data_safe_migrations_changed(self, branch) -> None:
        """Safe migrations turned on or off (or the branch demoted): the admins' grants follow, so that direct DDL
        through a connection is refused on a branch with safe migrations, as on the platform."""
        name = self.data_names.get(branch.model.id)
        if name is None or branch.model.kind == "postgresql" or self._data_go_live() != "live":
            return
        for record in branch.passwords.values():
            if record.model.role == "admin" and record.model.username in self.data_secrets:
                privileges = mysql_privileges("admin", branch.model.safe_migrations)
                self.data.grant_user(record.model.username, name, privileges)
                self._grant_keyspaces(branch, record)

    def data_password_renewed(self, record, secret: str) -> None:
        if self.data is None:
            return
        self.data_secrets[record.model.username] = secret
        if self._data_go_live() == "live":
            self.data.set_user_secret(record.model.username, secret)
            self.data_locked.discard(record.model.username)

    def data_password_deleted(self, record) -> None:
        self.data_secrets.pop(record.model.username, None)
        if self._data_go_live() == "live":
            self.data.drop_user(record.model.username)

    # ------------------------------------------------------------ roles

    def data_role_secret(self, branch, record, secret: str, created: bool) -> None:
        name = self.data_names.get(branch.model.id)
        if self.data is None or name is None:
            return
        record.model.access_host_url = self.data.postgres_host
        record.model.database_name = name
        if self._data_go_live() != "live":
            return
        self._data_database(name)
        if created:
            self.data.create_role(record.model.username, secret, record.model.inherited_roles)
            self.data.set_hba(self.hba_lines())  # IP restrictions that name the role (world/network.py)
        else:
            self.data.set_role_secret(record.model.username, secret)
        self.data_locked.discard(record.model.username)

    def data_role_deleted(self, branch, record, successor=None) -> None:
        name = self.data_names.get(branch.model.id)
        if self._data_go_live() and name is not None:
            self._data_database(name)
            self.data.drop_role(record.model.username, name, successor.model.username if successor else None)

    def data_role_reassigned(self, branch, record, successor) -> None:
        name = self.data_names.get(branch.model.id)
        if self._data_go_live() and name is not None:
            self._data_database(name)
            self.data.reassign_role(record.model.username, successor.model.username, name)

    # ------------------------------------------------------------ the clock and logins

    def data_expire(self) -> None:
        """Lock every credential whose expiry the emulator's clock has passed (going live, a clock advance)."""
        if self.data is None or not self.data_live or self.data.owner is not self:
            return
        now = self.now()
        for org in self.orgs.values():
            for db in org.databases.values():
                for branch in db.branches.values():
                    for record in branch.passwords.values():
                        if record.settle(now).expired and record.model.username not in self.data_locked:
                            self.data.lock_user(record.model.username)
                            self.data_locked.add(record.model.username)
                    for record in branch.roles.values():
                        if record.settle(now, branch).expired and record.model.username not in self.data_locked:
                            self.data.lock_role(record.model.username)
                            self.data_locked.add(record.model.username)

    def data_route(self, username: str, database: str | None) -> str | None:
        """The schema a password's login to ``database`` goes to (the MySQL edge, edge.py): its branch's, made now
        (the world going live first, expired passwords locked), when ``database`` is the branch's database, its
        default keyspace or none; a keyspace's schema when it names another keyspace of the branch
        (dataplane/keyspaces.py); None for anything else (the server then refuses the login as it is)."""
        with self.lock:
            self._data_go_live()
            self.data_expire()
            for org in self.orgs.values():
                for db in org.databases.values():
                    for branch in db.branches.values():
                        if any(r.model.username == username for r in branch.passwords.values()):
                            name = self.data_names.get(branch.model.id)
                            if name is None:
                                return None
                            if database in (None, db.model.name) or database in branch.keyspaces \
                                    and branch.keyspaces[database].default:
                                self.made_schema(branch)
                                return name
                            if database in branch.keyspaces:  # a keyspace named at login: its schema
                                return self.made_keyspace_schema(branch, database)
                            return None
        return None

    def data_serve(self) -> None:
        """The world's credentials leave the emulator (GET /_emulator/world shows the seeded ones): from now on the
        servers hold them, so that they log in as the platform's do (the world goes live), expired ones locked."""
        if self._data_go_live() is not None:
            self.data_expire()

    # ------------------------------------------------------------ backups and restores

    def data_backup_taken(self, branch, backup) -> None:
        """A backup the API takes is a real dump of the branch as the server holds it now (mysqldump of its
        schema, pg_dump -Fc of its database), the moment the emulator keeps the backup's schema of; its size is
        the dump's. The clock only decides when it shows as successful. A backup made to fail dumps nothing; one
        taken while seeding (the servers hold nothing of the world yet) is dumped when a restore needs it."""
        if backup.end_state != "success" or self._data_go_live() is None:
            return
        name = self.data_names.get(branch.model.id)
        if name is None:
            return
        if branch.model.kind == "postgresql":
            self._data_database(name)
            path = self.data.new_dump(backup.model.id, ".dump")
            backup.dump_size = self.data.dump_postgres(name, path)
        else:
            self.made_schema(branch)  # a branch not made yet is made from its template first
            path = self.data.new_dump(backup.model.id, ".sql")
            backup.dump_size = self.data.dump_mysql(name, path)
        self.data_dumps[backup.model.id] = path

    def _data_dump_of(self, backup) -> str | None:
        """The backup's dump; for a MySQL backup without one (taken while seeding, or the servers emptied since by
        another world going live) a dump made now of the server schema the backup's tables are kept in (its
        ``source``: the template it was described by, or the copy taken with it): the servers held none of its
        rows. None for such a PostgreSQL backup (its database was empty) or a backup of no tables."""
        path = self.data_dumps.get(backup.model.id)
        if path is not None and os.path.exists(path):
            return path
        source = backup.source
        if backup.branch.model.kind == "postgresql" or source is None or not self.data.my(
                "SELECT 1 FROM information_schema.schemata WHERE schema_name = %s", [source]):
            return None
        path = self.data.new_dump(backup.model.id, ".sql")
        backup.dump_size = self.data.dump_mysql(source, path)
        self.data_dumps[backup.model.id] = path
        return path

    def data_branch_restored(self, backup, branch) -> None:
        """A branch restored from a backup: the backup's dump loaded into its schema (MariaDB) or database
        (PostgreSQL), tables and rows."""
        if backup is None or self._data_go_live() is None:
            return
        name = self.data_names.get(branch.model.id)
        path = self._data_dump_of(backup) if name is not None else None
        if path is None:
            return
        if branch.model.kind == "postgresql":
            self._data_database(name)
            self.data.restore_postgres(name, path)
        else:
            self.made_schema(branch)  # from the backup's copy (data_restore_schema), then its dump: tables and rows
            self.data.load_mysql(name, path)

    def data_backup_deleted(self, backup) -> None:
        """A deleted backup's dump goes."""
        path = self.data_dumps.pop(backup.model.id, None) if self.data is not None else None
        if path is not None and os.path.exists(path):
            os.remove(path)
