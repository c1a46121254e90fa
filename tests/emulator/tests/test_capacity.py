"""Capacity (issue 33): change requests of PostgreSQL branches (cluster size, replicas, storage, parameters), a MySQL
branch's cluster size, VTGate resize requests, all on the emulator clock (pending -> resizing -> completed, or
canceled); the parameter and extension catalogue; read-only regions; the control routes; a completed parameter
change read back with SHOW through a real PostgreSQL connection.

Every answer is validated against the published OpenAPI after the test (conftest.openapi_check)."""

import dataclasses

import psycopg
import pytest

from emulator.world import capacity

from .conftest import DB, MAIN, TALLY, check_recorded

PG_DB = "/v1/organizations/acme/databases/pgapp"
PG = f"{PG_DB}/branches/main"
CHANGES = f"{PG}/changes"
RESIZES = f"{MAIN}/resizes"
CONTROL_PG = "/branches/acme/pgapp/main"
CONTROL_MY = "/branches/acme/app/main"


def ok(response, status=200):
    assert response.status_code == status, response.text
    return response.json() if status != 204 else None


def error_of(response, status=422, code="unprocessable"):
    assert response.status_code == status, response.text
    body = response.json()
    assert body["code"] == code and body["message"], body
    return body["message"]


def settings(api, **values):
    return ok(api.control("POST", "/settings", json=values))


def change(api, status=200, **body):
    return ok(api.patch(CHANGES, json=body), status)


def parameter(api, name, path=PG):
    return next(p for p in ok(api.get(f"{path}/parameters")) if p["name"] == name)


# ---------------------------------------------------------------- change requests on the clock


def test_a_change_goes_pending_resizing_completed_and_reaches_the_branch(api):
    settings(api, change_step_delay=10)
    before = ok(api.get(PG))
    assert before["cluster_name"] == "PS_20_AWS_X86" and before["has_replicas"] is True
    created = change(api, cluster_size="PS_40_AWS_X86", replicas=3, parameters={"pgconf": {"work_mem": "8192"}},
                     storage={"maximum_storage_bytes": 200 * 1024**3})
    assert (created["state"], created["started_at"], created["completed_at"]) == ("pending", None, None)
    assert (created["cluster_name"], created["previous_cluster_name"]) == ("PS_40_AWS_X86", "PS_20_AWS_X86")
    assert (created["replicas"], created["previous_replicas"]) == (3, 2)
    assert created["parameters"] == {"pgconf": {"work_mem": "8192"}}
    assert created["previous_parameters"] == {"pgconf": {"work_mem": "4096"}}
    assert created["maximum_storage_bytes"] == 200 * 1024**3 != created["previous_maximum_storage_bytes"]
    assert created["actor"]["id"] == api.world["user"]["id"]
    api.advance(9)
    assert ok(api.get(f"{CHANGES}/{created['id']}"))["state"] == "pending"
    assert ok(api.get(PG))["cluster_name"] == "PS_20_AWS_X86"
    api.advance(1)
    resizing = ok(api.get(f"{CHANGES}/{created['id']}"))
    assert resizing["state"] == "resizing" and resizing["started_at"] and resizing["completed_at"] is None
    assert parameter(api, "work_mem")["value"] == "4096"
    api.advance(10)
    done = ok(api.get(f"{CHANGES}/{created['id']}"))
    assert done["state"] == "completed" and done["completed_at"] >= done["started_at"]
    branch = ok(api.get(PG))
    assert branch["cluster_name"] == "PS_40_AWS_X86" and branch["has_replicas"] is True
    assert parameter(api, "work_mem")["value"] == "8192"
    assert ok(api.control("GET", f"{CONTROL_PG}/capacity"))["replicas"] == 3
    # asking for what the branch has now: 204, no request
    change(api, 204, cluster_size="PS_40_AWS_X86", replicas=3, parameters={"pgconf": {"work_mem": 8192}})
    assert ok(api.get(CHANGES))["total_count"] == 1


