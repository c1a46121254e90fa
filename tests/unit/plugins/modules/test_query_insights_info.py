# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

import pytest

from ansible_collections.planetscale.cloud.plugins.module_utils.base import ModuleFailure
from ansible_collections.planetscale.cloud.plugins.modules.query_insights_info import QueryInsightsInfo

INSIGHTS = "/v1/organizations/acme/databases/shop/branches/main/insights"
NOT_FOUND = (404, dict(code="not_found", message="Not Found"))

MODULE = QueryInsightsInfo  # run by the `run` fixture (tests/unit/conftest.py) with ARGS
ARGS = dict(organization="acme", database="shop", branch="main", service_token_id="svc", service_token="s3cret")


def query(fingerprint, millis=2.5):
    return dict(id="q-" + fingerprint, fingerprint=fingerprint, keyspace="shop", sum_total_duration_millis=millis)


def recorded(items):
    """A list as the platform's recorded answers carry it: no next_page, no per_page."""
    return (200, dict(type="list", current_page=1, data=items))


def test_the_queries_that_used_the_most_time_in_the_last_hour(server, run):
    server.script = [recorded([query("a", 14.595), query("b")])]
    result = run(period="1h", sort="total_time", limit=20, check_mode=True)
    assert [q["fingerprint"] for q in result["queries"]] == ["a", "b"] and result["changed"] is False
    assert result["queries"][0]["sum_total_duration_millis"] == 14.595  # the platform's fraction, passed on
    assert server.requests[0]["path"] == INSIGHTS
    assert server.requests[0]["query"] == dict(period=["1h"], sort=["totalTime"], per_page=["20"], page=["1"])


def test_every_page_of_a_lean_list_is_read(server, run):
    server.script = [recorded([query("q%d" % n) for n in range(100)]), recorded([query("last")])]
    result = run(show="tags")
    assert len(result["tags"]) == 101
    pages = [(r["path"], r["query"]["page"]) for r in server.requests]
    assert pages == [(INSIGHTS + "/tags", ["1"]), (INSIGHTS + "/tags", ["2"])]


def test_the_errors_since_a_moment_and_the_failed_queries_of_one(server, run):
    server.script = [recorded([dict(error_fingerprint="e1", error_count=2)]), recorded([dict(id="s1")])]
    since = "2026-11-22T01:02:03.000Z"
    assert run(show="errors", search="denied", sort="count", order="asc", **{"from": since})["errors"][0][
        "error_fingerprint"] == "e1"
    assert server.requests[0]["query"] == {"from": [since], "q": ["denied"], "sort": ["count"], "dir": ["asc"],
                                           "per_page": ["100"], "page": ["1"]}
    assert run(show="errors", error_fingerprint="e1", period="1d")["samples"] == [dict(id="s1")]
    assert server.requests[1]["path"] == INSIGHTS + "/errors/e1" and server.requests[1]["query"]["period"] == ["1d"]


def test_one_anomaly_and_one_that_is_gone(server, run):
    server.script = [(200, dict(id="an1", active=True)), NOT_FOUND, recorded([])]
    assert run(show="anomalies", anomaly_id="an1")["anomalies"] == [dict(id="an1", active=True)]
    assert run(show="anomalies", anomaly_id="gone")["anomalies"] == []
    assert [r["path"] for r in server.requests] == [INSIGHTS + "/anomalies/an1", INSIGHTS + "/anomalies/gone", INSIGHTS]
    assert server.requests[2]["query"] == dict(per_page=["1"])


def test_a_missing_branch_fails_with_what_to_check(server, run):
    server.script = [NOT_FOUND, NOT_FOUND]
    with pytest.raises(ModuleFailure, match="branch"):
        run(show="tags", tag="route")


def test_one_tag_with_its_filters_and_summaries_by_tag(server, run):
    server.script = [(200, dict(name="route", values=[])), recorded([dict(dimensions=dict(route="/home"))])]
    assert run(show="tags", tag="route", values_limit=5, literal_values_only=True, keyspace="shop")["tags"][0][
        "name"] == "route"
    assert server.requests[0]["path"] == INSIGHTS + "/tags/route"
    assert server.requests[0]["query"] == dict(values_limit=["5"], literal_values_only=["true"], keyspace=["shop"])
    result = run(show="tag_summaries", tags=["t1", "t2"], statement_type="SELECT")
    assert result["tag_summaries"] == [dict(dimensions=dict(route="/home"))]
    assert server.requests[1]["path"] == INSIGHTS + "/tags/summaries"
    assert server.requests[1]["query"]["tags"] == ["t1", "t2"] and server.requests[1]["query"]["type"] == ["SELECT"]


def test_a_query_pattern_is_its_summary_and_its_samples(server, run):
    server.script = [(200, query("fp")), (200, dict(type="list", data=[dict(id="s2"), dict(id="s1")]))]
    result = run(show="query", fingerprint="fp", keyspace="shop", period="1h")
    assert result["query"]["fingerprint"] == "fp" and [s["id"] for s in result["samples"]] == ["s2", "s1"]
    assert [(r["path"], r["query"].get("keyspace")) for r in server.requests] == [
        (INSIGHTS + "/fp/summary", ["shop"]), (INSIGHTS + "/fp", ["shop"])]


def test_a_pattern_that_did_not_run_is_null_without_samples(server, run):
    server.script = [NOT_FOUND, recorded([])]
    assert run(show="query", fingerprint="fp", keyspace="shop") == dict(changed=False, query=None, samples=[])
    assert [r["path"] for r in server.requests] == [INSIGHTS + "/fp/summary", INSIGHTS]


def test_one_sample_by_id(server, run):
    server.script = [(200, dict(id="s1", rows_read=3))]
    assert run(show="query", query_id="s1")["samples"] == [dict(id="s1", rows_read=3)]
    assert server.requests[0]["path"] == INSIGHTS + "/queries/s1"


@pytest.mark.parametrize("args, says", [
    (dict(period="1h", **{"from": "2026-01-01T00:00:00Z"}), "either period or from"),
    ({"from": "2026-02-01T00:00:00Z", "to": "2026-01-01T00:00:00Z"}, "after to"),
    ({"from": "yesterday"}, "ISO 8601"),
    (dict(tag="route"), "tag is not taken with show=queries"),
    (dict(show="errors", statement_type="SELECT", keyspace="shop"), "keyspace, statement_type are not taken"),
    (dict(show="query", fingerprint="fp"), "fingerprint and keyspace"),
    (dict(sort="slowest"), "sort of queries must be one of"),
    (dict(show="errors", sort="rows_read"), "sort of errors must be one of error, last_run"),
    (dict(show="tags", values_limit=101), "between 1 and 100"),
    (dict(limit=0), "limit must be 1 or more"),
])
def test_bad_input_is_a_sentence_before_any_request(server, run, args, says):
    with pytest.raises(ModuleFailure, match=says):
        run(**args)
    assert server.requests == []
