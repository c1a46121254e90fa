# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Restore drills: the restore_drill role and playbook, and branch_environment's restore_from_backup.

The restored branch must hold the backup's schema, not its source branch's schema of now: the tests take a
backup of a development branch, change the branch's schema afterwards, and log in with the drill's password
(the emulator's stand-in for a MySQL login) to see the tables the restored branch has.
"""

from __future__ import annotations

import json

import pymysql
import pytest

from conftest import mode, role_play

DB = "/organizations/acme/databases/app"


def backup_then_change(emulator, before_backup=None):
    """A branch 'staging' whose backup 'before-later' holds the table orders (and what before_backup writes); the
    table later came after it."""
    emulator.api("POST", DB + "/branches", dict(name="staging", parent_branch="main"))
    emulator.advance(2)  # ready
    emulator.ddl("app", "staging", ["CREATE TABLE orders (id bigint PRIMARY KEY)"])
    if before_backup is not None:
        before_backup()
    backup = emulator.api("POST", DB + "/branches/staging/backups", dict(name="before-later"))
    emulator.advance(5)  # pending, running, success
    assert emulator.api("GET", DB + "/branches/staging/backups/" + backup["id"])["state"] == "success"
    emulator.ddl("app", "staging", ["CREATE TABLE later (id bigint PRIMARY KEY)"])
    return backup


def test_restore_drill_playbook(ansible, emulator, tmp_path):
    backup = backup_then_change(emulator)
    connection_file = tmp_path / "drill.json"
    present = dict(restore_database="app", restore_source_branch="staging",
                   restore_connection_file=str(connection_file))

    emulator.clear_requests()
    ansible.run("planetscale.cloud.restore_drill", extra_vars=present, check=True).succeeded(changed=1)
    assert emulator.writes() == []
    assert not connection_file.exists()

    first = ansible.run("planetscale.cloud.restore_drill", extra_vars=present).succeeded(changed=3)
    assert "Branch restore-drill holds backup before-later (%s) of staging." % backup["id"] in first.output
    assert mode(connection_file) == "0o600"
    connection = json.loads(connection_file.read_text())
    # a real login with the file (PyMySQL, the CA and the host verified): the restored branch's schema
    assert emulator.login(connection, "SELECT DATABASE()", "SHOW TABLES") == [
        [("app__restore-drill",)], [("orders",), ("users",)]]  # the backup's tables: not 'later'
    restored = emulator.api("GET", DB + "/branches/restore-drill")
    assert restored["ready"] is True and restored["parent_branch"] == "staging"
    creates = [write for write in emulator.writes() if write.startswith("POST ") and write.endswith(DB + "/branches")]
    assert len(creates) == 1

    emulator.clear_requests()
    again = ansible.run("planetscale.cloud.restore_drill", extra_vars=present).succeeded(changed=0)
    assert emulator.writes() == []
    assert "Branch restore-drill is ready." in again.output

    absent = dict(present, restore_state="absent")
    emulator.clear_requests()
    ansible.run("planetscale.cloud.restore_drill", extra_vars=absent, check=True).succeeded(changed=3)
    assert emulator.writes() == []
    ansible.run("planetscale.cloud.restore_drill", extra_vars=absent).succeeded(changed=3)
    assert not connection_file.exists()
    assert "restore-drill" not in [branch["name"] for branch in emulator.list(DB + "/branches")]
    with pytest.raises(pymysql.err.OperationalError) as refused:
        emulator.login(connection)  # the password went with the branch
    assert refused.value.args[0] == 1045
    ansible.run("planetscale.cloud.restore_drill", extra_vars=absent).succeeded(changed=0)

    ansible.assert_no_secret(connection["password"])


# The drill's check (restore_drill_check_tasks): the restored rows read through the drill's password, a real
# login (PyMySQL, TLS verified against the emulator's CA). The content tests run without community.mysql, so the
# tasks file runs PyMySQL from ansible-playbook's own Python; a user's file has community.mysql.mysql_query.
COUNT_ROWS = """
import os, sys
import pymysql
host, _, named = os.environ["DRILL_HOST"].partition(":")  # a host that names its port, or the port apart
connection = pymysql.connect(host=host, port=int(os.environ["DRILL_PORT"] or named), user=os.environ["DRILL_USER"],
                             password=os.environ["DRILL_PASSWORD"], database=os.environ["DRILL_DATABASE"],
                             ssl_ca=os.environ["DRILL_CA"], ssl_verify_cert=True, ssl_verify_identity=True)
with connection, connection.cursor() as cursor:
    cursor.execute("SELECT COUNT(*) FROM orders")
    print(cursor.fetchone()[0])
"""
CHECK_TASKS = """
- name: Count the orders of the restored branch through the drill's password
  ansible.builtin.command:
    argv: ["{{ ansible_playbook_python }}", "-c", %s]
  environment:
    DRILL_HOST: "{{ restore_drill_connection.host }}"
    DRILL_PORT: "{{ restore_drill_connection.port | default('') }}"
    DRILL_USER: "{{ restore_drill_connection.username }}"
    DRILL_PASSWORD: "{{ restore_drill_connection.password }}"
    DRILL_DATABASE: "{{ drill_database }}"
    DRILL_CA: "{{ drill_ca_file }}"
  register: drill_orders
  changed_when: false

- name: The restored branch holds the orders of the backup
  ansible.builtin.assert:
    that: drill_orders.stdout | int == drill_orders_expected | int
    fail_msg: "The restored branch holds {{ drill_orders.stdout }} orders, not {{ drill_orders_expected }}."
    success_msg: "The restored branch holds {{ drill_orders.stdout }} orders."
""" % json.dumps(COUNT_ROWS)


def server_schema(emulator, branch):
    """The database a login names for a branch: the database's name through the emulator's MySQL edge, else the
    branch's schema on MariaDB."""
    return "app" if "mysql_edge" in emulator.world.get("dataplane", {}) else "app__" + branch


def write_orders(emulator, branch, ids):
    """Rows of orders written through a real login with a readwriter password of the branch."""
    created = emulator.api("POST", DB + "/branches/%s/passwords" % branch, dict(name="writer-%d" % ids[0],
                                                                                role="readwriter"))
    host, port = created["access_host_url"].rsplit(":", 1)
    connection = pymysql.connect(host=host, port=int(port), user=created["username"], password=created["plain_text"],
                                 database=server_schema(emulator, branch), ssl_ca=emulator.world["ca_file"],
                                 ssl_verify_cert=True, ssl_verify_identity=True, autocommit=True)
    with connection, connection.cursor() as cursor:
        cursor.executemany("INSERT INTO orders (id) VALUES (%s)", [(i,) for i in ids])


def test_restore_drill_checks_the_rows_of_the_backup(ansible, emulator, tmp_path):
    backup = backup_then_change(emulator, before_backup=lambda: write_orders(emulator, "staging", [1, 2, 3]))
    write_orders(emulator, "staging", [4])  # after the backup: not restored
    check = tmp_path / "check.yml"
    check.write_text(CHECK_TASKS)
    role_vars = dict(restore_drill_database="app", restore_drill_source_branch="staging",
                     restore_drill_backup=backup["id"], restore_drill_check_tasks=str(check),
                     restore_drill_connection_file=str(tmp_path / "drill.json"),
                     drill_database=server_schema(emulator, "restore-drill"), drill_ca_file=emulator.world["ca_file"],
                     drill_orders_expected=3)
    ran = ansible.run(role_play(tmp_path, "restore_drill", role_vars)).succeeded(changed=3)  # branch, password, file
    assert "The restored branch holds 3 orders." in ran.output
    playbook = dict(restore_database="app", restore_source_branch="staging", restore_check_tasks=str(check),
                    restore_connection_file=str(tmp_path / "drill.json"),
                    **{key: value for key, value in role_vars.items() if key.startswith("drill_")})
    ran = ansible.run("planetscale.cloud.restore_drill", extra_vars=playbook).succeeded(changed=0)
    assert "The restored branch holds 3 orders." in ran.output

    ansible.run(role_play(tmp_path, "restore_drill", dict(role_vars, drill_orders_expected=4))).failed(
        "The restored branch holds 3 orders, not 4.")
    ansible.run(role_play(tmp_path, "restore_drill", dict(role_vars, restore_drill_check_tasks="missing.yml"))).failed(
        'restore_drill_check_tasks is "missing.yml", and')
    ansible.assert_no_secret(json.loads((tmp_path / "drill.json").read_text())["password"])


def test_restore_drill_role_restores_a_named_backup(ansible, emulator, tmp_path):
    seeded = emulator.world["backups"]["main"]  # 36, 24 and 12 hours old
    role_vars = dict(restore_drill_database="app", restore_drill_backup="main-24h-ago", restore_drill_name="drill-24h",
                     restore_drill_cluster_size="PS_20")
    after = """
    - name: The drill restored the backup named
      ansible.builtin.assert:
        that:
          - restore_drill_backup_restored.id == %s
          - restore_drill_branch.name == 'drill-24h'
          - restore_drill_connection.password is match('pscale_pw_')
        quiet: true
    """ % json.dumps(seeded[1])
    ansible.run(role_play(tmp_path, "restore_drill", role_vars, after=after)).succeeded(changed=2)  # branch, password
    restored = emulator.api("GET", DB + "/branches/drill-24h")
    assert restored["cluster_name"] == "PS_20"
    backup = emulator.api("GET", DB + "/branches/main/backups/" + seeded[1])
    assert [branch["name"] for branch in backup["restored_branches"]] == ["drill-24h"]


@pytest.mark.parametrize("role_vars, message", [
    (dict(restore_drill_backup="no-such-backup"),
     'Branch "main" of database "app" has no successful backup with the id or name "no-such-backup" to restore'),
    (dict(restore_drill_name="main"),
     'restore_drill_name and restore_drill_source_branch are both "main": the drill restores into a new branch'),
], ids=["no-such-backup", "into-its-source"])
def test_restore_drill_refuses_with_a_sentence(ansible, emulator, tmp_path, role_vars, message):
    emulator.clear_requests()
    ansible.run(role_play(tmp_path, "restore_drill", dict(restore_drill_database="app", **role_vars))).failed(message)
    assert emulator.writes() == []


def test_branch_environment_restores_the_latest_backup(ansible, emulator, tmp_path):
    backup_then_change(emulator)
    emulator.ddl("app", "staging", ["DROP TABLE later"])
    newer = emulator.api("POST", DB + "/branches/staging/backups", dict(name="newest"))
    emulator.advance(5)
    emulator.ddl("app", "staging", ["CREATE TABLE later (id bigint PRIMARY KEY)"])
    connection_file = tmp_path / "pr-8.json"
    role_vars = dict(branch_environment_database="app", branch_environment_name="pr-8",
                     branch_environment_parent_branch="staging", branch_environment_restore_from_backup="latest",
                     branch_environment_connection_file=str(connection_file))
    ansible.run(role_play(tmp_path, "branch_environment", role_vars)).succeeded(changed=3)
    connection = json.loads(connection_file.read_text())
    assert emulator.login(connection, "SHOW TABLES") == [[("orders",), ("users",)]]
    backup = emulator.api("GET", DB + "/branches/staging/backups/" + newer["id"])
    assert [branch["name"] for branch in backup["restored_branches"]] == ["pr-8"]


def test_branch_environment_needs_a_cluster_size_with_a_backup_id(ansible, emulator, tmp_path):
    role_vars = dict(branch_environment_database="app", branch_environment_name="pr-8",
                     branch_environment_restore_from_backup=emulator.world["backups"]["main"][0])
    emulator.clear_requests()
    ansible.run(role_play(tmp_path, "branch_environment", role_vars)).failed(
        "so branch_environment_cluster_size is needed too")
    assert emulator.requests() == []
