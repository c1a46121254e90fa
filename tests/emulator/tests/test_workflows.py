"""MoveTables workflows (issue 46): every workflow operation on the emulator clock, moving real rows between keyspace
schemas on MariaDB, counted through real connections (TLS verified) that name a keyspace at login: the copy and
forward replication, a data check that finds a row changed in the target only, the traffic switched (a client of
the source keyspace reads and writes the target's rows) and reversed (the source table back with the rows written
meanwhile), the cutover dropping the source table, cancel dropping the target's; the refusals; the recorded shapes.

Every answer is validated against the published OpenAPI after the test (conftest.openapi_check)."""

import json

import pymysql
import pytest

from .conftest import DB, MAIN
from .openapi_check import Exchange
from .test_dataplane import mysql_login, run
from .test_keyspaces import create, ok, refused

WORKFLOWS = f"{DB}/workflows"
ORDERS = "CREATE TABLE orders (id bigint NOT NULL PRIMARY KEY, total int, note varchar(20))"
NO_SUCH_TABLE = 1146


def orders(api, *values):
    """Table orders in the default keyspace (app) of production (main), with rows, and keyspace shop (2 shards);
    main without safe migrations, so that the control API's DDL reaches it."""
    ok(api.delete(f"{MAIN}/safe-migrations"))
    statements = [ORDERS] + [f"INSERT INTO orders VALUES {value}" for value in values]
    ok(api.control("POST", "/branches/acme/app/main/ddl", json={"statements": statements}))
    create(api, name="shop", shards=2)


def start(api, name="move", tables=("orders",), **body):
    made = ok(api.post(WORKFLOWS, json={"name": name, "source_keyspace": "app", "target_keyspace": "shop",
                                        "tables": list(tables), **body}), 201)
    return made["number"]


def act(api, number, action, state):
    """The action sent; its answer's state checked; the workflow read after its step."""
    method, path = ("DELETE", f"{WORKFLOWS}/{number}") if action == "cancel" else (
        "PATCH", f"{WORKFLOWS}/{number}/{action}")
    assert ok(api.call(method, path))["state"] == state
    api.advance(1)
    return ok(api.get(f"{WORKFLOWS}/{number}"))


def password(api):
    return ok(api.post(f"{MAIN}/passwords", json={"name": "mover", "role": "readwriter"}), 201)


def rows(dataplane, login, keyspace, statement="SELECT id, total FROM orders ORDER BY id"):
    with mysql_login(dataplane, login, schema=keyspace) as connection:
        return run(connection, statement)


def missing_table(dataplane, login, keyspace):
    with pytest.raises(pymysql.err.ProgrammingError) as caught:
        rows(dataplane, login, keyspace)
    return caught.value.args[0] == NO_SUCH_TABLE


# ---------------------------------------------------------------- every phase, on real rows


