"""Schemas are the server's: DDL a client runs through its own connection (an admin password, TLS verified with the
world's CA) is what the branch's schema, its lint and its deploy requests show; a deploy runs real statements on
production's schema, keeping its rows; the three-way merge keeps what others deployed; a revert keeps the rows
written since where their columns still exist."""

import pymysql
import pytest

from .conftest import DB, MAIN
from .test_dataplane import mysql_login, run
from .test_deploy_requests import act, dev_branch, error_of, get
from .test_three_way_deploys import checked, deployed

DRS = f"{DB}/deploy-requests"


def password(api, branch, role):
    answer = api.post(f"{DB}/branches/{branch}/passwords", json={"name": f"{branch}-{role}", "role": role})
    assert answer.status_code == 201, answer.text
    return answer.json()


def connect(api, dataplane, branch, role):
    """A client's connection to the branch with a new password of the role (the branch's schema on MariaDB)."""
    return mysql_login(dataplane, password(api, branch, role), schema=f"app__{branch}")


def schema(api, branch):
    answer = api.get(f"{DB}/branches/{branch}/schema")
    assert answer.status_code == 200, answer.text
    return {table["name"]: table["raw"] for table in answer.json()["data"]}


def operations(body):
    return [(op["table_name"], op["operation_name"]) for op in body["deployment"]["deploy_operations"]]


def test_a_table_made_through_a_connection_is_in_the_schema_the_diff_and_production(api, dataplane):
    with connect(api, dataplane, "main", "readwriter") as production:
        run(production, "INSERT INTO users (email) VALUES ('kept@example.test')")
    dev_branch(api, "dev")
    with connect(api, dataplane, "dev", "admin") as dev:
        run(dev, "CREATE TABLE orders (id bigint NOT NULL AUTO_INCREMENT PRIMARY KEY, total int NOT NULL)")
        run(dev, "ALTER TABLE users ADD COLUMN nickname varchar(64)")
    tables = schema(api, "dev")
    assert tables["orders"] == show_create(dataplane, "app__dev", "orders")  # the server's SHOW CREATE TABLE
    assert "`nickname` varchar(64)" in tables["users"]
    number, body = checked(api, "dev")
    assert body["deployment_state"] == "ready", body["deployment"]
    assert operations(body) == [("orders", "CREATE"), ("users", "ALTER")]
    statements = [op["ddl_statement"] for op in body["deployment"]["deploy_operations"]]
    assert statements[0].startswith("CREATE TABLE `orders`")
    assert statements[1] == "ALTER TABLE `users` ADD COLUMN `nickname` varchar(64)"
    act(api, number, "deploy")
    api.advance(2)
    assert get(api, number)["deployment_state"] == "complete_pending_revert"
    with connect(api, dataplane, "main", "readwriter") as production:
        assert sorted(row[0] for row in run(production, "SHOW TABLES")) == ["orders", "users"]
        assert run(production, "SELECT email, nickname FROM users") == (("kept@example.test", None),)


def show_create(dataplane, schema_name, table):
    admin = dataplane.config["mysql"]
    connection = pymysql.connect(unix_socket=admin["socket"], user=admin["user"])
    with connection, connection.cursor() as cursor:
        cursor.execute(f"SHOW CREATE TABLE `{schema_name}`.`{table}`")
        return cursor.fetchone()[1]


def test_the_three_way_case_keeps_productions_table(api, dataplane):
    dev_branch(api, "a")
    dev_branch(api, "b")  # both from main as it was
    with connect(api, dataplane, "a", "admin") as connection:
        run(connection, "CREATE TABLE posts (id bigint NOT NULL PRIMARY KEY)")
    deployed(api, "a")
    number, body = checked(api, "b")
    assert body["deployment_state"] == "no_changes" and operations(body) == []  # never a DROP TABLE of a's table
    assert "no schema changes" in error_of(api.post(f"{DRS}/{number}/deploy"), 422)
    with connect(api, dataplane, "main", "reader") as production:
        assert sorted(row[0] for row in run(production, "SHOW TABLES")) == ["posts", "users"]


def test_a_table_changed_differently_on_both_sides_is_refused_with_a_sentence(api, dataplane):
    dev_branch(api, "a")
    dev_branch(api, "b")
    with connect(api, dataplane, "a", "admin") as connection:
        run(connection, "ALTER TABLE users ADD COLUMN nickname varchar(64)")
    deployed(api, "a")
    with connect(api, dataplane, "b", "admin") as connection:
        run(connection, "ALTER TABLE users ADD COLUMN nickname bigint")
    number, body = checked(api, "b")
    assert body["deployment_state"] == "error" and body["deployment"]["deployable"] is False
    message = error_of(api.post(f"{DRS}/{number}/deploy"), 422)
    assert "conflict" in message and "`users`" in message
    with connect(api, dataplane, "main", "reader") as production:
        assert [row[0] for row in run(production, "SHOW COLUMNS FROM users")][-1] == "nickname"
        assert "varchar" in run(production, "SHOW COLUMNS FROM users")[-1][1]


