"""Keyspaces (issue 46): a MySQL branch's default keyspace, keyspaces added, changed, copied to a child branch and
deleted; resize requests on the emulator clock (pending -> resizing -> completed, the upsert, cancel, a resize asked
elsewhere); the rollout status; the lean shapes of recorded_vitess; and each keyspace as its own schema on MariaDB:
a password logs in naming a keyspace and lands in its tables (a real connection, TLS verified).

Every answer is validated against the published OpenAPI after the test (conftest.openapi_check)."""

import json

import pymysql
import pytest

from .conftest import DB, MAIN
from .openapi_check import Exchange
from .test_dataplane import development_branch, mysql_login, run

KEYSPACES = f"{MAIN}/keyspaces"
PG_MAIN = "/v1/organizations/acme/databases/pgapp/branches/main"


def ok(response, status=200):
    assert response.status_code == status, response.text
    return response.json() if status != 204 else None


def refused(response, status=422):
    assert response.status_code == status, response.text
    return response.json()["message"]


def create(api, path=KEYSPACES, **body):
    return ok(api.post(path, json={"cluster_size": "PS_10", **body}))


# ---------------------------------------------------------------- keyspaces


def test_a_mysql_branch_has_its_default_keyspace(api):
    listed = ok(api.get(KEYSPACES))
    assert listed["per_page"] == 25 and len(listed["data"]) == 1
    default = listed["data"][0]
    branch = ok(api.get(MAIN))
    assert (default["name"], default["default"], default["shards"], default["sharded"]) == ("app", True, 1, False)
    assert default["cluster_name"] == branch["cluster_name"] and default["ready"] is True
    assert default["replicas"] == 2  # a production branch's keyspace has its replicas
    assert ok(api.get(f"{KEYSPACES}/app")) == default
    rollout = ok(api.get(f"{KEYSPACES}/app/rollout-status"))
    assert rollout["state"] == "complete" and [s["name"] for s in rollout["shards"]] == ["-"]
    assert ok(api.get(f"{KEYSPACES}/app/vschema")) == {"raw": "{}"}
    assert refused(api.get(f"{KEYSPACES}/nope"), 404) == "Keyspace not found"
    assert "PostgreSQL" in refused(api.get(f"{PG_MAIN}/keyspaces"))


def test_a_keyspace_is_created_changed_listed_and_deleted(api):
    made = create(api, name="sharded", shards=4, extra_replicas=1)
    assert (made["shards"], made["sharded"], made["default"], made["replicas"]) == (4, True, False, 3)
    assert made["ready"] is False and ok(api.get(f"{KEYSPACES}/sharded/rollout-status"))["state"] == "in_progress"
    api.advance(60)
    rollout = ok(api.get(f"{KEYSPACES}/sharded/rollout-status"))
    assert rollout["state"] == "complete"
    assert [s["name"] for s in rollout["shards"]] == ["-40", "40-80", "80-c0", "c0-"]
    assert "Name has already been taken" in refused(api.post(KEYSPACES, json={"name": "sharded",
                                                                               "cluster_size": "PS_10"}))
    message = refused(api.post(KEYSPACES, json={"name": "other", "cluster_size": "PS_9"}))
    assert "'PS_9'" in message and "PS_10" in message
    assert api.post(KEYSPACES, json={"name": "Bad Name", "cluster_size": "PS_10"}).json()["code"] == "invalid_params"
    assert api.post(KEYSPACES, json={"name": "zero", "cluster_size": "PS_10", "shards": 0}).status_code == 422
    changed = ok(api.patch(f"{KEYSPACES}/sharded", json={
        "replication_durability_constraints": {"strategy": "lag"}, "vreplication_flags": {"vplayer_batching": True}}))
    assert changed["replication_durability_constraints"] == {"strategy": "lag"}
    assert changed["vreplication_flags"]["vplayer_batching"] is True
    assert refused(api.patch(f"{KEYSPACES}/sharded", json={"replication_durability_constraints": {
        "strategy": "maximum"}})).startswith("replication_durability_constraints.strategy")
    branch = ok(api.get(MAIN))
    assert (branch["keyspace_count"], branch["sharded"], branch["shard_count"]) == (2, True, 5)
    assert ok(api.get(f"{DB}/throttler"))["keyspaces"] == ["app", "sharded"]  # the production branch's
    assert [k["name"] for k in ok(api.get(KEYSPACES))["data"]] == ["app", "sharded"]
    assert "default keyspace" in refused(api.delete(f"{KEYSPACES}/app"))
    ok(api.delete(f"{KEYSPACES}/sharded"), 204)
    assert api.get(f"{KEYSPACES}/sharded").status_code == 404
    assert ok(api.get(MAIN))["keyspace_count"] == 1


# ---------------------------------------------------------------- resize requests