def test_zero_replicas_turn_has_replicas_off(api):
    settings(api, change_step_delay=0)
    change(api, replicas=0)
    assert ok(api.get(PG))["has_replicas"] is False
    assert ok(api.get(CHANGES))["data"][0]["state"] == "completed"


def test_a_second_change_updates_a_pending_one_and_is_refused_while_resizing(api):
    settings(api, change_step_delay=10)
    first = change(api, replicas=4)
    second = change(api, parameters={"pgconf": {"statement_timeout": "5000"}})
    assert second["id"] == first["id"] and second["replicas"] == 4
    assert second["parameters"] == {"pgconf": {"statement_timeout": "5000"}}
    api.advance(10)
    message = error_of(api.patch(CHANGES, json={"replicas": 5}))
    assert first["id"] in message and "resizing" in message
    listed = ok(api.get(CHANGES))["data"]
    assert [(c["id"], c["state"]) for c in listed] == [(first["id"], "resizing")]
    api.advance(10)
    assert ok(api.get(f"{CHANGES}/{first['id']}"))["state"] == "completed"
    assert change(api, replicas=5)["id"] != first["id"]


def test_the_initial_state_can_be_queued(api):
    settings(api, change_initial_state="queued", change_step_delay=5)
    assert change(api, replicas=4)["state"] == "queued"


def test_a_setting_makes_changes_cancel_and_nothing_reaches_the_branch(api):
    settings(api, change_step_delay=5, change_fail_state="canceled")
    created = change(api, cluster_size="PS_80_AWS_X86", parameters={"pgconf": {"work_mem": "16384"}})
    settings(api, change_fail_state=None)  # only requests asked while it was set
    api.advance(5)
    done = ok(api.get(f"{CHANGES}/{created['id']}"))
    assert done["state"] == "canceled" and done["completed_at"] and done["started_at"] is None
    api.advance(10)
    assert ok(api.get(f"{CHANGES}/{created['id']}"))["state"] == "canceled"
    assert ok(api.get(PG))["cluster_name"] == "PS_20_AWS_X86" and parameter(api, "work_mem")["value"] == "4096"


def test_a_change_is_canceled_through_the_api_or_the_control_routes(api):
    settings(api, change_step_delay=5)
    created = change(api, replicas=4)
    ok(api.delete(f"{PG}/resizes"), 204)
    assert ok(api.get(f"{CHANGES}/{created['id']}"))["state"] == "canceled"
    assert "no pending request" in error_of(api.delete(f"{PG}/resizes"))
    again = change(api, replicas=4)
    api.advance(5)  # resizing: the API cannot cancel it any more, the control API can (force)
    assert "resizing" in error_of(api.delete(f"{PG}/resizes"))
    assert ok(api.control("POST", f"{CONTROL_PG}/changes/cancel"))["canceled"] == [again["id"]]
    api.advance(10)
    canceled = ok(api.get(f"{CHANGES}/{again['id']}"))
    assert canceled["state"] == "canceled" and canceled["started_at"]
    assert ok(api.control("GET", f"{CONTROL_PG}/capacity"))["replicas"] == 2


def test_a_change_made_elsewhere_is_visible_and_blocks_another_while_resizing(api):
    settings(api, change_step_delay=5)
    made = ok(api.control("POST", f"{CONTROL_PG}/changes", json={"change": {"replicas": 6}}))
    assert made["state"] == "pending" and made["replicas"] == 6
    api.advance(5)
    assert ok(api.get(CHANGES))["data"][0] == {**made, **ok(api.get(f"{CHANGES}/{made['id']}"))}
    assert ok(api.get(CHANGES))["data"][0]["state"] == "resizing"
    error_of(api.patch(CHANGES, json={"replicas": 2}))
    assert "resizing" in error_of(api.control("POST", f"{CONTROL_PG}/changes", json={"change": {"replicas": 2}}))
    api.advance(5)
    doomed = ok(api.control("POST", f"{CONTROL_PG}/changes",
                            json={"change": {"replicas": 2}, "end_state": "canceled"}))
    api.advance(5)
    assert ok(api.get(f"{CHANGES}/{doomed['id']}"))["state"] == "canceled"
    assert ok(api.control("GET", f"{CONTROL_PG}/capacity"))["replicas"] == 6
    error_of(api.control("POST", f"{CONTROL_PG}/changes", json={}), code="invalid_params")


