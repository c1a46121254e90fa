"""PgBouncers (issue 34): made, read, listed and deleted by name; resized in place by a resize request on the
emulator clock (pending -> resizing -> completed, or canceled by DELETE .../resizes or the change_fail_state
setting); a MySQL branch has none.

Every answer is validated against the published OpenAPI after the test (conftest.openapi_check)."""

import psycopg
import pytest

from emulator.dataplane import pgbouncer

from .conftest import MAIN

PG = "/v1/organizations/acme/databases/pgapp/branches/main"
BOUNCERS = f"{PG}/bouncers"
POOL = f"{BOUNCERS}/pool"


def ok(response, status=200):
    assert response.status_code == status, response.text
    return response.json() if status != 204 else None


def refused(response, status=422):
    assert response.status_code == status, response.text
    return response.json()["message"]


def parameter(bouncer, name):
    return next(p["value"] for p in bouncer["parameters"] if p["name"] == name)


def test_a_bouncer_is_made_read_listed_and_deleted_by_name(api):
    made = ok(api.post(BOUNCERS, json={"name": "pool", "target": "replica", "bouncer_size": "PGB_10",
                                       "replicas_per_cell": 2}))
    assert (made["name"], made["target"], made["sku"]["name"], made["replicas_per_cell"]) == \
        ("pool", "replica", "PGB_10", 2)
    assert made["branch"]["name"] == "main" and parameter(made, "pool_mode") == "transaction"
    assert ok(api.get(POOL)) == made
    assert [b["name"] for b in ok(api.get(BOUNCERS))["data"]] == ["pool"]
    defaults = ok(api.post(BOUNCERS, json={"name": "other"}))
    assert (defaults["target"], defaults["sku"]["name"], defaults["replicas_per_cell"]) == ("primary", "PGB_5", 1)
    assert "already has a bouncer" in refused(api.post(BOUNCERS, json={"name": "pool"}))
    ok(api.delete(POOL), 204)
    refused(api.get(POOL), 404)
    refused(api.delete(POOL), 404)
    assert [b["name"] for b in ok(api.get(BOUNCERS))["data"]] == ["other"]


def test_bad_sizes_targets_and_names_are_refused(api):
    assert "PGB_7" in refused(api.post(BOUNCERS, json={"name": "pool", "bouncer_size": "PGB_7"}))
    assert "target" in refused(api.post(BOUNCERS, json={"name": "pool", "target": "standby"}))
    refused(api.post(BOUNCERS, json={"name": "Bad Name"}))
    assert "MySQL" in refused(api.get(f"{MAIN}/bouncers"))


def test_a_resize_goes_pending_resizing_completed_and_reaches_the_bouncer(api):
    api.control("POST", "/settings", json={"change_step_delay": 10})
    ok(api.post(BOUNCERS, json={"name": "pool"}))
    resize = ok(api.patch(f"{POOL}/resizes", json={"bouncer_size": "PGB_20", "target": "replica_az_affinity",
                                                   "parameters": {"pgbouncer": {"default_pool_size": 50}}}))
    assert (resize["state"], resize["sku"]["name"], resize["previous_sku"]["name"]) == ("pending", "PGB_20", "PGB_5")
    assert resize["parameters"] == {"pgbouncer": {"default_pool_size": "50"}}
    assert resize["previous_parameters"] == {"pgbouncer": {"default_pool_size": "20"}}
    # asked again while pending: the same request, updated
    again = ok(api.patch(f"{POOL}/resizes", json={"replicas_per_cell": 3}))
    assert again["id"] == resize["id"] and again["replicas_per_cell"] == 3 and again["sku"]["name"] == "PGB_20"
    api.advance(10)
    assert ok(api.get(f"{POOL}/resizes"))["data"][0]["state"] == "resizing"
    assert ok(api.get(POOL))["sku"]["name"] == "PGB_5"
    assert "resizing" in refused(api.patch(f"{POOL}/resizes", json={"replicas_per_cell": 4}))
    assert "resizing" in refused(api.delete(f"{POOL}/resizes"))
    api.advance(10)
    done = ok(api.get(f"{PG}/bouncer-resizes"))["data"][0]
    assert done["state"] == "completed" and done["completed_at"] and done["bouncer"]["name"] == "pool"
    bouncer = ok(api.get(POOL))
    assert (bouncer["sku"]["name"], bouncer["target"], bouncer["replicas_per_cell"]) == \
        ("PGB_20", "replica_az_affinity", 3)
    assert parameter(bouncer, "default_pool_size") == "50"
    assert "no changes" in refused(api.patch(f"{POOL}/resizes", json={"bouncer_size": "PGB_20"}))


