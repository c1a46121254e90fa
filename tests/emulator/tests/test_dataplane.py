"""The data plane: credentials the emulator mints log in to real servers (MariaDB, PostgreSQL) over TLS verified
against the emulator's CA, with the platform's grants; rotation, deletion and expiry refuse the old secret."""

import os
import subprocess
import tempfile

import psycopg
import pymysql
import pytest
from psycopg import sql

from emulator.dataplane.servers import current
from harness import dataplane as harness_dataplane
from harness.dataplane import DataPlane, DataPlaneError

from .conftest import MAIN

DATABASE = "/v1/organizations/acme/databases/app"
PG_MAIN = "/v1/organizations/acme/databases/pgapp/branches/main"
DENIED = 1142  # command denied to user


def password(api, role, **body):
    answer = api.post(f"{MAIN}/passwords", json={"name": f"dp-{role}", "role": role, **body})
    assert answer.status_code == 201, answer.text
    return answer.json()


def mysql_login(dataplane, created, secret=None, schema="app", **options):
    """A client's login with the password's connection details, as the platform documents them: the host
    (host:port) the emulator answered, which is the MySQL edge (dataplane/edge.py), and the database's name."""
    host, port = created["access_host_url"].rsplit(":", 1)
    assert f"{host}:{port}" == current().edge.address != "127.0.0.1:%d" % dataplane.config["mysql"]["port"]
    return pymysql.connect(host=host, port=int(port), user=created["username"],
                           password=secret or created["plain_text"], database=schema, autocommit=True,
                           **(options or dict(ssl_ca=dataplane.ca_file, ssl_verify_cert=True,
                                              ssl_verify_identity=True)))


def refused(dataplane, created, secret=None, code=None):
    with pytest.raises(pymysql.err.OperationalError) as caught:
        mysql_login(dataplane, created, secret).close()
    assert code is None or caught.value.args[0] == code
    return caught.value.args[0]


def run(connection, statement):
    with connection.cursor() as cursor:
        cursor.execute(statement)
        return cursor.fetchall()


def denied(connection, statement):
    with pytest.raises(pymysql.err.OperationalError) as caught:
        run(connection, statement)
    assert caught.value.args[0] == DENIED, caught.value


def test_world_names_the_ca_and_the_servers(api, dataplane):
    world = api.control("GET", "/world").json()
    assert world["ca_file"] == dataplane.ca_file
    assert world["dataplane"] == {"mysql": f"127.0.0.1:{dataplane.config['mysql']['port']}",
                                  "postgres": f"127.0.0.1:{dataplane.config['postgres']['port']}",
                                  "mysql_edge": current().edge.address}


def test_a_reader_selects_and_cannot_write(api, dataplane):
    with mysql_login(dataplane, password(api, "reader")) as connection:
        assert run(connection, "SELECT COUNT(*) FROM users") == ((0,),)
        assert run(connection, "SHOW STATUS LIKE 'Ssl_version'")[0][1].startswith("TLS")
        denied(connection, "INSERT INTO users (email) VALUES ('a@example.test')")
        denied(connection, "CREATE TABLE t (id bigint PRIMARY KEY)")


def test_a_writer_writes_and_cannot_read(api, dataplane):
    with mysql_login(dataplane, password(api, "writer")) as connection:
        run(connection, "INSERT INTO users (email) VALUES ('w@example.test')")
        denied(connection, "SELECT * FROM users")


def test_a_readwriter_reads_and_writes_and_cannot_change_the_schema(api, dataplane):
    with mysql_login(dataplane, password(api, "readwriter")) as connection:
        run(connection, "INSERT INTO users (email) VALUES ('rw@example.test')")
        assert run(connection, "SELECT email FROM users") == (("rw@example.test",),)
        denied(connection, "CREATE TABLE t (id bigint PRIMARY KEY)")
        denied(connection, "ALTER TABLE users ADD COLUMN name varchar(10)")


def development_branch(api, name="dev-x"):
    """A ready development branch of app (no safe migrations)."""
    assert api.post(f"{DATABASE}/branches", json={"name": name, "parent_branch": "main"}).status_code == 201
    api.advance(60)
    return f"{DATABASE}/branches/{name}"


def test_an_admin_changes_the_schema_of_its_development_branch_only(api, dataplane):
    dev = development_branch(api)
    admin = api.post(f"{dev}/passwords", json={"name": "dev-admin", "role": "admin"}).json()
    with mysql_login(dataplane, admin) as connection:
        run(connection, "CREATE TABLE orders (id bigint PRIMARY KEY)")
        assert sorted(row[0] for row in run(connection, "SHOW TABLES")) == ["orders", "users"]
        with pytest.raises(pymysql.err.OperationalError) as caught:
            run(connection, "CREATE DATABASE elsewhere")
        assert caught.value.args[0] == 1044  # access denied to that schema


