"""Query insights (issue 47): what a branch's queries did, as the data plane's servers measured the statements a
client ran through its own connection (a password of the branch, TLS verified): the queries and their statistics,
one sample, errors, tags from SQL comments, summaries by tag, a fingerprint's samples and summary, anomalies, the
window on the emulator clock, PostgreSQL's pg_stat_statements, and the recorded (lean) shapes.

Every answer is validated against the published OpenAPI after the test (conftest.openapi_check)."""

from datetime import UTC, datetime, timedelta

import pymysql
import pytest

from .conftest import DB, MAIN
from .test_dataplane import mysql_login, run
from .test_postgres import login

INSIGHTS = f"{MAIN}/insights"
PG_INSIGHTS = "/v1/organizations/acme/databases/pgapp/branches/main/insights"
LOOKUP = "SELECT * FROM `users` WHERE ID = ?"  # MariaDB's digest text
INSERT = "INSERT INTO `users` ( ID , `email` ) VALUES (...) /* , ... */"


def ok(response, status=200):
    assert response.status_code == status, response.text
    return response.json()


def settings(api, **changes):
    ok(api.control("POST", "/settings", json=changes))


def workload(api, dataplane):
    """A reader's connection runs three lookups (two tagged by a SQLCommenter comment), one scan and a query of a
    missing table, then closes; answers the password."""
    created = ok(api.post(f"{MAIN}/passwords", json={"name": "app", "role": "readwriter"}), 201)
    with mysql_login(dataplane, created) as connection:
        run(connection, "INSERT INTO users (id, email) VALUES (1, 'a@acme.test'), (2, 'b@acme.test')")
        run(connection, "/* route='%2Fhome',app='shop' */ SELECT * FROM users WHERE id = 1")
        run(connection, "/* route='%2Fcart',app='shop' */ SELECT * FROM users WHERE id = 2")
        run(connection, "SELECT * FROM users WHERE id = 3")
        run(connection, "SELECT email FROM users")
        with pytest.raises(pymysql.err.ProgrammingError):
            run(connection, "SELECT * FROM orders")
    return created


def by_sql(page):
    return {item["normalized_sql"]: item for item in page["data"]}


def test_the_queries_a_client_ran_are_listed_with_their_measured_statistics(api, dataplane):
    workload(api, dataplane)
    queries = by_sql(ok(api.get(INSIGHTS)))
    lookup = queries[LOOKUP]
    assert (lookup["query_count"], lookup["error_count"], lookup["statement_type"], lookup["keyspace"]) == (
        3, 0, "SELECT", "app")
    assert lookup["sum_rows_returned"] == 2 and lookup["tables"] == ["users"] and lookup["qualified_tables"] == [
        "app.users"]
    assert lookup["last_run_at"] and lookup["max_latency"] >= lookup["p50_latency"] > 0
    scan = queries["SELECT `email` FROM `users`"]
    assert scan["sum_rows_read"] == 2 and scan["sum_rows_returned"] == 2 and scan["query_count"] == 1
    assert queries[INSERT]["sum_rows_affected"] == 2
    failed = queries["SELECT * FROM `orders`"]
    assert failed["error_count"] == 1
    assert sum(item["sum_total_duration_percent"] for item in queries.values()) == pytest.approx(100)
    assert not any("SET" in sql for sql in queries)  # the driver's housekeeping is not a query


def test_filters_sort_and_pages(api, dataplane):
    workload(api, dataplane)
    assert [i["query_count"] for i in ok(api.get(INSIGHTS, params={"sort": "count"}))["data"]][0] == 3
    assert [i["query_count"] for i in ok(api.get(INSIGHTS, params={"sort": "count", "dir": "asc"}))["data"]][-1] == 3
    assert set(by_sql(ok(api.get(INSIGHTS, params={"q": "`EMAIL` from"})))) == {"SELECT `email` FROM `users`"}
    assert {i["statement_type"] for i in ok(api.get(INSIGHTS, params={"type": "INSERT"}))["data"]} == {"INSERT"}
    assert ok(api.get(INSIGHTS, params={"tablet_type": "replica"}))["data"] == []  # primaries only
    first, second = (ok(api.get(INSIGHTS, params={"per_page": 2, "page": n})) for n in (1, 2))
    assert len(first["data"]) == 2 and first["next_page"] == 2 and len(second["data"]) == 2
    assert api.get(INSIGHTS, params={"period": "5m"}).status_code == 422
    assert "ISO 8601" in ok(api.get(INSIGHTS, params={"from": "yesterday"}), 422)["message"]