@pytest.mark.parametrize("body, code, words", [
    ({"parameters": {"pgconf": {"work_mem": "10"}}}, "invalid_params", ["work_mem", "out of range", "64"]),
    ({"parameters": {"pgconf": {"max_connections": 9000}}}, "invalid_params", ["max_connections", "5000"]),
    ({"parameters": {"pgconf": {"work_mem": "lots"}}}, "invalid_params", ["work_mem", "integer"]),
    ({"parameters": {"pgconf": {"no_such_thing": "1"}}}, "invalid_params", ["no_such_thing", "no such parameter"]),
    ({"parameters": {"mysql": {"work_mem": "8192"}}}, "invalid_params", ["mysql", "namespace"]),
    ({"parameters": {"pgconf": {"wal_level": "replica"}}}, "invalid_params", ["wal_level", "immutable"]),
    ({"parameters": {"pgconf": {"log_statement": "everything"}}}, "invalid_params", ["log_statement", "ddl"]),
    ({"parameters": {"patroni": {"synchronous_mode": "maybe"}}}, "invalid_params", ["synchronous_mode", "boolean"]),
    ({"cluster_size": "PS_9000"}, "unprocessable", ["PS_9000", "PS_5_AWS_X86", "PS_10_AWS_ARM"]),
    ({"cluster_size": "PS_320"}, "unprocessable", ["PS_320", "postgresql"]),
    ({"cluster_size": "PS_10"}, "unprocessable", ["PS_10", "postgresql"]),  # a MySQL form
    ({"cluster_size": "M7_160_D_METAL_460"}, "unprocessable", ["M7_160_D_METAL_460", "postgresql"]),
    ({"replicas": "2"}, "invalid_params", ["replicas"]),
    ({"replicas": -1}, "invalid_params", ["replicas"]),
    ({"storage": {"minimum_storage_bytes": 10, "maximum_storage_bytes": 5}}, "invalid_params", ["minimum"]),
])
def test_bad_changes_are_refused_with_a_sentence_and_make_no_request(api, body, code, words):
    message = error_of(api.patch(CHANGES, json=body), code=code)
    assert all(word in message for word in words), message
    assert ok(api.get(CHANGES))["data"] == []


def test_change_requests_are_for_postgresql_branches(api):
    assert "MySQL" in error_of(api.patch(f"{MAIN}/changes", json={"replicas": 2}))
    assert "MySQL" in error_of(api.get(f"{MAIN}/parameters"))
    assert "MySQL" in error_of(api.get(f"{MAIN}/extensions"))
    assert "PostgreSQL" in error_of(api.call("PUT", f"{PG}/resizes", json={"vtgate_count": 3}))
    assert "PostgreSQL" in error_of(api.patch(f"{PG}/cluster", json={"cluster_size": "PS_40_AWS_X86"}))
    error_of(api.get(f"{CHANGES}/nope"), 404, "not_found")
    error_of(api.get(f"{PG_DB}/branches/nope/changes"), 404, "not_found")


def test_change_lists_page(api):
    settings(api, change_step_delay=0)
    ids = [change(api, replicas=count)["id"] for count in (3, 4, 5)]
    first = ok(api.get(CHANGES, params={"per_page": 2}))
    assert [c["id"] for c in first["data"]] == ids[::-1][:2]  # newest first
    assert (first["total_count"], first["next_page"], first["total_pages"]) == (3, 2, 2)
    second = ok(api.get(first["next_page_url"]))
    assert [c["id"] for c in second["data"]] == [ids[0]] and second["next_page"] is None
    error_of(api.get(CHANGES, params={"per_page": 0}), code="invalid_params")


# ---------------------------------------------------------------- MySQL: cluster size and VTGates


