# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The role move_tables against the emulator, whose workflows move real rows between the keyspaces' schemas on the
data plane: the rows are written and counted through a password's own connection (TLS verified), which names the
keyspace it logs in to, as an application does. The guide's playbook runs as written in test_examples.py."""

from __future__ import annotations

import pymysql
import pytest

from conftest import role_play

DATABASE_PATH = "/organizations/acme/databases/app"
WORKFLOWS = "/v1%s/workflows/1/" % DATABASE_PATH
ROWS = 25
VSCHEMA = dict(sharded=True, vindexes=dict(hash=dict(type="hash")),
               tables=dict(users=dict(column_vindexes=[dict(column="id", name="hash")])))


def move(**more):
    values = dict(move_tables_database="app", move_tables_name="shard-users", move_tables_target_keyspace="sharded",
                  move_tables_tables=["users"], move_tables_target_shards=2, move_tables_target_cluster_size="PS_10",
                  move_tables_target_vschema=VSCHEMA)
    values.update(more)
    return values


@pytest.fixture
def rows(ansible, emulator):  # pylint: disable=unused-argument  # after the reset ansible makes
    """Short workflow steps, and ROWS users written through an admin password of main; answers a function that logs
    in with that password naming a keyspace and runs a statement there."""
    emulator.settings(workflow_copy_delay=0.2, workflow_step_delay=0.2)
    password = emulator.api("POST", DATABASE_PATH + "/branches/main/passwords", dict(name="rows", role="admin"))
    ansible.assert_no_secret(password["plain_text"])

    def run(keyspace, statement):
        return emulator.login(dict(host=password["access_host_url"], username=password["username"],
                                   password=password["plain_text"], database=keyspace), statement)[0]
    run("app", "INSERT INTO users (email) VALUES %s" % ", ".join("('user%d@example.com')" % n for n in range(ROWS)))
    return run


def workflow(emulator):
    return emulator.api("GET", DATABASE_PATH + "/workflows/1")


def actions(emulator):
    """The workflow actions in the request log, by the last segment of their path (a cancel is DELETE)."""
    return [write.split(WORKFLOWS)[1] for write in emulator.writes() if WORKFLOWS in write]


def test_move_tables_stops_before_the_switch_of_primaries_then_completes(ansible, emulator, rows, tmp_path):
    gated = role_play(tmp_path, "move_tables", move())
    emulator.clear_requests()
    checked = ansible.run(gated, check=True).succeeded()
    assert "Would send: create, verify-data, switch-replicas." in checked.output, checked.output
    assert emulator.writes() == []

    done = ansible.run(gated).succeeded(changed=5)  # keyspace, workflow, VSchema, the data check, replicas
    assert "Workflow shard-users (#1) is at phase replicas_switched" in done.output
    assert "It stops before the switch of primaries: run again with move_tables_cutover=true" in done.output
    assert actions(emulator) == ["verify-data", "switch-replicas"]
    assert workflow(emulator)["state"] == "switched_replicas"
    assert rows("sharded", "SELECT COUNT(*) FROM users") == [(ROWS,)]  # copied into the target keyspace's schema

    emulator.clear_requests()
    ansible.run(gated).succeeded(changed=0)
    assert emulator.writes() == []

    cutover = role_play(tmp_path, "move_tables", move(move_tables_cutover=True), name="cutover.yml")
    done = ansible.run(cutover).succeeded(changed=2)  # primaries; cutover and complete
    assert "Workflow shard-users (#1) is at phase completed" in done.output
    assert actions(emulator) == ["switch-primaries", "cutover", "complete"]
    assert workflow(emulator)["state"] in ("completed", "complete")
    assert rows("sharded", "SELECT COUNT(*) FROM users") == [(ROWS,)]
    with pytest.raises(pymysql.MySQLError) as gone:  # cut over: the source keyspace has the table no more
        rows("app", "SELECT COUNT(*) FROM users")
    assert gone.value.args[0] == 1146

    emulator.clear_requests()
    ansible.run(cutover).succeeded(changed=0)
    assert emulator.writes() == []


def test_move_tables_stops_before_any_switch_when_a_row_differs(ansible, emulator, rows, tmp_path):
    """A row changed in the target keyspace alone: the data check finds it, and the role names the table."""
    emulator.api("POST", DATABASE_PATH + "/branches/main/keyspaces", dict(name="sharded", shards=2,
                                                                          cluster_size="PS_10"))
    emulator.api("POST", DATABASE_PATH + "/workflows", dict(name="shard-users", source_keyspace="app",
                                                            target_keyspace="sharded", tables=["users"]))
    emulator.advance(1)
    assert workflow(emulator)["state"] == "running"  # the read copies the rows
    rows("sharded", "UPDATE users SET email = 'changed@example.com' WHERE id = 1")

    emulator.clear_requests()
    ansible.run(role_play(tmp_path, "move_tables", move(move_tables_cutover=True))).failed(
        "Workflow 'shard-users' (#1) of database 'app' found differences between the source and the target keyspace",
        "table 'users' (1 mismatched row, 0 only in the source, 0 only in the target)",
        "Traffic is not switched")
    assert actions(emulator) == ["verify-data"]
    assert workflow(emulator)["state"] == "running"


def test_move_tables_reverse_returns_the_traffic_to_the_source_with_its_rows(ansible, emulator, rows, tmp_path):
    ansible.run(role_play(tmp_path, "move_tables", move(move_tables_cutover=True, move_tables_complete=False))
                ).succeeded()
    assert workflow(emulator)["state"] == "switched_primaries"
    # the source keyspace's queries of users go to the target now: a row written there lands in the target
    rows("app", "INSERT INTO users (email) VALUES ('switched@example.com')")
    assert rows("sharded", "SELECT COUNT(*) FROM users") == [(ROWS + 1,)]

    reverse = role_play(tmp_path, "move_tables", dict(move_tables_database="app", move_tables_name="shard-users",
                                                      move_tables_reverse=True), name="reverse.yml")
    emulator.clear_requests()
    done = ansible.run(reverse).succeeded(changed=1)
    assert "Workflow shard-users (#1) is at phase reversed" in done.output
    assert actions(emulator) == ["reverse-traffic"]
    assert workflow(emulator)["state"] == "running"
    # the source keyspace has its own table again, with every row, the one written while switched too
    assert rows("app", "SELECT COUNT(*), MAX(email = 'switched@example.com') FROM users") == [(ROWS + 1, 1)]
    assert rows("app", "SELECT table_type FROM information_schema.tables WHERE table_schema = DATABASE() "
                       "AND table_name = 'users'") == [("BASE TABLE",)]

    emulator.clear_requests()
    ansible.run(reverse).succeeded(changed=0)
    assert emulator.writes() == []