def test_a_resize_goes_pending_resizing_completed_and_reaches_the_keyspace(api):
    api.control("POST", "/settings", json={"change_step_delay": 10})
    create(api, name="ks")
    asked = ok(api.put(f"{KEYSPACES}/ks/resizes", json={"cluster_size": "PS_20"}))
    assert (asked["state"], asked["cluster_name"], asked["previous_cluster_name"]) == ("pending", "PS_20", "PS_10")
    upsert = ok(api.put(f"{KEYSPACES}/ks/resizes", json={"extra_replicas": 2}))
    assert upsert["id"] == asked["id"] and (upsert["cluster_name"], upsert["replicas"]) == ("PS_20", 4)
    keyspace = ok(api.get(f"{KEYSPACES}/ks"))
    assert keyspace["resize_pending"] and keyspace["resize_in_progress"] and keyspace["cluster_name"] == "PS_10"
    api.advance(10)
    assert ok(api.get(f"{KEYSPACES}/ks/resizes/{asked['id']}"))["state"] == "resizing"
    assert ok(api.get(f"{KEYSPACES}/ks/rollout-status"))["state"] == "in_progress"
    assert "resizing" in refused(api.put(f"{KEYSPACES}/ks/resizes", json={"cluster_size": "PS_40"}))
    assert "once resizing" in refused(api.delete(f"{KEYSPACES}/ks/resizes"))
    api.advance(10)
    done = ok(api.get(f"{KEYSPACES}/ks/resizes/{asked['id']}"))
    assert done["state"] == "completed" and done["completed_at"] >= done["started_at"]
    keyspace = ok(api.get(f"{KEYSPACES}/ks"))
    assert (keyspace["cluster_name"], keyspace["extra_replicas"], keyspace["resize_in_progress"]) == ("PS_20", 2, False)
    assert "No changes to apply" in refused(api.put(f"{KEYSPACES}/ks/resizes", json={"cluster_size": "PS_20"}))
    assert "'PS_9'" in refused(api.put(f"{KEYSPACES}/ks/resizes", json={"cluster_size": "PS_9"}))
    listed = ok(api.get(f"{KEYSPACES}/ks/resizes"))["data"]
    assert [r["id"] for r in listed] == [asked["id"]]
    window = f"{done['started_at']}..{done['completed_at']}"
    assert len(ok(api.get(f"{KEYSPACES}/ks/resizes", params={"completed_at": window}))["data"]) == 1
    assert ok(api.get(f"{KEYSPACES}/ks/resizes", params={"completed_at": "2020-01-01T00:00:00Z..2020-01-02T00:00:00Z"}
                      ))["data"] == []
    assert api.get(f"{KEYSPACES}/ks/resizes", params={"completed_at": "yesterday"}).json()["code"] == "invalid_params"
    assert refused(api.get(f"{KEYSPACES}/ks/resizes/nope"), 404) == "Keyspace resize request not found"


def test_the_default_keyspace_resize_is_the_branch_cluster(api):
    api.control("POST", "/settings", json={"change_step_delay": 1})
    ok(api.put(f"{KEYSPACES}/app/resizes", json={"cluster_size": "PS_80"}))
    api.advance(2)
    assert ok(api.get(MAIN))["cluster_name"] == "PS_80" == ok(api.get(f"{KEYSPACES}/app"))["cluster_name"]


def test_a_resize_is_canceled_and_one_is_asked_elsewhere(api):
    create(api, name="ks")
    asked = ok(api.put(f"{KEYSPACES}/ks/resizes", json={"vector_pool_allocation": 20}))
    assert asked["vector_pool_allocation"] == 20 and asked["previous_vector_pool_allocation"] == 0
    ok(api.delete(f"{KEYSPACES}/ks/resizes"), 204)
    assert ok(api.get(f"{KEYSPACES}/ks/resizes/{asked['id']}"))["state"] == "canceled"
    assert "no pending resize request" in refused(api.delete(f"{KEYSPACES}/ks/resizes"))
    elsewhere = ok(api.control("POST", "/branches/acme/app/main/keyspaces/ks/resizes",
                               json={"cluster_size": "PS_40", "end_state": "canceled"}))
    assert elsewhere["state"] == "pending" and elsewhere["actor"]["id"] == api.world["user"]["id"]
    api.advance(5)
    assert ok(api.get(f"{KEYSPACES}/ks/resizes/{elsewhere['id']}"))["state"] == "canceled"
    assert ok(api.get(f"{KEYSPACES}/ks"))["cluster_name"] == "PS_10"


# ---------------------------------------------------------------- lean shapes