def test_a_mysql_branch_changes_its_cluster_size_on_the_clock(api):
    settings(api, change_step_delay=3)
    assert ok(api.get(MAIN))["cluster_name"] == "PS_40"
    ok(api.patch(f"{MAIN}/cluster", json={"cluster_size": "PS_80"}), 204)
    listed = ok(api.get(f"{MAIN}/changes"))["data"]
    assert [(c["state"], c["cluster_name"], c["previous_cluster_name"]) for c in listed] == [
        ("pending", "PS_80", "PS_40")]
    api.advance(3)
    assert ok(api.get(f"{MAIN}/changes/{listed[0]['id']}"))["state"] == "resizing"
    assert ok(api.get(MAIN))["cluster_name"] == "PS_40"
    api.advance(3)
    assert ok(api.get(MAIN))["cluster_name"] == "PS_80"
    ok(api.patch(f"{MAIN}/cluster", json={"cluster_size": "PS_80"}), 204)  # the size it has: no request
    assert ok(api.get(f"{MAIN}/changes"))["total_count"] == 1
    assert "PS_640" in error_of(api.patch(f"{MAIN}/cluster", json={"cluster_size": "PS_640"}))  # not enabled
    for size in ("PS_5_AWS_X86", "PS_10_AWS_ARM", "M1_10_AWS_AMD_D_METAL_10"):  # PostgreSQL forms
        assert f"{size}'" in error_of(api.patch(f"{MAIN}/cluster", json={"cluster_size": size}))
    error_of(api.patch(f"{MAIN}/cluster", json={}), code="invalid_params")


def test_each_engine_lists_and_takes_the_platforms_forms_of_sizes(api):
    """Issue 43: MySQL PS_DEV, PS_10... and Metal without a cloud; PostgreSQL the size, cloud and processor, and Metal
    with them. Each engine takes what it lists (on a new branch and a resize), SIZE_n as PS_n, not the other's."""
    def names(engine):
        return [sku["name"] for sku in ok(api.get("/v1/organizations/acme/cluster-size-skus",
                                                  params={"engine": engine}))]
    mysql, postgresql = names("mysql"), names("postgresql")
    assert {"PS_DEV", "PS_10", "PS_320", "M7_160_D_METAL_460"} <= set(mysql) and "M_160" not in mysql
    assert {"PS_DEV_AWS_X86", "PS_5_AWS_X86", "PS_10_AWS_ARM", "PS_5_GCP_X86", "M1_10_AWS_AMD_D_METAL_10"} <= set(
        postgresql)
    assert not set(mysql) & set(postgresql)
    settings(api, change_step_delay=0)
    for size in ("PS_10_AWS_ARM", "PS_DEV_AWS_X86", "M1_10_AWS_AMD_D_METAL_10"):
        change(api, cluster_size=size)
        assert ok(api.get(PG))["cluster_name"] == size
    for size, kept in (("PS_DEV", "PS_DEV"), ("M7_160_D_METAL_460", "M7_160_D_METAL_460"), ("SIZE_20", "PS_20")):
        ok(api.patch(f"{MAIN}/cluster", json={"cluster_size": size}), 204)
        assert ok(api.get(MAIN))["cluster_name"] == kept
    new = {"name": "sized", "parent_branch": "main", "cluster_size": "PS_10_AWS_ARM"}
    assert ok(api.post(f"{PG_DB}/branches", json=new), 201)["cluster_name"] == "PS_10_AWS_ARM"
    assert "PS_10_AWS_ARM" in error_of(api.post(f"{DB}/branches", json=new))  # a PostgreSQL form on MySQL
    assert "'PS_10'" in error_of(api.post(f"{PG_DB}/branches", json=dict(new, name="other", cluster_size="PS_10")))
    assert ok(api.post(f"{DB}/branches", json=dict(new, cluster_size="SIZE_10")), 201)["cluster_name"] == "PS_10"