def test_safe_migrations_refuse_an_admins_direct_ddl_and_its_end_allows_it(api, dataplane):
    assert api.get(MAIN).json()["safe_migrations"] is True  # the seeded production branch
    admin = password(api, "admin")
    with mysql_login(dataplane, admin) as connection:
        run(connection, "INSERT INTO users (email) VALUES ('admin@example.test')")  # the data, yes
        denied(connection, "CREATE TABLE orders (id bigint PRIMARY KEY)")
        denied(connection, "ALTER TABLE users ADD COLUMN name varchar(10)")
        denied(connection, "DROP TABLE users")
    assert api.delete(f"{MAIN}/safe-migrations").json()["safe_migrations"] is False
    with mysql_login(dataplane, admin) as connection:  # database grants count from the next login
        run(connection, "CREATE TABLE orders (id bigint PRIMARY KEY)")
    assert api.post(f"{MAIN}/safe-migrations").json()["safe_migrations"] is True
    with mysql_login(dataplane, admin) as connection:
        denied(connection, "DROP TABLE orders")
    dev = development_branch(api)
    on_dev = api.post(f"{dev}/passwords", json={"name": "dev-admin", "role": "admin"}).json()
    assert api.post(f"{dev}/safe-migrations").json()["safe_migrations"] is True
    with mysql_login(dataplane, on_dev) as connection:
        denied(connection, "CREATE TABLE t (id bigint PRIMARY KEY)")


def test_a_login_needs_tls_and_the_right_secret(api, dataplane):
    created = password(api, "reader")
    refused(dataplane, created, secret=created["plain_text"] + "x", code=1045)
    with pytest.raises(pymysql.err.OperationalError) as caught:  # REQUIRE SSL: no plain connection
        mysql_login(dataplane, created, ssl_disabled=True).close()
    assert caught.value.args[0] == 1045


def test_renewing_gives_a_new_secret_and_deleting_refuses_it(api, dataplane):
    created = password(api, "reader", ttl=60)
    mysql_login(dataplane, created).close()
    renewed = api.post(f"{MAIN}/passwords/{created['id']}/renew").json()
    refused(dataplane, created, code=1045)  # the emulator's renew issues a new secret: the old one fails
    mysql_login(dataplane, created, renewed["plain_text"]).close()
    assert api.delete(f"{MAIN}/passwords/{created['id']}").status_code == 204
    refused(dataplane, created, renewed["plain_text"], code=1045)


def test_an_expired_password_no_longer_logs_in(api, dataplane):
    created = password(api, "reader", ttl=60)
    mysql_login(dataplane, created).close()
    api.advance(61)  # the clock passing the expiry locks the account on the server
    refused(dataplane, created, code=4151)
    renewed = api.post(f"{MAIN}/passwords/{created['id']}/renew").json()
    mysql_login(dataplane, created, renewed["plain_text"]).close()


def test_the_edge_takes_a_login_to_its_branch_whatever_the_client(api, dataplane):
    """The MySQL edge: a login to the database's name (or to none) reaches the password's branch; the edge shows
    the emulator's certificate (verified), and MariaDB's own client (libmariadb) works through it as PyMySQL does;
    a login naming a database that is not the password's is refused by the server, not rerouted."""
    created = password(api, "reader")
    with mysql_login(dataplane, created, schema=None) as connection:
        assert run(connection, "SELECT DATABASE()") == (("app__main",),)
    host, port = created["access_host_url"].rsplit(":", 1)
    client = subprocess.run(["mariadb", "--host", host, "--port", port, "--user", created["username"],
                             "--password=" + created["plain_text"], "--ssl-ca", dataplane.ca_file,
                             "--ssl-verify-server-cert", "--batch", "--skip-column-names", "app",
                             "-e", "SELECT DATABASE(); SHOW TABLES"], capture_output=True, text=True, timeout=30)
    assert client.returncode == 0, client.stderr
    assert client.stdout.split() == ["app__main", "users"]
    with pytest.raises(pymysql.err.OperationalError) as caught:
        mysql_login(dataplane, created, schema="mysql").close()
    assert caught.value.args[0] == 1044  # access denied to that database
    with pytest.raises(pymysql.err.OperationalError):  # the edge's certificate is the emulator CA's, verified
        mysql_login(dataplane, created, ssl_ca=certifi_like_empty_ca(dataplane), ssl_verify_cert=True).close()


