# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

import json

import pytest

from ansible_collections.planetscale.cloud.plugins.module_utils.base import ModuleFailure
from ansible_collections.planetscale.cloud.plugins.modules.branch_metrics_info import BranchMetricsInfo

METRICS = "/v1/organizations/acme/databases/shop/branches/main/metrics"

MODULE = BranchMetricsInfo  # run by the `run` fixture (tests/unit/conftest.py) with ARGS
ARGS = dict(organization="acme", database="shop", branch="main", service_token_id="svc", service_token="s3cret")

QUERIES = dict(type="TimeSeries", metric="queries", label="queries", labels={},
               points=[[1769860800, 3], [1769860860, "2.5"], [1769860920, 0]])
TABLE = dict(type="TimeSeries", metric="storage_per_table", label="app.users",
             labels=dict(keyspace="app", table="users"), points=[])


def series_answer(items):
    return (200, dict(type="MetricSeries", start_date="2026-01-31T12:00:00.000Z", end_date="2026-01-31T12:03:00.000Z",
                      interval=60, series=items))


@pytest.mark.parametrize("items", [[QUERIES, TABLE], [json.dumps(QUERIES), json.dumps(TABLE)]],
                         ids=["recorded objects", "published strings"])
def test_series_of_either_shape_are_the_same_points_with_their_summary(server, run, items):
    server.script = [series_answer(items)]
    result = run(metrics=["queries", "storage_per_table"], period="1h", steps=3, check_mode=True)
    assert result["changed"] is False and (result["start"], result["interval"]) == ("2026-01-31T12:00:00.000Z", 60)
    queries, table = result["series"]
    assert queries["points"] == [dict(time="2026-01-31T12:00:00Z", value=3),
                                 dict(time="2026-01-31T12:01:00Z", value=2.5),
                                 dict(time="2026-01-31T12:02:00Z", value=0)]
    assert (queries["total"], queries["max"], queries["last"]) == (5.5, 3, 0)
    assert table == dict(metric="storage_per_table", label="app.users", labels=dict(keyspace="app", table="users"),
                         points=[], total=None, max=None, last=None)
    assert server.requests[0]["path"] == METRICS
    assert server.requests[0]["query"] == dict(metrics=["queries,storage_per_table"], period=["1h"], steps=["3"])


@pytest.mark.parametrize("args, path, query", [
    (dict(scope="tablets", keyspace="ks", shard="-80", since="2026-01-31T12:00:00Z", until="2026-01-31T13:00:00Z"),
     "/tablets", {"keyspace": ["ks"], "shard": ["-80"], "from": ["2026-01-31T12:00:00Z"],
                  "to": ["2026-01-31T13:00:00Z"]}),
    (dict(scope="query", fingerprint="abc", query_ids=["q1", "q2"], tablet_type="primary"),
     "/query", {"fingerprint": ["abc"], "query_ids": ["q1,q2"], "tablet_type": ["primary"]}),
    (dict(scope="tag", tag_sets=["route:checkout", "app:web"]), "/tag", {"tag_sets": ["route:checkout,app:web"]}),
], ids=["tablets", "query", "tag"])
def test_each_scope_reads_its_endpoint_with_the_filters_it_takes(server, run, args, path, query):
    server.script = [series_answer([])]
    assert run(**args)["series"] == []
    assert server.requests[0]["path"] == METRICS + path and server.requests[0]["query"] == query


@pytest.mark.parametrize("scope, path, name", [("branch", "/instant", "branch"),
                                               ("tablets", "/tablets-instant", "main")])
def test_instant_values_of_either_shape(server, run, scope, path, name):
    entry = dict(metric="planetscale_volume_disk_usage_bytes", label="disk",
                 values=[dict(pod="app-x-primary", role="primary", value="16384")])
    server.script = [(200, dict(type="InstantMetrics", branch=dict(name=name), metrics=[entry, json.dumps(entry)]))]
    result = run(scope=scope, instant=True, metrics=["planetscale_volume_disk_usage_bytes"])
    expected = dict(metric="planetscale_volume_disk_usage_bytes", label="disk",
                    samples=[dict(pod="app-x-primary", role="primary", value=16384)])
    assert result["metrics"] == [expected, expected]
    assert server.requests[0]["path"] == METRICS + path


def test_tables_by_table_name_or_by_keyspace_largest_first(server, run):
    server.script = [(200, dict(users=16384, orders=32768)), (200, dict(app=dict(users=16384), other=dict(big=99999)))]
    flat = run(scope="tables")
    assert flat == dict(changed=False, total_bytes=49152, tables=[dict(keyspace=None, name="orders", bytes=32768),
                                                                  dict(keyspace=None, name="users", bytes=16384)])
    assert run(scope="tables", keyspace="app")["tables"] == [dict(keyspace="app", name="users", bytes=16384)]
    assert [r["path"] for r in server.requests] == [METRICS + "/tables", METRICS + "/keyspace-tables"]
    assert [r["query"] for r in server.requests] == [{}, {}]


@pytest.mark.parametrize("answer", [dict(series="nope"), dict(series=["not json"]), dict(series=[dict(points=[[1]])])],
                         ids=["series not a list", "a string that is no object", "a point not a pair"])
def test_an_answer_the_module_cannot_read_fails_with_a_sentence(server, run, answer):
    server.script = [(200, answer)]
    with pytest.raises(ModuleFailure, match="GET .*/metrics"):
        run()


@pytest.mark.parametrize("args, message", [
    (dict(scope="query", instant=True), "instant is for scope branch or tablets"),
    (dict(fingerprint="abc"), "fingerprint does not filter the metrics of scope branch; it takes tablet_type"),
    (dict(instant=True, keyspace="ks"), "keyspace does not filter the metrics of scope branch with instant"),
    (dict(instant=True, period="1h"), "period is for series over a range; instant has none"),
    (dict(scope="tables", steps=5), "steps is for series over a range; scope tables has none"),
    (dict(scope="tables", metrics=["queries"]), "metrics is not for scope tables"),
    (dict(since="yesterday"), "since must be an ISO 8601 time"),
    (dict(since="2026-02-01T00:00:00Z", until="2026-01-01T00:00:00Z"), "since must be before until"),
    (dict(steps=0), "steps must be 1 or more"),
    (dict(metrics=["queries", " "]), "metrics must not hold an empty name"),
])
def test_bad_input_fails_before_any_request(server, run, args, message):
    with pytest.raises(ModuleFailure, match=message):
        run(**args)
    assert server.requests == []


def test_a_period_ends_now_so_it_takes_no_since_or_until(run):
    assert run.validate(period="1h", since="2026-01-01T00:00:00Z").error_messages == [
        "parameters are mutually exclusive: period|since"]
    assert run.validate(period="1h", until="2026-01-01T00:00:00Z").error_messages == [
        "parameters are mutually exclusive: period|until"]


def test_a_missing_branch_fails_naming_it(server, run):
    server.script = [(404, dict(code="not_found", message="Not Found"))]
    with pytest.raises(ModuleFailure, match="main"):
        run(scope="tables")