def test_a_vtgate_resize_goes_on_the_clock_and_reaches_the_branch(api):
    settings(api, change_step_delay=2)
    branch = ok(api.get(MAIN))
    assert (branch["vtgate_size"], branch["vtgate_count"], branch["vtgate_autoscaling"]) == ("VTG_5", 2, False)
    body = {"vtgate_size": "VTG_10", "vtgate_count": 3, "vtgate_max_count": 6, "vtgate_autoscaling": True,
            "vtgate_target_cpu_utilization": 60}
    created = ok(api.call("PUT", RESIZES, json=body))
    assert created["state"] == "pending" and created["previous_vtgate_size"] == "VTG_5"
    assert (created["vtgate_size"], created["vtgate_name"], created["vtgate_display_name"]) == ("VTG_10", "VTG_10",
                                                                                                "VTG-10")
    assert (created["vtgate_count"], created["previous_vtgate_count"], created["vtgate_max_count"]) == (3, 2, 6)
    assert created["vtgate_target_cpu_utilization"] == 60
    api.advance(2)
    assert ok(api.get(f"{RESIZES}/{created['id']}"))["state"] == "resizing"
    api.advance(2)
    assert ok(api.get(RESIZES))["data"][0]["state"] == "completed"
    branch = ok(api.get(MAIN))
    assert {key: branch[key] for key in body} == body and branch["vtgate_name"] == "VTG_10"
    ok(api.call("PUT", RESIZES, json=body), 204)
    assert ok(api.get(RESIZES))["total_count"] == 1
    error_of(api.get(f"{RESIZES}/nope"), 404, "not_found")


@pytest.mark.parametrize("body, code, word", [
    ({"vtgate_size": "VTG_3"}, "unprocessable", "VTG_5"),
    ({"vtgate_autoscaling": True, "vtgate_max_count": 1, "vtgate_target_cpu_utilization": 50}, "invalid_params",
     "vtgate_max_count"),
    ({"vtgate_autoscaling": True, "vtgate_max_count": 4}, "invalid_params", "vtgate_target_cpu_utilization"),
    ({"vtgate_target_cpu_utilization": 150}, "invalid_params", "vtgate_target_cpu_utilization"),
    ({"vtgate_count": 0}, "invalid_params", "vtgate_count"),
])
def test_bad_resizes_are_refused(api, body, code, word):
    assert word in error_of(api.call("PUT", RESIZES, json=body), code=code)
    assert ok(api.get(RESIZES))["data"] == []


def test_a_resize_asked_while_one_is_resizing_is_refused_and_a_pending_one_is_updated(api):
    settings(api, change_step_delay=4)
    first = ok(api.call("PUT", RESIZES, json={"vtgate_count": 3}))
    assert ok(api.call("PUT", RESIZES, json={"vtgate_size": "VTG_20"}))["id"] == first["id"]
    api.advance(4)
    assert first["id"] in error_of(api.call("PUT", RESIZES, json={"vtgate_count": 4}))
    api.advance(4)
    branch = ok(api.get(MAIN))
    assert (branch["vtgate_count"], branch["vtgate_size"]) == (3, "VTG_20")


# ---------------------------------------------------------------- catalogue and read-only regions


def test_the_parameter_catalogue_lists_every_parameter_with_the_published_fields(api):
    listed = ok(api.get(f"{PG}/parameters"))
    by_name = {(p["namespace"], p["name"]): p for p in listed}
    assert {"patroni", "pgconf", "pgbouncer"} == {namespace for namespace, _ in by_name}
    work_mem = by_name[("pgconf", "work_mem")]
    assert (work_mem["parameter_type"], work_mem["default_value"], work_mem["value"]) == ("integer", "4096", "4096")
    assert (work_mem["min"], work_mem["restart"], work_mem["immutable"]) == (64, False, False)
    assert by_name[("pgconf", "max_connections")]["restart"] is True
    assert by_name[("pgconf", "wal_level")]["immutable"] is True
    assert by_name[("pgbouncer", "pool_mode")]["options"] == ["session", "transaction", "statement"]
    assert by_name[("pgconf", "pg_stat_statements.max")]["extension"] is True
    assert len({p["id"] for p in listed}) == len(listed)
    extensions = {e["name"]: e for e in ok(api.get(f"{PG}/extensions"))}
    assert {"pg_stat_statements", "pgcrypto", "postgis"} <= set(extensions)
    assert extensions["pg_stat_statements"]["loader"] == "shared_preload_libraries"
    assert [p["name"] for p in extensions["pg_stat_statements"]["parameters"]] == ["pg_stat_statements.max",
                                                                                   "pg_stat_statements.track"]
    assert extensions["timescaledb"]["available"] is False and extensions["timescaledb"]["unavailable_reason"]