def test_a_workflow_moves_real_rows_through_every_phase(api, dataplane):
    orders(api, "(1, 10, 'a')", "(2, 20, 'b')", "(3, 30, 'c')")
    login = password(api)
    number = start(api)
    made = ok(api.get(f"{WORKFLOWS}/{number}"))
    assert (made["state"], made["workflow_type"], made["source_keyspace"]["name"]) == ("copying", "move_tables", "app")
    assert [(t["name"], t["rows_copied"], t["rows_total"]) for t in made["tables"]] == [("orders", 0, 3)]
    assert [s["target_shard"] for s in made["streams"]] == ["-80", "80-"] and made["vdiff"] is None
    assert rows(dataplane, login, "shop") == ()  # made like the source's, rows to come
    api.advance(1)
    running = ok(api.get(f"{WORKFLOWS}/{number}"))
    assert running["state"] == "running" and running["data_copy_completed_at"] is not None
    assert running["tables"][0]["rows_copied"] == 3 and rows(dataplane, login, "shop") == ((1, 10), (2, 20), (3, 30))
    with mysql_login(dataplane, login, schema="app") as connection:  # forward replication
        run(connection, "INSERT INTO orders VALUES (4, 40, 'd')")
        run(connection, "UPDATE orders SET total = 11 WHERE id = 1")
        run(connection, "DELETE FROM orders WHERE id = 2")
    assert rows(dataplane, login, "shop") == ((1, 11), (3, 30), (4, 40))

    verified = act(api, number, "verify-data", "verifying_data")
    assert verified["state"] == "verified_data" and verified["verify_data_at"] is not None
    assert verified["vdiff"]["has_mismatch"] is False and verified["verified_data_stale"] is False
    reports = verified["vdiff"]["table_reports"]
    assert [(r["table_name"], r["mismatched_rows_count"]) for r in reports] == [("orders", 0)]
    replicas = act(api, number, "switch-replicas", "switching_replicas")
    assert (replicas["state"], replicas["replicas_switched"], replicas["primaries_switched"]) == (
        "switched_replicas", True, False)
    primaries = act(api, number, "switch-primaries", "switching_primaries")
    assert (primaries["state"], primaries["primaries_switched"]) == ("switched_primaries", True)
    with mysql_login(dataplane, login, schema="app") as connection:  # the source keyspace's client, routed
        run(connection, "INSERT INTO orders VALUES (5, 50, 'e')")
        run(connection, "UPDATE orders SET total = 31 WHERE id = 3")
        assert run(connection, "SELECT COUNT(*) FROM orders") == ((4,),)
    assert rows(dataplane, login, "shop") == ((1, 11), (3, 31), (4, 40), (5, 50))
    assert [t["name"] for t in ok(api.get(f"{MAIN}/schema", params={"keyspace": "app"}))["data"]] == ["users"]

    reversed_ = act(api, number, "reverse-traffic", "reversing_traffic")
    assert (reversed_["state"], reversed_["primaries_switched"]) == ("running", False)
    assert reversed_["reversed_at"] is not None
    with mysql_login(dataplane, login, schema="app") as connection:  # the source table, with the rows written since
        assert run(connection, "SELECT TABLE_TYPE FROM information_schema.TABLES WHERE TABLE_NAME = 'orders' "
                               "AND TABLE_SCHEMA = DATABASE()") == (("BASE TABLE",),)
        assert run(connection, "SELECT id, total FROM orders ORDER BY id") == ((1, 11), (3, 31), (4, 40), (5, 50))
        run(connection, "INSERT INTO orders VALUES (6, 60, 'f')")  # replicated forward again
    assert rows(dataplane, login, "shop")[-1] == (6, 60)

    assert act(api, number, "switch-primaries", "switching_primaries")["state"] == "switched_primaries"
    cut = act(api, number, "cutover", "cutting_over")
    assert cut["state"] == "cutover" and cut["cutover_at"] is not None
    assert missing_table(dataplane, login, "app")  # the moved table left the source keyspace, routing ended
    assert len(rows(dataplane, login, "shop")) == 5
    assert act(api, number, "reverse-cutover", "reversed_cutover")["state"] == "reversed_cutover"
    assert len(rows(dataplane, login, "app")) == 5  # routed to the target again
    done = act(api, number, "complete", "completed")
    assert done["state"] == "completed" and done["completed_at"] is not None
    assert missing_table(dataplane, login, "app")
    assert rows(dataplane, login, "shop") == ((1, 11), (3, 31), (4, 40), (5, 50), (6, 60))
    listed = ok(api.get(WORKFLOWS))
    assert [(w["number"], w["state"]) for w in listed["data"]] == [(number, "completed")]
    ok(api.delete(f"{MAIN}/keyspaces/shop"), 204)  # no live workflow uses it any more


