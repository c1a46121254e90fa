"""Branch metrics (issue 47): the 8 operations under .../branches/{branch}/metrics, derived from the real data plane
(world/metrics.py): table sizes from MariaDB's and PostgreSQL's catalogs, statement counts from MariaDB's
performance_schema for statements a real client ran, tablets from the branch's keyspaces and shards, PostgreSQL's
settings and sessions; the published shapes by default and the platform's under recorded_metrics.

Every answer is validated against the published OpenAPI after the test (conftest.openapi_check)."""

import json

from emulator.dataplane.servers import current

from .conftest import DB, MAIN
from .test_dataplane import development_branch, mysql_login, run

METRICS = f"{MAIN}/metrics"
PG_MAIN = "/v1/organizations/acme/databases/pgapp/branches/main"


def ok(response):
    assert response.status_code == 200, response.text
    return response.json()


def refused(response):
    assert response.status_code == 422, response.text
    return response.json()["message"]


def password(api, branch, role):
    answer = api.post(f"{branch}/passwords", json={"name": f"metrics-{role}", "role": role})
    assert answer.status_code == 201, answer.text
    return answer.json()


def recorded(api, on=True):
    assert api.control("POST", "/settings", json={"recorded_metrics": on}).status_code == 200


def series_of(answer):
    """The series of an answer in either shape (JSON strings by default, objects when recorded)."""
    return [json.loads(item) if isinstance(item, str) else item for item in answer["series"]]


def catalog_sizes(schema):
    rows = current().my("SELECT TABLE_NAME, DATA_LENGTH + INDEX_LENGTH FROM information_schema.TABLES "
                        "WHERE TABLE_SCHEMA = %s", (schema,))
    return {table: int(size) for table, size in rows}


def test_table_maps_are_the_catalogs_sizes_by_table_and_by_keyspace(api, dataplane):
    dev = development_branch(api, "metrics-tables")
    admin = password(api, dev, "admin")
    with mysql_login(dataplane, admin) as connection:
        run(connection, "CREATE TABLE orders (id bigint PRIMARY KEY, note varchar(20), KEY by_note (note))")
        schema = run(connection, "SELECT DATABASE()")[0][0]
    sizes = catalog_sizes(schema)
    assert set(sizes) == {"users", "orders"} and all(size > 0 for size in sizes.values())
    assert ok(api.get(f"{dev}/metrics/tables")) == sizes  # the published description: keyed by table name
    assert ok(api.get(f"{dev}/metrics/keyspace-tables")) == {"app": sizes}
    recorded(api)
    assert ok(api.get(f"{dev}/metrics/tables")) == {"app": sizes}  # as the platform answers: keyspace -> table
    series = series_of(ok(api.get(f"{dev}/metrics", params={"metrics": "storage_per_table", "period": "1h"})))
    assert {(s["labels"]["table"], s["points"][0][1]) for s in series} == set(sizes.items())
    assert all(len(s["points"]) == 1 for s in series)  # now, the one moment whose size the servers know


def test_statement_metrics_count_what_a_real_client_ran(api, dataplane):
    dev = development_branch(api, "metrics-queries")
    reader = password(api, dev, "reader")
    with mysql_login(dataplane, reader) as connection:
        schema = run(connection, "SELECT DATABASE()")[0][0]
        for number in range(3):
            run(connection, f"SELECT id, email FROM users WHERE id = {number}")
        run(connection, "SELECT COUNT(*) FROM users /* route='checkout',app='web' */")
    digests = current().my("SELECT DIGEST, COUNT_STAR, SUM_ROWS_EXAMINED FROM performance_schema."
                           "events_statements_summary_by_digest WHERE SCHEMA_NAME = %s", (schema,))
    fingerprint = next(digest for digest, count, _ in digests if count == 3)
    answer = ok(api.get(f"{dev}/metrics", params={"metrics": "queries,rows_read,latency_max", "period": "15m",
                                                  "steps": 15}))
    assert answer["interval"] == 60 and answer["type"] == "MetricSeries"
    queries, rows_read, latency = series_of(answer)
    assert len(queries["points"]) == 15 and sum(v for _, v in queries["points"]) == 5  # SELECT DATABASE(), 3, 1
    assert sum(v for _, v in rows_read["points"]) == sum(int(r) for _, _, r in digests)
    assert latency["points"] and all(v > 0 for _, v in latency["points"])  # only the steps that ran statements
    query = series_of(ok(api.get(f"{dev}/metrics/query", params={"fingerprint": fingerprint, "period": "15m",
                                                                 "metrics": "queries"})))
    assert [(s["labels"], sum(v for _, v in s["points"])) for s in query] == [
        ({"fingerprint": fingerprint, "keyspace": "app"}, 3)]
    assert "FROM `users`" in query[0]["label"] or "FROM users" in query[0]["label"]
    tagged = series_of(ok(api.get(f"{dev}/metrics/tag", params={"tag_sets": "route:checkout&app:web,route:cart",
                                                                "metrics": "queries", "period": "15m"})))
    assert [(s["label"], sum(v for _, v in s["points"])) for s in tagged] == [("route:checkout&app:web", 1),
                                                                            ("route:cart", 0)]
    seen = series_of(ok(api.get(f"{dev}/metrics/tag", params={"metrics": "queries", "period": "15m"})))
    assert {s["label"]: sum(v for _, v in s["points"]) for s in seen}["route:checkout"] == 1  # each tag seen
    bad_tag = api.get(f"{dev}/metrics/tag", params={"tag_sets": "checkout"})
    assert bad_tag.status_code == 400 and "is not name:value" in bad_tag.json()["message"]
    replicas = series_of(ok(api.get(f"{dev}/metrics", params={"metrics": "queries", "tablet_type": "replica"})))
    assert sum(v for _, v in replicas[0]["points"]) == 0  # no replica serves a statement here
    api.advance(3600)  # an hour later the last 15 minutes hold none of them
    later = series_of(ok(api.get(f"{dev}/metrics", params={"metrics": "queries", "period": "15m"})))
    assert sum(v for _, v in later[0]["points"]) == 0