def test_restart_is_what_the_data_planes_postgresql_says_not_the_catalogues_flag(api, monkeypatch):
    """Issue 44: restart tells a user that a change restarts the server. For a pgconf parameter the real PostgreSQL
    lists, it is pg_settings.context 'postmaster', whatever the hand-written catalogue says (flipped here)."""
    flipped = tuple(dataclasses.replace(spec, restart=not spec.restart) for spec in capacity.PARAMETERS)
    monkeypatch.setattr(capacity, "PARAMETERS", flipped)
    role = api.world["postgres"]["default_role"]
    host, port = role["access_host_url"].rsplit(":", 1)
    with psycopg.connect(host=host, port=int(port), user=role["username"], password=role["password"],
                         dbname=role["database_name"], sslmode="verify-full", sslrootcert=api.world["ca_file"],
                         connect_timeout=10) as connection:
        contexts = dict(connection.execute("SELECT name, context FROM pg_settings").fetchall())
    listed = {(p["namespace"], p["name"]): p["restart"] for p in ok(api.get(f"{PG}/parameters"))}
    server = {name: restart for (namespace, name), restart in listed.items() if namespace == "pgconf" and
              name in contexts}
    assert {"max_connections", "shared_buffers", "work_mem", "wal_level"} <= set(server)
    assert server == {name: contexts[name] == "postmaster" for name in server}
    assert server["max_connections"] is True and server["work_mem"] is False
    # what PostgreSQL does not list (patroni's, pgbouncer's) keeps the catalogue's flag
    assert listed[("pgbouncer", "pool_mode")] is True and listed[("patroni", "synchronous_mode")] is True


def test_read_only_regions_are_seeded_added_and_paged(api):
    assert api.world["read_only_regions"] == {"app": ["eu-west"]}
    listed = ok(api.get(f"{DB}/read-only-regions"))
    assert [(r["region"]["slug"], r["ready"]) for r in listed["data"]] == [("eu-west", True)]
    assert ok(api.get(f"{PG_DB}/read-only-regions"))["data"] == []
    added = ok(api.control("POST", "/databases/acme/app/read-only-regions", json={"region": "ap-northeast",
                                                                                   "ready": False}))
    assert added["ready"] is False and added["ready_at"] is None
    page = ok(api.get(f"{DB}/read-only-regions", params={"per_page": 1, "page": 2}))
    assert [r["region"]["slug"] for r in page["data"]] == ["ap-northeast"] and page["total_count"] == 2
    error_of(api.control("POST", "/databases/acme/app/read-only-regions", json={"region": "eu-west"}))
    error_of(api.control("POST", "/databases/acme/app/read-only-regions", json={"region": "us-east"}))
    error_of(api.get("/v1/organizations/acme/databases/nope/read-only-regions"), 404, "not_found")


def test_the_control_api_sets_what_a_branch_has_at_once(api):
    set_to = ok(api.control("POST", f"{CONTROL_PG}/capacity", json={"replicas": 0, "cluster_size": "PS_10_AWS_ARM",
                                                                     "parameters": {"pgconf": {"work_mem": 2048}}}))
    assert (set_to["replicas"], set_to["cluster_size"], set_to["parameters"]) == (0, "PS_10_AWS_ARM",
                                                                                 {"pgconf": {"work_mem": "2048"}})
    branch = ok(api.get(PG))
    assert (branch["has_replicas"], branch["cluster_name"]) == (False, "PS_10_AWS_ARM")
    assert parameter(api, "work_mem")["value"] == "2048"
    vtgates = ok(api.control("POST", f"{CONTROL_MY}/capacity", json={"vtgate_count": 4, "vtgate_size": "VTG_40"}))
    assert (vtgates["vtgate_count"], vtgates["vtgate_size"]) == (4, "VTG_40")
    assert ok(api.get(MAIN))["vtgate_count"] == 4
    assert ok(api.get(CHANGES))["data"] == [] and ok(api.get(RESIZES))["data"] == []
    error_of(api.control("POST", f"{CONTROL_PG}/capacity", json={"cluster_size": "PS_9000"}))
    error_of(api.control("POST", f"{CONTROL_PG}/capacity", json={"parameters": {"pgconf": {"work_mem": 1}}}),
             code="invalid_params")


