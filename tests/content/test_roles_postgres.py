# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""branch_environment on a PostgreSQL database: a ready branch, a role instead of a password, a postgresql://
connection in a 0600 file; a second run changed=0, check mode that writes nothing, a lost secret, absent."""

from __future__ import annotations

import json
from urllib.parse import quote

from conftest import mode, role_play
from test_roles import capacity_example

DATABASE = "pgapp"  # the emulator's seeded PostgreSQL database
BRANCH = "/organizations/acme/databases/pgapp/branches/pr-7"

CHECK_CONNECTION = """
- name: The fact holds the secret written to the file, and formats as the file's URL
  ansible.builtin.assert:
    that:
      - branch_environment_connection.password == kept.password
      - branch_environment_connection.username == kept.username
      - branch_environment_connection.kind == 'postgresql'
      - branch_environment_connection.host == kept.host
      - branch_environment_connection.port == kept.port
      - branch_environment_role.password is not defined
      - branch_environment_role.username == kept.username
      - branch_environment_password == {}
      - (branch_environment_connection | planetscale.cloud.connection_url) is match('postgresql://')
    fail_msg: the connection fact does not match the connection file
    quiet: true
  vars:
    kept: "{{ lookup('ansible.builtin.file', branch_environment_connection_file) | from_json }}"