def test_the_window_is_on_the_emulator_clock(api, dataplane):
    before = datetime.now(UTC) - timedelta(seconds=1)
    created = workload(api, dataplane)
    assert ok(api.get(INSIGHTS, params={"to": before.isoformat()}))["data"] == []
    assert len(ok(api.get(INSIGHTS, params={"from": before.isoformat()}))["data"]) == 4
    api.advance(2 * 3600)  # two hours later: not in the last hour, still in the last three
    assert ok(api.get(INSIGHTS, params={"period": "1h"}))["data"] == []
    assert len(ok(api.get(INSIGHTS, params={"period": "3h"}))["data"]) == 4
    with mysql_login(dataplane, created) as connection:  # a statement run now is now on the emulator clock
        run(connection, "SELECT COUNT(*) FROM users")
    assert [q["normalized_sql"] for q in ok(api.get(INSIGHTS, params={"period": "1h"}))["data"]] == [
        "SELECT COUNT ( * ) FROM `users`"]
    api.client.post("/_emulator/reset")  # another world: what the servers ran before is not its branch's
    assert ok(api.get(INSIGHTS))["data"] == []


def test_samples_of_a_fingerprint_its_summary_and_one_sample(api, dataplane):
    created = workload(api, dataplane)
    lookup = by_sql(ok(api.get(INSIGHTS)))[LOOKUP]
    params = {"keyspace": "app"}
    samples = ok(api.get(f"{INSIGHTS}/{lookup['fingerprint']}", params=params))["data"]
    assert len(samples) == 3 and {s["username"] for s in samples} <= {created["username"], ""}
    assert samples[-1]["tags"] == [{"name": "route", "value": "/home"}, {"name": "app", "value": "shop"}] + [
        tag for tag in samples[-1]["tags"] if tag["name"] in ("username", "remote_address")]
    summary = ok(api.get(f"{INSIGHTS}/{lookup['fingerprint']}/summary", params=params))
    assert summary["query_count"] == 3 and summary["fingerprint"] == lookup["fingerprint"]
    one = ok(api.get(f"{INSIGHTS}/queries/{samples[0]['id']}"))
    assert one["rows_returned"] == 0 and one["explainable"] is True  # the newest: id 3, no row
    assert api.get(f"{INSIGHTS}/queries/0-0").status_code == 404
    assert api.get(f"{INSIGHTS}/{lookup['fingerprint']}/summary", params={"keyspace": "other"}).status_code == 404
    assert api.get(f"{INSIGHTS}/{lookup['fingerprint']}").status_code == 422  # keyspace is required


def test_a_sample_names_its_connection_s_user_once_seen_connected(api, dataplane):
    created = workload(api, dataplane)
    with mysql_login(dataplane, created) as connection:
        run(connection, "SELECT 1 FROM users")
        ok(api.get(INSIGHTS))  # the read sees the connection: its user is known from now on
    pattern = by_sql(ok(api.get(INSIGHTS)))["SELECT ? FROM `users`"]
    sample = ok(api.get(f"{INSIGHTS}/{pattern['fingerprint']}", params={"keyspace": "app"}))["data"][0]
    assert (sample["username"], sample["remote_address"]) == (created["username"], "127.0.0.1")
    assert sample["password"]["id"] == created["id"]
    assert {"name": "username", "value": created["username"]} in sample["tags"]


def test_errors_and_their_samples(api, dataplane):
    workload(api, dataplane)
    errors = ok(api.get(f"{INSIGHTS}/errors"))["data"]
    assert [(e["error_count"], e["error_message"]) for e in errors] == [(1, "Table 'app.orders' doesn't exist")]
    samples = ok(api.get(f"{INSIGHTS}/errors/{errors[0]['error_fingerprint']}"))["data"]
    assert [s["normalized_sql"] for s in samples] == ["SELECT * FROM `orders`"]
    assert ok(api.get(f"{INSIGHTS}/errors", params={"q": "duplicate"}))["data"] == []