def test_a_row_changed_in_the_target_only_is_a_difference(api, dataplane):
    api.control("POST", "/settings", json={"workflow_verify_stale_after": 100})
    orders(api, "(1, 10, 'a')", "(2, 20, 'b')", "(3, 30, 'c')")
    login = password(api)
    number = start(api)
    api.advance(1)
    assert ok(api.get(f"{WORKFLOWS}/{number}"))["state"] == "running"  # read: the copy's statements have run
    with mysql_login(dataplane, login, schema="shop") as connection:  # the target only: not carried back
        run(connection, "UPDATE orders SET note = 'tampered' WHERE id = 1")
        run(connection, "DELETE FROM orders WHERE id = 2")
        run(connection, "INSERT INTO orders VALUES (9, 90, 'z')")
    checked = act(api, number, "verify-data", "verifying_data")
    assert checked["state"] == "running" and checked["vdiff"]["has_mismatch"] is True
    report = checked["vdiff"]["table_reports"][0]
    assert (report["table_name"], report["shard"], report["mismatched_rows_count"], report["extra_source_rows_count"],
            report["extra_target_rows_count"]) == ("orders", "-", 1, 1, 1)
    assert report["mismatched_rows"] == [{"source": {"id": 1, "total": 10, "note": "a"},
                                          "target": {"id": 1, "total": 10, "note": "tampered"}}]
    assert report["extra_source_rows"] == [{"id": 2, "total": 20, "note": "b"}]
    assert report["sample_extra_target_rows_query"] == "SELECT * FROM `orders` WHERE `id` IN (9)"
    with mysql_login(dataplane, login, schema="shop") as connection:
        run(connection, "REPLACE INTO orders VALUES (1, 10, 'a'), (2, 20, 'b')")
        run(connection, "DELETE FROM orders WHERE id = 9")
    assert act(api, number, "switch-replicas", "switching_replicas")["state"] == "switched_replicas"
    again = act(api, number, "verify-data", "verifying_data")  # from switched replicas, back there
    assert again["state"] == "switched_replicas" and again["vdiff"]["has_mismatch"] is False
    assert again["vdiff"]["id"] != checked["vdiff"]["id"]
    api.advance(100)
    assert ok(api.get(f"{WORKFLOWS}/{number}"))["verified_data_stale"] is True
    assert "used by workflow 'move'" in refused(api.delete(f"{MAIN}/keyspaces/shop"))


def test_cancel_restores_the_source_and_drops_the_target_tables(api, dataplane):
    orders(api, "(1, 10, 'a')")
    ok(api.control("POST", "/branches/acme/app/main/ddl", json={"statements": [
        "CREATE TABLE items (id bigint PRIMARY KEY)", "INSERT INTO items VALUES (7)"]}))
    login = password(api)
    number = start(api)
    api.advance(1)
    act(api, number, "switch-primaries", "switching_primaries")
    with mysql_login(dataplane, login, schema="app") as connection:
        run(connection, "INSERT INTO orders VALUES (2, 20, 'b')")  # through the view, into the target
    cancelling = act(api, number, "cancel", "reversing_traffic_for_cancel")
    assert cancelling["state"] == "cancelling"
    api.advance(1)
    cancelled = ok(api.get(f"{WORKFLOWS}/{number}"))
    assert cancelled["state"] == "cancelled" and cancelled["cancelled_at"] is not None
    assert rows(dataplane, login, "app") == ((1, 10), (2, 20))  # the source table, with the row written meanwhile
    assert missing_table(dataplane, login, "shop")
    other = start(api, name="items", tables=["items"])  # a copying one: cancelled at once, its target table goes
    assert act(api, other, "cancel", "cancelling")["state"] == "cancelled"
    assert rows(dataplane, login, "shop", "SHOW TABLES") == ()
    assert rows(dataplane, login, "app", "SELECT id FROM items") == ((7,),)


def test_a_failed_copy_ends_in_error_and_is_retried(api, dataplane):
    api.control("POST", "/settings", json={"workflow_fail_state": "error"})
    orders(api, "(1, 10, 'a')", "(2, 20, 'b')")
    login = password(api)
    number = start(api)
    api.advance(1)
    failed = ok(api.get(f"{WORKFLOWS}/{number}"))
    assert (failed["state"], failed["may_retry"]) == ("error", True) and "orders" in failed["workflow_errors"]
    assert rows(dataplane, login, "shop") == ()
    api.control("POST", "/settings", json={"workflow_fail_state": None})
    retried = act(api, number, "retry", "copying")
    assert (retried["state"], retried["workflow_errors"], retried["may_retry"]) == ("running", "", False)
    assert retried["retried_at"] is not None and rows(dataplane, login, "shop") == ((1, 10), (2, 20))