"""


def branch_vars(tmp_path, **more):
    role_vars = dict(branch_environment_database=DATABASE, branch_environment_name="pr-7",
                     branch_environment_connection_file=str(tmp_path / "pr-7.json"))
    role_vars.update(more)
    return role_vars


def env_lines(path):
    return dict(line.split("=", 1) for line in path.read_text().splitlines() if line and not line.startswith("#"))


def roles(emulator):
    return emulator.api("GET", BRANCH + "/roles")["data"]


def logs_in(emulator, connection):
    """A real login with the connection details as the file holds them (psycopg, sslmode=verify-full against the
    data plane's CA): True when the server lets the role in as itself, False when it refuses the secret."""
    import psycopg

    try:
        return emulator.login(connection, "SELECT current_user") == [[(connection["username"],)]]
    except psycopg.OperationalError as error:
        assert "password authentication failed" in str(error), error
        return False


def env_connection(lines):
    return dict(kind="postgresql", host=lines["DATABASE_HOST"], port=int(lines["DATABASE_PORT"]),
                username=lines["DATABASE_USERNAME"], password=lines["DATABASE_PASSWORD"],
                database=lines["DATABASE_NAME"])


def test_branch_environment_on_postgres(ansible, emulator, tmp_path):
    role_vars = branch_vars(tmp_path)
    play = role_play(tmp_path, "branch_environment", role_vars, after=CHECK_CONNECTION)
    connection_file = tmp_path / "pr-7.json"

    checked = ansible.run(role_play(tmp_path, "branch_environment", role_vars, name="check.yml"),
                          check=True).succeeded(changed=1)
    assert "would be created from main, then its role." in checked.output
    assert emulator.writes() == []
    assert not connection_file.exists()

    ansible.run(play, args=["-vvv"]).succeeded(changed=3)  # branch, role, file; no secret even at -vvv
    assert mode(connection_file) == "0o600"
    connection = json.loads(connection_file.read_text())
    assert sorted(connection) == ["branch", "database", "host", "kind", "password", "port", "username"]
    assert connection["kind"] == "postgresql" and connection["branch"] == "pr-7"
    assert connection["password"].startswith("pscale_pw_")
    branch = emulator.api("GET", BRANCH)
    assert branch["ready"] is True and branch["kind"] == "postgresql" and branch["parent_branch"] == "main"
    made = [role for role in roles(emulator) if role["name"] == "app"]
    assert [role["username"] for role in made] == [connection["username"]]
    assert sorted(made[0]["inherited_roles"]) == ["pg_read_all_data", "pg_write_all_data"]  # readwriter
    # the role's host and port (the platform's access_host_url names no port, 5432; the emulator's names its server's)
    assert "%s:%d" % (connection["host"], connection["port"]) == made[0]["access_host_url"]
    assert logs_in(emulator, connection)  # the file connects as written

    emulator.clear_requests()
    ansible.run(play, args=["-vvv"]).succeeded(changed=0)  # the fact has the secret, from the file
    assert emulator.writes() == []

    ansible.assert_no_secret(connection["password"])


def test_postgres_env_file_a_lost_secret_and_its_reset(ansible, emulator, tmp_path):
    env_file = tmp_path / "pr-7.env"
    role_vars = branch_vars(tmp_path, branch_environment_connection_file=str(env_file),
                            branch_environment_connection_file_format="env", branch_environment_password_role="reader")
    play = role_play(tmp_path, "branch_environment", role_vars)
    ansible.run(play).succeeded(changed=3)
    lines = env_lines(env_file)
    assert sorted(lines) == ["DATABASE_BRANCH", "DATABASE_HOST", "DATABASE_NAME", "DATABASE_PASSWORD", "DATABASE_PORT",
                             "DATABASE_URL", "DATABASE_USERNAME"]
    assert lines["DATABASE_URL"] == "postgresql://%s:%s@%s:%s/%s?sslmode=verify-full" % (
        quote(lines["DATABASE_USERNAME"], safe=""), quote(lines["DATABASE_PASSWORD"], safe=""),
        lines["DATABASE_HOST"], lines["DATABASE_PORT"], lines["DATABASE_NAME"])
    assert logs_in(emulator, env_connection(lines))
    assert lines["DATABASE_BRANCH"] == "pr-7" and mode(env_file) == "0o600"
    assert [role["inherited_roles"] for role in roles(emulator) if role["name"] == "app"] == [["pg_read_all_data"]]
    emulator.clear_requests()
    ansible.run(play).succeeded(changed=0)
    assert emulator.writes() == []

    env_file.unlink()
    ansible.run(play).failed(
        "its secret is not in %s and the platform shows it only once" % env_file,
        "set branch_environment_replace_lost_password to true")
    assert emulator.writes() == []

    resetting = role_play(tmp_path, "branch_environment", dict(
        role_vars, branch_environment_replace_lost_password=True), name="reset.yml")
    ansible.run(resetting, check=True).succeeded(changed=1)  # the reset; no file without a secret
    assert emulator.writes() == [] and not env_file.exists()
    ansible.run(resetting).succeeded(changed=2)  # reset, file
    new = env_lines(env_file)
    assert [write.split()[0] for write in emulator.writes()] == ["POST"]
    assert emulator.writes()[0].endswith("/reset")
    assert new["DATABASE_USERNAME"] == lines["DATABASE_USERNAME"]  # the same role, a new secret
    assert new["DATABASE_PASSWORD"] != lines["DATABASE_PASSWORD"]
    assert logs_in(emulator, env_connection(new))
    assert not logs_in(emulator, env_connection(lines))  # the secret before the reset is refused
    ansible.run(resetting).succeeded(changed=0)
    ansible.assert_no_secret(lines["DATABASE_PASSWORD"], new["DATABASE_PASSWORD"])


def test_postgres_refuses_allowed_networks(ansible, emulator, tmp_path):
    play = role_play(tmp_path, "branch_environment", branch_vars(
        tmp_path, branch_environment_password_cidrs=["10.0.0.0/8"]))
    ansible.run(play).failed("a role has no allowed networks: leave branch_environment_password_cidrs out")
    assert not [write for write in emulator.writes() if "/roles" in write]


def test_postgres_absent(ansible, emulator, tmp_path):
    connection_file = tmp_path / "pr-7.json"
    ansible.run(role_play(tmp_path, "branch_environment", branch_vars(tmp_path))).succeeded(changed=3)
    absent = role_play(tmp_path, "branch_environment", branch_vars(
        tmp_path, branch_environment_state="absent"), name="absent.yml")

    emulator.clear_requests()
    ansible.run(absent, check=True).succeeded(changed=3)
    assert emulator.writes() == [] and connection_file.exists()

    ansible.run(absent).succeeded(changed=3)  # role, branch, file
    assert not connection_file.exists()
    assert [write.split()[0] for write in emulator.writes()] == ["DELETE", "DELETE"]
    assert "/roles/" in emulator.writes()[0]
    branches = emulator.api("GET", "/organizations/acme/databases/pgapp/branches")["data"]
    assert [b["name"] for b in branches] == ["main"]
    emulator.clear_requests()
    ansible.run(absent).succeeded(changed=0)
    assert emulator.writes() == []


def test_postgres_capacity_alone_creates_no_role(ansible, emulator, tmp_path):
    """The README's example: replicas and parameters alone on the production branch, one change request, no role (its
    secret would be kept nowhere); a second run writes nothing."""
    emulator.settings(change_step_delay=0.2)
    main = "/organizations/acme/databases/pgapp/branches/main"
    before = emulator.api("GET", main + "/roles")["data"]
    play = capacity_example(tmp_path, 1)

    run = ansible.run(play).succeeded(changed=1)
    assert [write.split()[0] for write in emulator.writes()] == ["PATCH"]  # the change request, no role
    assert "Connect to" not in run.output
    capacity = emulator.control("GET", "/branches/acme/pgapp/main/capacity")
    assert (capacity["replicas"], capacity["parameters"]["pgconf"]["work_mem"]) == (2, "8192"), capacity

    emulator.clear_requests()
    ansible.run(play).succeeded(changed=0)
    assert emulator.writes() == []
    assert emulator.api("GET", main + "/roles")["data"] == before