# ---------------------------------------------------------------- the OpenAPI and the data plane

CAPACITY_OPERATIONS = {
    "GET /organizations/{organization}/databases/{database}/branches/{branch}/changes",
    "PATCH /organizations/{organization}/databases/{database}/branches/{branch}/changes",
    "GET /organizations/{organization}/databases/{database}/branches/{branch}/changes/{id}",
    "PATCH /organizations/{organization}/databases/{database}/branches/{branch}/cluster",
    "PUT /organizations/{organization}/databases/{database}/branches/{branch}/resizes",
    "GET /organizations/{organization}/databases/{database}/branches/{branch}/resizes",
    "DELETE /organizations/{organization}/databases/{database}/branches/{branch}/resizes",
    "GET /organizations/{organization}/databases/{database}/branches/{branch}/resizes/{resize}",
    "GET /organizations/{organization}/databases/{database}/branches/{branch}/parameters",
    "GET /organizations/{organization}/databases/{database}/branches/{branch}/extensions",
    "GET /organizations/{organization}/databases/{database}/read-only-regions",
}


def test_every_capacity_answer_is_validated_against_the_ops_file(api, published):
    check_recorded()  # what came before belongs to no operation of this test
    settings(api, change_step_delay=0)
    made = change(api, replicas=3)
    change(api, 204, replicas=3)
    ok(api.get(CHANGES))
    ok(api.get(f"{CHANGES}/{made['id']}"))
    ok(api.patch(f"{MAIN}/cluster", json={"cluster_size": "PS_80"}), 204)
    settings(api, change_step_delay=5)
    resize = ok(api.call("PUT", RESIZES, json={"vtgate_count": 3}))
    ok(api.get(RESIZES))
    ok(api.get(f"{RESIZES}/{resize['id']}"))
    ok(api.delete(RESIZES), 204)
    ok(api.get(f"{PG}/parameters"))
    ok(api.get(f"{PG}/extensions"))
    ok(api.get(f"{DB}/read-only-regions"))
    assert check_recorded() == []  # no violation of platform-openapi-ops.json
    answered = {operation.split(" ", 1)[0] + " " + operation.split(" ", 1)[1] for operation in TALLY.operations}
    assert CAPACITY_OPERATIONS <= answered, CAPACITY_OPERATIONS - answered


def show(api, *names):
    role = api.world["postgres"]["default_role"]
    host, port = role["access_host_url"].rsplit(":", 1)
    with psycopg.connect(host=host, port=int(port), user=role["username"], password=role["password"],
                         dbname=role["database_name"], sslmode="verify-full", sslrootcert=api.world["ca_file"],
                         connect_timeout=10, autocommit=True) as connection:
        return [connection.execute(f"SHOW {name}").fetchone()[0] for name in names]


def test_a_completed_parameter_change_is_set_on_the_branch_database(api):
    settings(api, change_step_delay=2)
    assert show(api, "work_mem", "statement_timeout") == ["4MB", "0"]
    created = change(api, parameters={"pgconf": {"work_mem": "8192", "statement_timeout": 5000,
                                                 "max_connections": "200"}})
    api.advance(2)
    assert ok(api.get(f"{CHANGES}/{created['id']}"))["state"] == "resizing"
    assert show(api, "work_mem", "statement_timeout") == ["4MB", "0"]  # not yet
    api.advance(2)
    assert ok(api.get(f"{CHANGES}/{created['id']}"))["state"] == "completed"
    assert show(api, "work_mem", "statement_timeout", "max_connections")[:2] == ["8MB", "5s"]
    # back to the default: the database setting goes
    change(api, parameters={"pgconf": {"work_mem": "4096"}})
    api.advance(4)
    ok(api.get(CHANGES))
    assert show(api, "work_mem", "statement_timeout") == ["4MB", "5s"]