def test_a_pending_resize_is_canceled_and_the_setting_cancels_new_ones(api):
    api.control("POST", "/settings", json={"change_step_delay": 10})
    ok(api.post(BOUNCERS, json={"name": "pool"}))
    ok(api.patch(f"{POOL}/resizes", json={"bouncer_size": "PGB_40"}))
    ok(api.delete(f"{POOL}/resizes"), 204)
    assert ok(api.get(f"{POOL}/resizes"))["data"][0]["state"] == "canceled"
    assert "no pending resize" in refused(api.delete(f"{POOL}/resizes"))
    api.control("POST", "/settings", json={"change_fail_state": "canceled"})
    ok(api.patch(f"{POOL}/resizes", json={"bouncer_size": "PGB_40"}))
    api.advance(30)
    assert ok(api.get(f"{POOL}/resizes"))["data"][0]["state"] == "canceled"
    assert ok(api.get(POOL))["sku"]["name"] == "PGB_5"
    # one asked elsewhere, through the control API
    elsewhere = ok(api.control("POST", "/branches/acme/pgapp/main/bouncers/pool/resizes",
                               json={"resize": {"replicas_per_cell": 2}, "end_state": "completed"}))
    assert elsewhere["state"] == "pending" and elsewhere["actor"]["id"] == api.world["user"]["id"]


def test_bad_parameters_are_refused(api):
    ok(api.post(BOUNCERS, json={"name": "pool"}))
    assert "pgbouncer" in refused(api.patch(f"{POOL}/resizes", json={"parameters": {"pgconf": {"work_mem": 1}}}))
    assert "no such parameter" in refused(api.patch(f"{POOL}/resizes",
                                                    json={"parameters": {"pgbouncer": {"nope": 1}}}))
    assert "pool_mode" in refused(api.patch(f"{POOL}/resizes",
                                            json={"parameters": {"pgbouncer": {"pool_mode": "never"}}}))


# ---------------------------------------------------------------- the data plane: a real PgBouncer


def pg_role(api, **body):
    answer = api.post(f"{PG}/roles", json=body)
    assert answer.status_code == 200, answer.text
    return answer.json()


def through(dataplane, address, created, secret=None):
    host, port = address.rsplit(":", 1)
    return psycopg.connect(host=host, port=int(port), user=created["username"], password=secret or created["password"],
                           dbname=created["database_name"], sslmode="verify-full", sslrootcert=dataplane.ca_file,
                           autocommit=True, connect_timeout=10)


def test_a_role_logs_in_through_the_real_pgbouncer_of_a_bouncer(api, dataplane):
    if pgbouncer.binary() is None:
        pytest.skip("Debian's pgbouncer is not installed (make dataplane installs it)")
    created = pg_role(api, name="app", inherited_roles=["postgres"])
    made = ok(api.post(BOUNCERS, json={"name": "pool"}))
    address = ok(api.control("GET", "/bouncers"))["acme/pgapp/main/pool"]
    assert address != created["access_host_url"]  # its own port, in front of the branch's database
    with through(dataplane, address, created) as connection:
        assert connection.info.pgconn.ssl_in_use
        assert connection.execute("SELECT current_user, current_database()").fetchone() == \
            (created["username"], created["database_name"])
        connection.execute("CREATE TABLE pooled (id bigint PRIMARY KEY)")
        # the server saw a client that is not this one: the pooler's connection
        clients = connection.execute("SELECT count(*) FROM pg_stat_activity WHERE usename = current_user "
                                     "AND backend_type = 'client backend'").fetchone()[0]
        assert clients >= 1
    with pytest.raises(psycopg.OperationalError):
        through(dataplane, address, created, secret="pscale_pw_wrong").close()
    # a completed resize reaches the PgBouncer's configuration
    api.control("POST", "/settings", json={"change_step_delay": 0})
    ok(api.patch(f"{POOL}/resizes", json={"parameters": {"pgbouncer": {"pool_mode": "session"}}}))
    assert parameter(ok(api.get(POOL)), "pool_mode") == "session"
    assert pgbouncer.running(made["id"]).settings["pool_mode"] == "session"
    with through(dataplane, address, created) as connection:
        assert connection.execute("SELECT count(*) FROM pooled").fetchone() == (0,)
    # deleted: its PgBouncer stops
    ok(api.delete(POOL), 204)
    assert ok(api.control("GET", "/bouncers")) == {}
    with pytest.raises(psycopg.OperationalError):
        through(dataplane, address, created).close()