def test_a_revert_keeps_the_rows_written_since_where_their_columns_still_exist(api, dataplane):
    with connect(api, dataplane, "main", "readwriter") as production:
        run(production, "INSERT INTO users (email) VALUES ('before@example.test')")
    dev_branch(api, "dev")
    with connect(api, dataplane, "dev", "admin") as connection:
        run(connection, "ALTER TABLE users ADD COLUMN nickname varchar(64)")
        run(connection, "CREATE TABLE tags (id bigint NOT NULL PRIMARY KEY)")
    number = deployed(api, "dev")
    with connect(api, dataplane, "main", "readwriter") as production:
        run(production, "INSERT INTO users (email, nickname) VALUES ('since@example.test', 'since')")
        run(production, "INSERT INTO tags (id) VALUES (1)")
    act(api, number, "revert")
    api.advance(1)
    assert get(api, number)["deployment_state"] == "complete_revert"
    with connect(api, dataplane, "main", "readwriter") as production:
        assert sorted(row[0] for row in run(production, "SHOW TABLES")) == ["users"]
        assert [row[0] for row in run(production, "SHOW COLUMNS FROM users")] == ["id", "email", "created_at"]
        assert sorted(row[0] for row in run(production, "SELECT email FROM users")) == [
            "before@example.test", "since@example.test"]
    assert "nickname" not in schema(api, "main")["users"]


def test_lint_reads_the_server(api, dataplane):
    dev_branch(api, "dev")
    with connect(api, dataplane, "dev", "admin") as connection:
        run(connection, "CREATE TABLE events (name varchar(64), UNIQUE KEY (name))")  # nullable: no unique key
    lint = api.get(f"{DB}/branches/dev/schema/lint").json()["data"]
    assert [(e["table_name"], e["lint_error"]) for e in lint] == [("events", "NO_UNIQUE_KEY")]


@pytest.mark.parametrize("statement, says", [("CREATE TABLE users (id int)", "Table 'users' already exists")])
def test_the_ddl_endpoint_runs_on_the_server_and_answers_its_message(api, dataplane, statement, says):
    dev_branch(api, "dev")
    answer = api.control("POST", "/branches/acme/app/dev/ddl", json={"statements": [
        "CREATE TABLE notes (id bigint NOT NULL PRIMARY KEY)", statement]})
    assert answer.status_code == 422 and says in answer.json()["message"]
    with connect(api, dataplane, "dev", "reader") as connection:
        assert sorted(row[0] for row in run(connection, "SHOW TABLES")) == ["notes", "users"]
    assert api.get(MAIN + "/schema").status_code == 200


def server_schemas(dataplane, pattern):
    admin = dataplane.config["mysql"]
    connection = pymysql.connect(unix_socket=admin["socket"], user=admin["user"])
    with connection, connection.cursor() as cursor:
        cursor.execute("SHOW DATABASES LIKE %s", [pattern])
        return sorted(row[0] for row in cursor.fetchall())


def test_seeding_and_reading_make_no_schema_until_one_is_needed(api, dataplane):
    fixtures = {"databases": {"count": 10, "branches": 2}, "branches": {"count": 3, "prefix": "load"}}
    seeded = api.control("POST", "/seed", json=fixtures)
    assert seeded.status_code == 200, seeded.text
    assert server_schemas(dataplane, "db-%") == [] and server_schemas(dataplane, "app%") == []
    assert schema(api, "load-1") == schema(api, "main") and list(schema(api, "main")) == ["users"]  # the template
    assert api.get("/v1/organizations/acme/databases/db-1/branches/dev-1/schema").json()["data"] == []
    assert server_schemas(dataplane, "app%") == []
    password(api, "load-2", "reader")  # a password needs its branch's schema: made from the seed template
    assert server_schemas(dataplane, "app%") == ["app__load-2"]


def test_a_dropped_table_comes_back_with_its_rows_at_a_revert(api, dataplane):
    with connect(api, dataplane, "main", "readwriter") as production:
        run(production, "INSERT INTO users (email) VALUES ('a@example.test')")
    dev_branch(api, "dev")
    with connect(api, dataplane, "dev", "admin") as connection:
        run(connection, "CREATE TABLE keep_me (id bigint NOT NULL PRIMARY KEY)")
        run(connection, "DROP TABLE users")
    number, body = checked(api, "dev")
    assert sorted(operations(body)) == [("keep_me", "CREATE"), ("users", "DROP")]
    assert [op["can_drop_data"] for op in body["deployment"]["deploy_operations"]] == [False, True]
    act(api, number, "deploy")
    api.advance(2)
    with connect(api, dataplane, "main", "reader") as production:
        assert [row[0] for row in run(production, "SHOW TABLES")] == ["keep_me"]
    assert server_schemas(dataplane, "_emulator_kept") == ["_emulator_kept"]
    act(api, number, "revert")
    api.advance(1)
    with connect(api, dataplane, "main", "reader") as production:
        assert [row[0] for row in run(production, "SHOW TABLES")] == ["users"]
        assert run(production, "SELECT email FROM users") == (("a@example.test",),)


def kept_tables(dataplane):
    admin = dataplane.config["mysql"]
    connection = pymysql.connect(unix_socket=admin["socket"], user=admin["user"])
    with connection, connection.cursor() as cursor:
        cursor.execute("SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = '_emulator_kept'")
        return [row[0] for row in cursor.fetchall()]


def test_the_replaced_table_is_kept_for_the_revert_window_only(api, dataplane):
    dev_branch(api, "dev")
    with connect(api, dataplane, "dev", "admin") as connection:
        run(connection, "ALTER TABLE users ADD COLUMN nickname varchar(64)")
    number = deployed(api, "dev")
    assert len(kept_tables(dataplane)) == 1  # production's users as it was, for a revert
    act(api, number, "skip-revert")
    assert get(api, number)["deployment_state"] == "complete"
    assert kept_tables(dataplane) == []