def test_a_step_the_server_refuses_ends_in_error_and_cancel_restores_the_source(api, dataplane):
    orders(api, "(1, 10, 'a')")
    login = password(api)
    number = start(api)
    api.advance(1)
    assert ok(api.get(f"{WORKFLOWS}/{number}"))["state"] == "running"
    ok(api.control("POST", "/branches/acme/app/main/ddl", json={"keyspace": "shop", "statements": [
        "DROP TABLE orders"]}))  # behind the workflow's back
    failed = act(api, number, "switch-primaries", "switching_primaries")
    assert (failed["state"], failed["may_retry"]) == ("error", False)
    assert failed["workflow_errors"].startswith("switch: the server refused a statement") and "orders" in \
        failed["workflow_errors"]
    assert "may not be retried" in refused(api.patch(f"{WORKFLOWS}/{number}/retry"))
    assert act(api, number, "cancel", "cancelling")["state"] == "cancelled"
    assert rows(dataplane, login, "app") == ((1, 10),)


# ---------------------------------------------------------------- refusals, lists, shapes


def test_actions_a_state_does_not_allow_and_bad_creates_are_refused(api):
    orders(api, "(1, 10, 'a')")
    ok(api.control("POST", "/branches/acme/app/main/ddl", json={"statements": ["CREATE TABLE logs (body text)"]}))
    for body, words in [
            (dict(target_keyspace="app"), "are the same"),
            (dict(target_keyspace="nope"), "Keyspace 'nope' does not exist"),
            (dict(tables=["missing"]), "Table 'missing' does not exist in keyspace 'app'"),
            (dict(tables=["logs"]), "has no primary key"),
            (dict(tables=["orders", "orders"]), "each table is named once")]:
        asked = {"name": "bad", "source_keyspace": "app", "target_keyspace": "shop", "tables": ["orders"], **body}
        assert words in refused(api.post(WORKFLOWS, json=asked))
    for body in (dict(tables=[]), dict(on_ddl="NEVER"), dict(name=1)):
        asked = {"name": "bad", "source_keyspace": "app", "target_keyspace": "shop", "tables": ["orders"], **body}
        assert api.post(WORKFLOWS, json=asked).json()["code"] == "invalid_params"
    number = start(api)
    assert "is moved by workflow 'move'" in refused(api.post(WORKFLOWS, json={
        "name": "other", "source_keyspace": "app", "target_keyspace": "shop", "tables": ["orders"]}))
    message = refused(api.patch(f"{WORKFLOWS}/{number}/switch-primaries"))
    assert message.startswith("Workflow 'move' (#1) is in state 'copying'")
    api.advance(1)
    for action in ("cutover", "complete", "reverse-cutover", "reverse-traffic", "retry"):
        assert "in state 'running'" in refused(api.patch(f"{WORKFLOWS}/{number}/{action}"))
    ok(api.control("POST", "/branches/acme/app/main/ddl", json={"keyspace": "shop", "statements": [
        "CREATE TABLE logs (id bigint PRIMARY KEY)"]}))
    ok(api.control("POST", "/branches/acme/app/main/ddl", json={"statements": ["DROP TABLE logs",
                                                                            "CREATE TABLE logs (id int PRIMARY KEY)"]}))
    assert "already exists in keyspace 'shop'" in refused(api.post(WORKFLOWS, json={
        "name": "logs", "source_keyspace": "app", "target_keyspace": "shop", "tables": ["logs"]}))
    for action in ("switch-primaries", "cutover", "complete"):
        api.patch(f"{WORKFLOWS}/{number}/{action}")
        api.advance(1)
    assert "in state 'completed'" in refused(api.delete(f"{WORKFLOWS}/{number}"))
    assert refused(api.get(f"{WORKFLOWS}/99"), 404) == "Workflow not found"
    assert "PostgreSQL" in refused(api.get("/v1/organizations/acme/databases/pgapp/workflows"))


