"""Backups on the data plane: a backup is a real dump of its branch (mysqldump / pg_dump -Fc) in the servers'
directory, a restore loads it into the new branch (tables and rows), a deleted backup's dump goes. Rows are
written and read back through real logins (TLS verified against the emulator's CA)."""

import glob
import os

from .test_dataplane import mysql_login, password, pg_login, role, run

DB = "/v1/organizations/acme/databases/app"
PG_DB = "/v1/organizations/acme/databases/pgapp"


def ok(response, status=200):
    assert response.status_code == status, response.text
    return response.json()


def dumps(dataplane, backup_id):
    """The dump files of a backup on the servers' directory."""
    return glob.glob(os.path.join(dataplane.directory, "backups", f"{backup_id}-*"))


def take_backup(api, database_path, branch="main"):
    """A backup of the branch, successful on the clock."""
    taken = ok(api.post(f"{database_path}/branches/{branch}/backups", json={"name": "with-rows"}), 201)
    api.advance(2 * ok(api.control("GET", "/settings"))["backup_step_delay"])
    done = ok(api.get(f"{database_path}/branches/{branch}/backups/{taken['id']}"))
    assert done["state"] == "success"
    return done


def restore(api, database_path, backup_id, name="restored"):
    size = "PS_10_AWS_X86" if database_path == PG_DB else "PS_10"  # the sizes of each engine
    body = {"name": name, "parent_branch": "main", "backup_id": backup_id, "cluster_size": size}
    ok(api.post(f"{database_path}/branches", json=body), 201)
    api.advance(ok(api.control("GET", "/settings"))["ready_delay"])


def test_a_mysql_backup_is_a_dump_of_the_rows_and_a_restore_gives_them_back(api, dataplane):
    writer = password(api, "readwriter")
    with mysql_login(dataplane, writer) as connection:
        run(connection, "INSERT INTO users (email) VALUES ('kept@example.test'), ('also-kept@example.test')")
    backup = take_backup(api, DB)
    with mysql_login(dataplane, writer) as connection:
        run(connection, "INSERT INTO users (email) VALUES ('after-the-backup@example.test')")

    [dump] = dumps(dataplane, backup["id"])
    with open(dump, encoding="utf-8") as handle:
        text = handle.read()
    assert "CREATE TABLE `users`" in text and "'kept@example.test'" in text and "after-the-backup" not in text
    assert backup["size"] == os.path.getsize(dump)

    restore(api, DB, backup["id"])
    reader = ok(api.post(f"{DB}/branches/restored/passwords", json={"name": "drill", "role": "reader"}), 201)
    with mysql_login(dataplane, reader, schema="app__restored") as connection:
        assert run(connection, "SELECT email FROM users ORDER BY email") == (("also-kept@example.test",),
                                                                             ("kept@example.test",))


def test_a_backup_dumps_the_schema_as_the_server_holds_it(api, dataplane):
    ok(api.post(f"{DB}/branches", json={"name": "dev", "parent_branch": "main"}), 201)
    api.advance(ok(api.control("GET", "/settings"))["ready_delay"])
    admin = ok(api.post(f"{DB}/branches/dev/passwords", json={"name": "dev", "role": "admin"}), 201)
    with mysql_login(dataplane, admin, schema="app__dev") as connection:
        run(connection, "CREATE TABLE made_here (id bigint PRIMARY KEY)")
        run(connection, "INSERT INTO made_here VALUES (7)")
    backup = take_backup(api, DB, branch="dev")
    [dump] = dumps(dataplane, backup["id"])
    with open(dump, encoding="utf-8") as handle:
        assert "INSERT INTO `made_here` VALUES\n(7)" in handle.read()
    with mysql_login(dataplane, admin, schema="app__dev") as connection:  # taking the backup changed nothing
        assert run(connection, "SELECT id FROM made_here") == ((7,),)


def test_a_seeded_backup_restores_its_schema_from_a_dump_made_when_needed(api, dataplane):
    seeded = api.world["backups"]["main"][0]  # taken while seeding: the servers held nothing of the world
    assert dumps(dataplane, seeded) == []
    restore(api, DB, seeded, name="from-seed")
    [dump] = dumps(dataplane, seeded)
    assert "CREATE TABLE `users`" in open(dump, encoding="utf-8").read()  # pylint: disable=consider-using-with
    reader = ok(api.post(f"{DB}/branches/from-seed/passwords", json={"name": "drill", "role": "reader"}), 201)
    with mysql_login(dataplane, reader, schema="app__from-seed") as connection:
        assert run(connection, "SELECT COUNT(*) FROM users") == ((0,),)