def certifi_like_empty_ca(dataplane):
    """A CA file that does not hold the emulator's CA: verifying the edge against it fails."""
    import trustme

    path = os.path.join(tempfile.mkdtemp(), "other-ca.pem")
    trustme.CA().cert_pem.write_to_path(path)
    return path


def test_a_branch_is_a_schema_with_its_parents_tables_gone_with_the_branch(api, dataplane):
    created = api.post("/v1/organizations/acme/databases/app/branches",
                       json={"name": "feature-x", "parent_branch": "main"})
    assert created.status_code == 201, created.text
    api.advance(60)
    login = password(api, "admin")
    branch_password = api.post("/v1/organizations/acme/databases/app/branches/feature-x/passwords",
                               json={"name": "dev", "role": "admin"}).json()
    with mysql_login(dataplane, branch_password) as connection:  # the edge takes it to app__feature-x
        assert [row[0] for row in run(connection, "SHOW TABLES")] == ["users"]
        run(connection, "CREATE TABLE only_here (id bigint PRIMARY KEY)")
    with pytest.raises(pymysql.err.OperationalError):  # not a grant on another branch's schema
        mysql_login(dataplane, branch_password, schema="app__main").close()
    with mysql_login(dataplane, login) as connection:
        assert [row[0] for row in run(connection, "SHOW TABLES")] == ["users"]
    assert api.delete("/v1/organizations/acme/databases/app/branches/feature-x").status_code == 204
    refused(dataplane, branch_password)
    schemas = pymysql.connect(unix_socket=dataplane.config["mysql"]["socket"], user="root")
    with schemas, schemas.cursor() as cursor:
        cursor.execute("SHOW DATABASES LIKE 'app%'")
        assert [row[0] for row in cursor.fetchall()] == ["app__main"]


# ---------------------------------------------------------------- PostgreSQL


def role(api, **body):
    answer = api.post(f"{PG_MAIN}/roles", json=body)
    assert answer.status_code == 200, answer.text
    return answer.json()


def pg_login(dataplane, created, secret=None):
    host, port = created["access_host_url"].rsplit(":", 1)
    return psycopg.connect(host=host, port=int(port), user=created["username"], password=secret or created["password"],
                           dbname=created["database_name"], sslmode="verify-full", sslrootcert=dataplane.ca_file,
                           autocommit=True)


def pg_refused(dataplane, created, secret=None):
    with pytest.raises(psycopg.OperationalError) as caught:
        pg_login(dataplane, created, secret).close()
    return str(caught.value)


def test_a_role_with_pg_read_all_data_reads_and_a_successor_takes_its_tables(api, dataplane):
    owner = role(api, name="owner", inherited_roles=["postgres"])
    reader = role(api, name="reader", inherited_roles=["pg_read_all_data"])
    with pg_login(dataplane, owner) as connection:
        assert connection.info.pgconn.ssl_in_use
        connection.execute("CREATE TABLE orders (id bigint PRIMARY KEY)")
        connection.execute("INSERT INTO orders VALUES (1)")
    with pg_login(dataplane, reader) as connection:
        assert connection.execute("SELECT id FROM orders").fetchall() == [(1,)]
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            connection.execute("INSERT INTO orders VALUES (2)")
        tables = connection.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'").fetchall()
        assert tables == [("orders",)]

    assert api.delete(f"{PG_MAIN}/roles/{owner['id']}", params={"successor": reader["id"]}).status_code == 204
    pg_refused(dataplane, owner)
    with pg_login(dataplane, reader) as connection:
        owners = connection.execute("SELECT tableowner FROM pg_tables WHERE tablename = 'orders'").fetchall()
        assert owners == [(reader["username"],)]
        connection.execute("INSERT INTO orders VALUES (2)")  # the owner now


def test_resetting_a_role_refuses_the_old_secret_and_expiry_refuses_the_role(api, dataplane):
    created = role(api, name="app", ttl=60)
    pg_login(dataplane, created).close()
    reset = api.post(f"{PG_MAIN}/roles/{created['id']}/reset")
    assert reset.status_code == 200, reset.text
    assert "password authentication failed" in pg_refused(dataplane, created)
    pg_login(dataplane, created, reset.json()["password"]).close()
    api.advance(61)
    assert "not permitted to log in" in pg_refused(dataplane, created, reset.json()["password"])
    renewed = api.post(f"{PG_MAIN}/roles/{created['id']}/renew").json()
    assert renewed["password"] == reset.json()["password"]  # renew keeps the secret, and the role logs in again
    pg_login(dataplane, created, renewed["password"]).close()