def test_tags_and_summaries_by_tag(api, dataplane):
    workload(api, dataplane)
    tags = {tag["name"]: tag for tag in ok(api.get(f"{INSIGHTS}/tags"))["data"]}
    assert tags["route"]["source"] == "sql" and tags["route"]["query_count"] == 2
    assert {v["name"] for v in tags["route"]["values"]} == {"/home", "/cart"}
    limited = ok(api.get(f"{INSIGHTS}/tags/route", params={"values_limit": 1}))
    assert [v["kind"] for v in limited["values"]] == ["literal", "overflow"]
    assert [v["kind"] for v in ok(api.get(f"{INSIGHTS}/tags/route", params={
        "values_limit": 1, "literal_values_only": True}))["values"]] == ["literal"]
    assert api.get(f"{INSIGHTS}/tags/nosuch").status_code == 404
    assert api.get(f"{INSIGHTS}/tags", params={"values_limit": 0}).status_code == 422
    summaries = ok(api.get(f"{INSIGHTS}/tags/summaries", params={"tags": [tags["app"]["id"]]}))["data"]
    counts = {s["dimensions"]["app"]: s["query_count"] for s in summaries}
    assert counts["shop"] == 2 and sum(counts.values()) == 6


def test_anomalies_are_minutes_with_slow_statements(api, dataplane):
    workload(api, dataplane)
    assert ok(api.get(f"{INSIGHTS}/anomalies"))["data"] == []  # nothing ran for a second
    settings(api, insights_slow_query_ms=0)
    anomalies = ok(api.get(f"{INSIGHTS}/anomalies"))["data"]  # one, or two when the workload crossed a minute
    assert anomalies and all(a["minutes_in_violation"] >= 1 and a["duration"] >= 60 for a in anomalies)
    for anomaly in anomalies:  # each slow statement's pattern, its share of the slow time
        assert sum(c["r"] for c in anomaly["correlations"]) == pytest.approx(1, abs=0.01)
    correlated = {c["normalized_sql"] for a in anomalies for c in a["correlations"]}
    assert correlated == {LOOKUP, INSERT, "SELECT `email` FROM `users`", "SELECT * FROM `orders`"}
    assert ok(api.get(f"{INSIGHTS}/anomalies/{anomalies[0]['id']}"))["period_start"] == anomalies[0]["period_start"]
    assert api.get(f"{INSIGHTS}/anomalies/nosuch").status_code == 404


def test_recorded_shapes(api, dataplane):
    workload(api, dataplane)
    settings(api, lean=True)
    listed = ok(api.get(INSIGHTS))
    assert set(listed) == {"type", "current_page", "data"}
    item = listed["data"][0]
    assert item["type"] == "HourlyBranchQuery" and isinstance(item["sum_total_duration_millis"], float)
    assert "egress_bytes" not in item and "sum_shard_queries" not in item
    fingerprint = by_sql(listed)[LOOKUP]["fingerprint"]
    samples = ok(api.get(f"{INSIGHTS}/{fingerprint}", params={"keyspace": "app"}))
    assert set(samples) == {"type", "data"} and "statement_type" not in samples["data"][0]
    assert set(ok(api.get(f"{INSIGHTS}/tags"))) == {"type", "data"}


def test_a_postgres_branch_answers_pg_stat_statements(api):
    role = ok(api.post("/v1/organizations/acme/databases/pgapp/branches/main/roles",
                       json={"name": "app", "inherited_roles": ["pg_write_all_data", "pg_read_all_data"]}))
    with login(api, role) as connection:
        for _ in range(3):
            connection.execute("SELECT count(*) FROM pg_class WHERE relname = %s", ["notes"])
    queries = ok(api.get(PG_INSIGHTS))["data"]
    counted = [q for q in queries if "pg_class" in q["normalized_sql"]]
    assert counted and counted[0]["query_count"] == 3 and counted[0]["last_run_at"] is None
    assert ok(api.get(f"{PG_INSIGHTS}/errors"))["data"] == []  # pg_stat_statements counts no errors