def test_a_postgres_backup_is_a_pg_dump_and_a_restore_gives_the_rows_back(api, dataplane):
    owner = role(api, name="owner", inherited_roles=["postgres"])
    with pg_login(dataplane, owner) as connection:
        connection.execute("CREATE TABLE orders (id bigint PRIMARY KEY, note text)")
        connection.execute("INSERT INTO orders VALUES (1, 'kept'), (2, 'also kept')")
    backup = take_backup(api, PG_DB)
    with pg_login(dataplane, owner) as connection:
        connection.execute("INSERT INTO orders VALUES (3, 'after the backup')")
    [dump] = dumps(dataplane, backup["id"])
    with open(dump, "rb") as handle:
        assert handle.read(5) == b"PGDMP"  # pg_dump's custom format
    assert backup["size"] == os.path.getsize(dump)

    restore(api, PG_DB, backup["id"])
    reader = ok(api.post(f"{PG_DB}/branches/restored/roles", json={"name": "reader",
                                                                   "inherited_roles": ["pg_read_all_data"]}))
    assert reader["database_name"] == "pgapp__restored"
    with pg_login(dataplane, reader) as connection:
        assert connection.execute("SELECT id, note FROM orders ORDER BY id").fetchall() == [(1, "kept"),
                                                                                          (2, "also kept")]


def test_a_restored_postgres_database_is_not_kept_by_the_next_world(api, dataplane):
    owner = role(api, name="owner", inherited_roles=["postgres"])
    with pg_login(dataplane, owner) as connection:
        connection.execute("CREATE TABLE orders (id bigint PRIMARY KEY)")
    restore(api, PG_DB, take_backup(api, PG_DB)["id"])
    restored = ok(api.post(f"{PG_DB}/branches/restored/roles", json={"name": "reader",
                                                                     "inherited_roles": ["pg_read_all_data"]}))
    with pg_login(dataplane, restored) as connection:
        assert connection.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'").fetchall() == [
            ("orders",)]
    api.control("POST", "/reset")  # the next world has a branch of that name: its database is kept, emptied
    ok(api.post(f"{PG_DB}/branches", json={"name": "restored", "parent_branch": "main"}), 201)
    api.advance(ok(api.control("GET", "/settings"))["ready_delay"])
    fresh = ok(api.post(f"{PG_DB}/branches/restored/roles", json={"name": "reader",
                                                                  "inherited_roles": ["pg_read_all_data"]}))
    with pg_login(dataplane, fresh) as connection:
        assert connection.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'").fetchall() == []


def test_deleting_a_backup_or_its_branch_removes_its_dump(api, dataplane):
    backup = take_backup(api, DB)
    assert len(dumps(dataplane, backup["id"])) == 1
    assert api.delete(f"{DB}/branches/main/backups/{backup['id']}").status_code == 204
    assert dumps(dataplane, backup["id"]) == []

    ok(api.post(f"{DB}/branches", json={"name": "dev", "parent_branch": "main"}), 201)
    api.advance(ok(api.control("GET", "/settings"))["ready_delay"])
    of_dev = take_backup(api, DB, branch="dev")
    assert len(dumps(dataplane, of_dev["id"])) == 1
    assert api.delete(f"{DB}/branches/dev").status_code == 204
    assert dumps(dataplane, of_dev["id"]) == []


def test_a_reset_removes_the_dumps(api, dataplane):
    backup = take_backup(api, DB)
    assert len(dumps(dataplane, backup["id"])) == 1
    api.control("POST", "/reset")
    api.post(f"{DB}/branches/main/passwords", json={"name": "any"})  # the new world's first change: it goes live
    assert dumps(dataplane, backup["id"]) == []


def test_a_failed_backup_dumps_nothing(api, dataplane):
    ok(api.control("POST", "/settings", json={"backup_fail_state": "failed"}))
    failing = ok(api.post(f"{DB}/branches/main/backups", json={}), 201)
    ok(api.control("POST", "/settings", json={"backup_fail_state": None}))
    fine = ok(api.post(f"{DB}/branches/main/backups", json={}), 201)
    assert dumps(dataplane, failing["id"]) == [] and len(dumps(dataplane, fine["id"])) == 1