def test_the_list_pages_and_takes_between(api):
    orders(api)
    ok(api.control("POST", "/branches/acme/app/main/ddl", json={"statements": [
        "CREATE TABLE items (id bigint PRIMARY KEY)"]}))
    first = start(api)
    api.advance(1)
    act(api, first, "cancel", "cancelling")
    api.advance(100)
    second = start(api, name="items", tables=["items"])
    page = ok(api.get(WORKFLOWS, params={"per_page": 1}))
    assert [w["number"] for w in page["data"]] == [second] and page["next_page"] == 2
    assert [w["number"] for w in ok(api.get(WORKFLOWS, params={"per_page": 1, "page": 2}))["data"]] == [first]
    made = ok(api.get(f"{WORKFLOWS}/{first}"))
    during = f"{made['created_at']}..{made['cancelled_at']}"
    assert [w["number"] for w in ok(api.get(WORKFLOWS, params={"between": during}))["data"]] == [first]
    later = ok(api.get(f"{WORKFLOWS}/{second}"))["created_at"]
    assert [w["number"] for w in ok(api.get(WORKFLOWS, params={"between": f"{later}..{later}"}))["data"]] == [second]
    assert api.get(WORKFLOWS, params={"between": "yesterday"}).json()["code"] == "invalid_params"


def test_recorded_shapes_lack_keys_null_the_actors_and_answer_only_the_state(api):
    api.control("POST", "/settings", json={"lean": True})
    orders(api, "(1, 10, 'a')")
    number = ok(api.post(WORKFLOWS, json={"name": "move", "source_keyspace": "app", "target_keyspace": "shop",
                                          "tables": ["orders"]}), 201)["number"]
    api.advance(1)
    read = ok(api.get(f"{WORKFLOWS}/{number}"))
    assert read["type"] == "Workflow" and read["tables"][0]["type"] == "WorkflowTable"
    assert not {"defer_secondary_keys", "on_ddl", "workflow_errors", "may_restart", "sequence_tables_applied",
                "global_keyspace"} & set(read)
    assert read["workflow_subtype"] is None and read["cutover_by"] is None and read["actor"]["display_name"]
    answer = ok(api.patch(f"{WORKFLOWS}/{number}/switch-primaries"))
    assert answer == dict(read, state="switching_primaries")  # the record before, only its state changed
    api.advance(1)
    assert ok(api.get(f"{WORKFLOWS}/{number}"))["switch_primaries_at"] is not None
    for action in ("cutover", "complete"):
        answer = ok(api.patch(f"{WORKFLOWS}/{number}/{action}"))
        api.advance(1)
    assert answer["state"] == "complete" and ok(api.get(f"{WORKFLOWS}/{number}"))["state"] == "completed"
    api.control("POST", "/settings", json={"list_envelope": "full"})
    listed = ok(api.get(WORKFLOWS))
    assert "per_page" not in listed and listed["current_page"] == 1


def test_recorded_vitess_excuses_only_the_workflow_answers(api, published):
    orders(api)
    record = dict(ok(api.get(f"{WORKFLOWS}/{start(api)}")), state="complete", verify_data_by=None)
    del record["on_ddl"]
    path = f"{WORKFLOWS}/{record['number']}"

    def kind(settings, method="PATCH", where=f"{path}/complete", body=None):
        answer = json.dumps(record if body is None else body).encode()
        return published.check(Exchange(method, where, 200, "application/json", answer, settings=settings)).kind

    lean = {"recorded_vitess": True, "lean_write_answers": True}
    assert kind(lean) == "expected"
    assert kind({"recorded_vitess": True}) == "violation"  # "complete" is a lean write answer's
    assert kind({"lean_write_answers": True}) == "violation"  # the null actor and the missing on_ddl: recorded ones'
    assert kind(lean, "GET", path) == "violation"  # a read says completed
    assert kind(lean, "GET", MAIN, dict(record, state="ready")) == "violation"  # a branch is no workflow