def test_a_reset_takes_the_parameters_back(api, client):
    settings(api, change_step_delay=0)
    change(api, parameters={"pgconf": {"statement_timeout": "7000"}})
    ok(api.get(CHANGES))
    assert show(api, "statement_timeout") == ["7s"]
    client.post("/_emulator/reset")
    fresh = type(api)(client)
    assert show(fresh, "statement_timeout") == ["0"]


def test_the_replica_count_follows_promote_and_the_numbers_stay_integers(api):
    ok(api.post(f"{PG_DB}/branches", json={"name": "dev", "parent_branch": "main"}), 201)
    api.advance(settings(api)["ready_delay"])
    assert ok(api.control("GET", "/branches/acme/pgapp/dev/capacity"))["replicas"] == 0
    ok(api.post(f"{PG_DB}/branches/dev/promote"))
    assert ok(api.control("GET", "/branches/acme/pgapp/dev/capacity"))["replicas"] == 2
    work_mem = parameter(api, "work_mem", f"{PG_DB}/branches/dev")
    assert isinstance(work_mem["min"], int) and isinstance(work_mem["max"], int)
    settings(api, change_step_delay=0)
    resize = ok(api.call("PUT", RESIZES, json={"vtgate_autoscaling": True, "vtgate_max_count": 4,
                                               "vtgate_target_cpu_utilization": 70}))
    assert isinstance(resize["vtgate_target_cpu_utilization"], int)


def test_a_branch_that_is_not_ready_cannot_be_resized(api):
    settings(api, ready_delay=30)
    ok(api.post(f"{PG_DB}/branches", json={"name": "young", "parent_branch": "main"}), 201)
    ok(api.post(f"{DB}/branches", json={"name": "young", "parent_branch": "main"}), 201)
    assert "not ready" in error_of(api.patch(f"{PG_DB}/branches/young/changes", json={"replicas": 2}))
    assert "not ready" in error_of(api.patch(f"{DB}/branches/young/cluster", json={"cluster_size": "PS_80"}))
    assert "not ready" in error_of(api.call("PUT", f"{DB}/branches/young/resizes", json={"vtgate_count": 3}))
    api.advance(30)
    assert ok(api.patch(f"{PG_DB}/branches/young/changes", json={"replicas": 2}))["state"] == "pending"


def test_lean_shapes_of_capacity_answers(api):
    settings(api, lean=True, change_step_delay=0)
    made = change(api, replicas=3)
    assert made["type"] == "BranchChangeRequest"
    assert set(ok(api.get(CHANGES))) == {"data"}
    assert ok(api.get(f"{DB}/read-only-regions"))["data"][0]["region"]["type"] == "Region"
    assert ok(api.get(f"{PG}/parameters"))[0]["type"] == "ClusterParameter"


def test_a_lost_answer_asked_again_makes_no_second_request(api):
    settings(api, change_step_delay=5)
    ok(api.control("POST", "/faults", json={"rules": [{"method": "PATCH", "path": "/changes$", "status": 502,
                                                       "times": 1, "after_commit": True}]}))
    assert api.patch(CHANGES, json={"replicas": 4}).status_code == 502
    again = change(api, replicas=4)  # the retry finds the pending request: the same one, unchanged
    assert [c["id"] for c in ok(api.get(CHANGES))["data"]] == [again["id"]]
    ok(api.control("POST", "/faults", json={"rules": [{"method": "PUT", "path": "/resizes$", "status": 504,
                                                       "times": 1, "after_commit": True}]}))
    assert api.call("PUT", RESIZES, json={"vtgate_count": 4}).status_code == 504
    resize = ok(api.call("PUT", RESIZES, json={"vtgate_count": 4}))
    assert [r["id"] for r in ok(api.get(RESIZES))["data"]] == [resize["id"]]