def test_tablets_are_the_keyspaces_shards_and_what_is_unknown_has_no_points(api):
    assert api.post(f"{MAIN}/keyspaces", json={"name": "sharded", "shards": 2,
                                               "cluster_size": "PS_10"}).status_code == 200
    recorded(api)
    series = series_of(ok(api.get(f"{METRICS}/tablets", params={"metrics": "shard_storage_usage,pod_cpu_usage"})))
    assert [(s["labels"]["keyspace"], s["labels"]["shard"], s["metric"]) for s in series] == [
        ("app", "-", "shard_storage_usage"), ("app", "-", "pod_cpu_usage"),
        ("sharded", "-80", "shard_storage_usage"), ("sharded", "-80", "pod_cpu_usage"),
        ("sharded", "80-", "shard_storage_usage"), ("sharded", "80-", "pod_cpu_usage")]
    sizes = ok(api.get(f"{METRICS}/keyspace-tables"))
    assert series[0]["points"][0][1] == sum(sizes["app"].values()) and series[0]["labels"]["pod"] == "app-x-primary"
    assert all(not s["points"] for s in series[1:])  # CPU is not measured; a sharded keyspace's rows are not placed
    only = series_of(ok(api.get(f"{METRICS}/tablets", params={"keyspace": "sharded", "shard": "80-"})))
    assert {s["labels"]["shard"] for s in only} == {"80-"}
    instant = ok(api.get(f"{METRICS}/tablets-instant", params={"metrics": "replication_lag"}))
    assert instant == {"type": "InstantMetrics", "branch": {"name": "main"},
                       "metrics": [{"metric": "replication_lag", "label": "replication_lag", "values": []}]}
    disk = ok(api.get(f"{METRICS}/instant", params={"metrics": "planetscale_volume_disk_usage_bytes"}))
    assert disk["metrics"][0]["values"] == [{"pod": "app-x-primary", "role": "primary",
                                             "value": sum(sizes["app"].values())}]


def test_postgres_instant_metrics_are_the_servers_settings_and_sessions(api):
    answer = ok(api.get(f"{PG_MAIN}/metrics/instant"))
    metrics = [json.loads(item) for item in answer["metrics"]]  # the published type: JSON strings
    by_name = {item["metric"]: item for item in metrics}
    setting = int(current().pg("SHOW max_connections")[0][0])
    assert by_name["planetscale_postgres_settings_max_connections"]["values"] == [
        {"pod": "primary", "role": "primary", "value": setting}]
    assert answer["branch"]["name"] == "main"
    statements = series_of(ok(api.get(f"{PG_MAIN}/metrics", params={"metrics": "queries"})))
    assert statements[0]["points"] == []  # pg_stat_statements keeps no times


def test_bad_ranges_and_names_are_refused(api):
    assert "period" in refused(api.get(METRICS, params={"period": "5m"}))
    assert refused(api.get(METRICS, params={"from": "2026-01-02T00:00:00Z", "to": "2026-01-01T00:00:00Z"})) \
        == "from must be before to"
    assert "needs a time zone" in refused(api.get(METRICS, params={"from": "2026-01-02T00:00:00"}))
    assert "is not a metric name" in refused(api.get(METRICS, params={"metrics": "Queries;"}))
    assert "steps" in refused(api.get(f"{METRICS}/query", params={"steps": 0}))
    assert api.get(f"{DB}/branches/nope/metrics/tables").status_code == 404