def test_a_reset_of_the_world_empties_the_servers(api, dataplane):
    created = role(api, name="gone")
    api.control("POST", "/reset")
    api.post(f"{MAIN}/passwords", json={"name": "any"})  # the new world's first change: the servers follow it
    assert "password authentication failed" in pg_refused(dataplane, created)
    with psycopg.connect(host=dataplane.config["postgres"]["socket_dir"], port=dataplane.config["postgres"]["port"],
                         user="postgres", dbname="postgres") as admin:
        names = [row[0] for row in admin.execute(sql.SQL("SELECT rolname FROM pg_roles WHERE rolname !~ '^pg_'"))]
    assert sorted(name.split(".")[0] for name in names) == ["postgres", "postgres"]  # the server's, the default role


def test_the_harness_starts_the_servers_with_the_emulator_and_stops_them_by_their_ids(tmp_path):
    import socket
    import sys

    from harness.emulator import Emulator

    emulator = Emulator(str(tmp_path / "emulator.log"), python=sys.executable).start()  # plain http: still a CA
    try:
        world = emulator.world
        assert world["ca_file"] == emulator.ca_file and os.path.isfile(world["ca_file"]) and emulator.ca is None
        plane = emulator.dataplane
        pids = [plane.config["mysql"]["pid"], plane.config["postgres"]["pid"]]
        default = world["postgres"]["default_role"]  # reading the world put the seeded credentials on the servers
        host, port = world["dataplane"]["postgres"].split(":")
        with psycopg.connect(host=host, port=int(port), user=default["username"], password=default["password"],
                             dbname=default["database_name"], sslmode="verify-full", sslrootcert=world["ca_file"]):
            pass
    finally:
        emulator.stop()
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", int(port)), timeout=1).close()
    assert not os.path.exists(plane.directory)


ROOT_ONLY = pytest.mark.skipif(os.geteuid() != 0, reason="only root's PostgreSQL runs as another OS user (postgres), "
                               "which must enter the directories above its files; an ordinary user's runs as itself")


@ROOT_ONLY
def test_root_starts_the_data_plane_from_a_directory_only_root_enters(dataplane, tmp_path, monkeypatch):
    """make demo as root from a clone in root's home (mode 0700), TMPDIR in it too: initdb and PostgreSQL run where the
    postgres user can enter, a login over TLS works, and stop() removes what the start made."""
    tmp_path.chmod(0o700)
    (tmp_path / "tmp").mkdir(mode=0o700)
    monkeypatch.setenv("DATAPLANE_CACHE", str(tmp_path / "clone" / "build" / "dataplane"))  # initialised afresh
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))  # TMPDIR, read once a process
    plane = DataPlane(dataplane.cert_dir).start()
    try:
        assert not plane.directory.startswith(str(tmp_path)) and os.stat(plane.directory).st_mode & 0o7777 == 0o710
        pg = plane.config["postgres"]
        with psycopg.connect(host=pg["socket_dir"], port=pg["port"], user="postgres", dbname="postgres",
                             autocommit=True) as admin:
            admin.execute("CREATE ROLE demo LOGIN PASSWORD 'demo-secret'")
        with psycopg.connect(host=pg["host"], port=pg["port"], user="demo", password="demo-secret", dbname="postgres",
                             sslmode="verify-full", sslrootcert=plane.ca_file) as login:
            assert login.execute("SELECT current_user, ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()"
                                 ).fetchone() == ("demo", True)
    finally:
        plane.stop()
    assert not os.path.exists(plane.directory)


@ROOT_ONLY
def test_root_is_told_what_to_do_when_the_postgres_user_can_enter_no_temp_dir(dataplane, tmp_path, monkeypatch):
    tmp_path.chmod(0o700)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(harness_dataplane, "TEMP_ROOTS", (str(tmp_path / "missing"),))
    with pytest.raises(DataPlaneError) as caught:
        DataPlane(dataplane.cert_dir).start()
    assert str(caught.value) == (
        "Run as root, PostgreSQL runs as the postgres OS user, which can enter none of %s, %s: set TMPDIR to a "
        "directory it can enter (every directory above it searchable by others), or run as an ordinary user."
        % (tmp_path, tmp_path / "missing"))
    assert os.listdir(tmp_path) == []  # nothing made, no server started