def test_recorded_vitess_gives_the_recorded_shapes(api):
    api.control("POST", "/settings", json={"recorded_vitess": True, "type_keys": True})
    made = create(api, name="lean", shards=2)
    assert set(made) == {"type", "id", "name", "shards", "sharded", "created_at", "updated_at"}
    assert made["type"] == "Keyspace"
    listed = ok(api.get(KEYSPACES))
    assert "per_page" not in listed and listed["current_page"] == 1 and len(listed["data"]) == 2
    pending = ok(api.put(f"{KEYSPACES}/lean/resizes", json={"cluster_size": "PS_20"}))
    assert pending["type"] == "KeyspaceResizeRequest" and pending["completed_at"] == pending["created_at"]
    assert "cluster_display_name" not in pending and "vector_pool_allocation" not in pending
    assert "avatar_url" not in pending["actor"]
    assert ok(api.get(f"{KEYSPACES}/lean/rollout-status"))["type"] == "BranchInfrastructureKeyspace"
    vschema = ok(api.get(f"{KEYSPACES}/lean/vschema"))
    assert vschema["raw"] == '{\n  "sharded": true\n}' and vschema["html"].startswith("<pre")


def test_recorded_vitess_excuses_only_the_answers_about_keyspaces(published):
    lean = json.dumps({"type": "Keyspace", "id": "k", "name": "ks", "shards": 1, "sharded": False,
                       "created_at": "2026-01-01T00:00:00.000Z", "updated_at": "2026-01-01T00:00:00.000Z"}).encode()
    path = f"{KEYSPACES}/ks"

    def kind(settings, where=path, body=lean):
        return published.check(Exchange("GET", where, 200, "application/json", body, settings=settings)).kind

    assert kind({"recorded_vitess": True}) == "expected"
    assert kind({}) == "violation"
    assert kind({"recorded_vitess": True}, MAIN, b'{"id": "b"}') == "violation"  # a branch is no keyspace


# ---------------------------------------------------------------- the data plane


def schema_tables(api, branch, **params):
    return [table["name"] for table in ok(api.get(f"{branch}/schema", params=params))["data"]]


def test_a_password_logs_in_naming_a_keyspace_and_sees_its_tables(api, dataplane):
    dev = development_branch(api)
    before = ok(api.post(f"{dev}/passwords", json={"name": "before", "role": "admin"}), 201)
    create(api, path=f"{dev}/keyspaces", name="orders-ks")
    after = ok(api.post(f"{dev}/passwords", json={"name": "after", "role": "reader"}), 201)
    with mysql_login(dataplane, before, schema="orders-ks") as connection:  # granted when the keyspace came
        assert run(connection, "SHOW TABLES") == ()
        run(connection, "CREATE TABLE orders (id bigint PRIMARY KEY, total int)")
        run(connection, "INSERT INTO orders VALUES (1, 10)")
    with mysql_login(dataplane, after, schema="orders-ks") as connection:  # granted with the password
        assert run(connection, "SELECT id, total FROM orders") == ((1, 10),)
        assert run(connection, "SELECT DATABASE()")[0][0].endswith("$orders-ks")
    with mysql_login(dataplane, after) as connection:  # the database's name: the default keyspace
        assert [row[0] for row in run(connection, "SHOW TABLES")] == ["users"]
    assert schema_tables(api, dev, keyspace="orders-ks") == ["orders"]
    assert schema_tables(api, dev, keyspace="app") == ["users"]
    assert schema_tables(api, dev) == ["users", "orders"]
    assert api.get(f"{dev}/schema", params={"keyspace": "nope"}).status_code == 404
    ok(api.control("POST", "/branches/acme/app/dev-x/ddl", json={"keyspace": "orders-ks",
                                                                "statements": ["CREATE TABLE notes (body text)"]}))
    lint = ok(api.get(f"{dev}/schema/lint"))["data"]
    assert [(e["keyspace_name"], e["table_name"], e["lint_error"]) for e in lint] == [
        ("orders-ks", "notes", "NO_UNIQUE_KEY")]
    child = ok(api.post(f"{DB}/branches", json={"name": "child", "parent_branch": "dev-x"}), 201)
    copied = ok(api.get(f"{DB}/branches/{child['name']}/keyspaces"))["data"]
    assert [k["name"] for k in copied] == ["app", "orders-ks"]
    assert schema_tables(api, f"{DB}/branches/child", keyspace="orders-ks") == ["notes", "orders"]
    ok(api.delete(f"{dev}/keyspaces/orders-ks"), 204)
    with pytest.raises(pymysql.err.OperationalError):
        mysql_login(dataplane, after, schema="orders-ks").close()


def test_safe_migrations_reach_every_keyspace_schema(api, dataplane):
    admin = ok(api.post(f"{MAIN}/passwords", json={"name": "ks-admin", "role": "admin"}), 201)
    create(api, name="ks")
    with mysql_login(dataplane, admin, schema="ks") as connection:  # production: the data, not the schema
        with pytest.raises(pymysql.err.OperationalError) as caught:
            run(connection, "CREATE TABLE t (id bigint PRIMARY KEY)")
        assert caught.value.args[0] == 1142
    ok(api.delete(f"{MAIN}/safe-migrations"))
    with mysql_login(dataplane, admin, schema="ks") as connection:
        run(connection, "CREATE TABLE t (id bigint PRIMARY KEY)")
    assert schema_tables(api, MAIN, keyspace="ks") == ["t"]
