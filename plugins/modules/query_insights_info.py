#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: query_insights_info
short_description: Read what the queries of a branch are doing (query insights)
version_added: 0.3.0
description:
  - Reads a branch's query insights as an operator asks for them, such as the 20 queries that used the most time in
    the last hour, the errors since a deploy, the anomalies of the last day, the query tags and the statistics of
    each tag value, or one query pattern (fingerprint) with its summary and samples.
  - Lists are read to their end, every page, unless O(limit) stops earlier. The numbers are the platform's; this
    module only asks and passes them on (durations are milliseconds, fractional on the platform).
  - An anomaly, tag, sample or query pattern that does not exist is not an error; the result is then empty (or null).
    A branch, database or organization that does not exist is an error.
author:
  - planetscale.cloud contributors (@planetscale-ansible)
options:
  database:
    description: The name of the database.
    type: str
    required: true
  branch:
    description: The name of the branch.
    type: str
    required: true
  show:
    description:
      - What to read. V(queries) (RV(queries)), the query patterns with their statistics; V(errors) (RV(errors)), the
        query errors, or with O(error_fingerprint) the failed queries of one (RV(samples)); V(anomalies)
        (RV(anomalies)), or one with O(anomaly_id); V(tags) (RV(tags)), the query tags and their values, or one with
        O(tag); V(tag_summaries) (RV(tag_summaries)), the statistics per value of O(tags); V(query), one query pattern
        (O(fingerprint) and O(keyspace)) with its summary (RV(query)) and samples (RV(samples)), or one sample
        (O(query_id), in RV(samples)).
    type: str
    choices: [queries, errors, anomalies, tags, tag_summaries, query]
    default: queries
  period:
    description: The window, back from now. Without it and without O(from), the platform's default window.
    type: str
    choices: [15m, 1h, 3h, 6h, 12h, 1d, 2d, 7d, 8d]
  from:
    description: The start of the window (ISO 8601, such as V(2026-01-01T00:00:00Z)), for example a deploy's
      C(deployed_at). Not with O(period).
    type: str
  to:
    description: The end of the window (ISO 8601). Not with O(period).
    type: str
  sort:
    description:
      - What the list is ordered by, largest first unless O(order) says V(asc). V(total_time) (the default for
        queries and tag summaries), V(count), V(rows_read), V(rows_returned), V(rows_affected), V(error_count),
        V(time_per_query), V(p50_latency), V(p99_latency), V(max_latency), V(last_run) and the platform's other
        sort fields in snake case. Errors take V(error), V(last_run), V(count), V(total_time) and
        V(time_per_query).
      - With O(show=queries), O(show=errors) or O(show=tag_summaries) only.
    type: str
  order:
    description: The direction of O(sort).
    type: str
    choices: [asc, desc]
  limit:
    description: Return at most this many items of a list (after O(sort)). By default every item is returned.
    type: int
  search:
    description: Only the queries whose SQL contains this (errors, their message; tags, their name).
    type: str
  statement_type:
    description: Only the queries of this kind (queries and tag summaries).
    type: str
    choices: [SELECT, INSERT, UPDATE, DELETE]
  tablet_type:
    description: Only what ran on these tablets.
    type: str
    choices: [primary, replica, rdonly]
  fingerprint:
    description: The query pattern of O(show=query); with O(show=tags), only the tags of its queries.
    type: str
  keyspace:
    description: The keyspace of O(fingerprint) (required with it for O(show=query)); with O(show=tags), only its tags.
    type: str
  query_id:
    description: One sample (an execution of a query) to read, with O(show=query).
    type: str
  error_fingerprint:
    description: With O(show=errors), the failed queries of this error (the C(error_fingerprint) of an item of
      RV(errors)).
    type: str
  anomaly_id:
    description: With O(show=anomalies), the one anomaly to read.
    type: str
  tag:
    description: With O(show=tags), the one tag to read, by name.
    type: str
  tags:
    description: With O(show=tag_summaries), the tags to group by (the C(id) of items of RV(tags)).
    type: list
    elements: str
  values_limit:
    description: With O(show=tags), at most this many values per tag (1 to 100).
    type: int
  literal_values_only:
    description: With O(show=tags), only the literal values of a tag (no overflow or collapsed values).
    type: bool
extends_documentation_fragment:
  - planetscale.cloud.api
  - planetscale.cloud.api.connection
  - planetscale.cloud.api.organization
  - planetscale.cloud.attributes.info
seealso:
  - module: planetscale.cloud.deploy_request_info
"""

EXAMPLES = r"""
- name: The 20 queries that used the most time in the last hour
  planetscale.cloud.query_insights_info:
    organization: acme
    database: app
    branch: main
    period: 1h
    sort: total_time
    limit: 20
  register: slowest

- name: The errors since a moment (a deploy's deployed_at)
  planetscale.cloud.query_insights_info:
    organization: acme
    database: app
    branch: main
    show: errors
    from: "{{ '%Y-%m-%dT%H:%M:%SZ' | strftime(now(utc=true).timestamp() - 3600, utc=true) }}"
  register: errors

- name: The anomalies of the last day
  planetscale.cloud.query_insights_info:
    organization: acme
    database: app
    branch: main
    show: anomalies
    period: 1d
  register: anomalies

- name: The query tags, at most five values each
  planetscale.cloud.query_insights_info:
    organization: acme
    database: app
    branch: main
    show: tags
    values_limit: 5
  register: query_tags

- name: The slowest query pattern's summary and samples
  planetscale.cloud.query_insights_info:
    organization: acme
    database: app
    branch: main
    show: query
    fingerprint: "{{ slowest.queries[0].fingerprint }}"
    keyspace: "{{ slowest.queries[0].keyspace }}"
  when: slowest.queries | length > 0
"""

RETURN = r"""
queries:
  description:
    - With O(show=queries), the query patterns in the window, in the order of O(sort). Each has C(fingerprint),
      C(keyspace), C(statement_type), C(normalized_sql), C(tables), C(query_count), C(error_count),
      C(sum_total_duration_millis), C(time_per_query), C(p50_latency), C(p99_latency), C(max_latency) (milliseconds),
      C(sum_rows_read), C(sum_rows_returned), C(sum_rows_affected), C(sum_total_duration_percent) and C(last_run_at),
      among the platform's other statistics.
  returned: O(show=queries)
  type: list
  elements: dict
errors:
  description: With O(show=errors), the errors in the window, each with C(error_fingerprint), C(error_message),
    C(error_count), C(started_at), C(total_duration_millis) and C(time_per_query).
  returned: O(show=errors) without O(error_fingerprint)
  type: list
  elements: dict
anomalies:
  description: With O(show=anomalies), the anomalies (or the one of O(anomaly_id)), each with C(period_start),
    C(period_end), C(minutes_in_violation), C(active), C(duration) and C(correlations), the query patterns that go
    with it (C(fingerprint), C(normalized_sql), C(r)).
  returned: O(show=anomalies)
  type: list
  elements: dict
tags:
  description: With O(show=tags), the tags (or the one of O(tag)), each with C(id), C(name), C(source) (C(sql) or
    C(system)), C(query_count) and C(values) (C(name), C(query_count), C(kind)).
  returned: O(show=tags)
  type: list
  elements: dict
tag_summaries:
  description: With O(show=tag_summaries), the statistics of each combination of tag values (C(dimensions)), as
    RV(queries) has them.
  returned: O(show=tag_summaries)
  type: list
  elements: dict
query:
  description: With O(show=query) and O(fingerprint), the summary of the query pattern (as an item of RV(queries)),
    or null when it did not run in the window.
  returned: O(show=query)
  type: dict
samples:
  description: Executions of a query, newest first, each with C(id), C(started_at), C(total_duration_millis),
    C(rows_read), C(rows_returned), C(rows_affected), C(error_message), C(username) and C(tags), the samples of
    O(fingerprint), the one of O(query_id), or the failed queries of O(error_fingerprint).
  returned: O(show=query), or O(show=errors) with O(error_fingerprint)
  type: list
  elements: dict
"""

from ansible_collections.planetscale.cloud.plugins.module_utils.adapter import run_module
from ansible_collections.planetscale.cloud.plugins.module_utils.base import InfoModule, ModuleFailure
from ansible_collections.planetscale.cloud.plugins.module_utils.options import CONNECTION, CREDENTIALS, ORGANIZATION
from ansible_collections.planetscale.cloud.plugins.module_utils.timestamps import parse_iso8601

ERROR_SORTS = ("error", "last_run", "count", "total_time", "time_per_query")
SORTS = tuple("""keyspace query last_run count error_count rows_read rows_affected rows_returned rows_read_per_returned
    rows_read_per_query rows_returned_per_query rows_affected_per_query total_time cpu_time io_time sum_shard_queries
    max_shard_queries avg_shard_queries avg_parallel_workers table qualified_table table_keyspace indexes
    routing_indexes p50_latency p99_latency max_latency percent_time percent_cpu_time percent_io_time egress_bytes
    egress_bytes_per_query max_egress_bytes ingress_bytes ingress_bytes_per_query max_ingress_bytes blocks_read
    blocks_hit block_cache_hit_ratio blocks_dirtied blocks_written traffic_control_warnings traffic_control_throttled
    traffic_control_checked traffic_control_budgets_used dimensions""".split())
# what each view takes beside the window (from, to, period): options -> the API's query parameters
FILTERS = {
    "queries": dict(search="q", sort="sort", order="dir", tablet_type="tablet_type", statement_type="type"),
    "errors": dict(search="q", sort="sort", order="dir", tablet_type="tablet_type", error_fingerprint=None),
    "anomalies": dict(anomaly_id=None),
    "tags": dict(search="q", fingerprint="fingerprint", keyspace="keyspace", tablet_type="tablet_type",
                 values_limit="values_limit", literal_values_only="literal_values_only", tag=None),
    "tag_summaries": dict(tags="tags", search="q", sort="sort", order="dir", tablet_type="tablet_type",
                          statement_type="type"),
    "query": dict(fingerprint=None, keyspace="keyspace", query_id=None),
}
WINDOW = {"from": "from", "to": "to", "period": "period"}


def camel(name):
    """A sort name as the API spells it: total_time -> totalTime."""
    parts = name.split("_")
    return parts[0] + "".join(part.capitalize() for part in parts[1:])


class QueryInsightsInfo(InfoModule):
    """Query insights read as an operator asks: one view (show) of a branch, its filters and its window."""

    option_sets = (CREDENTIALS, CONNECTION, ORGANIZATION)
    argument_spec = {
        "database": dict(type="str", required=True),
        "branch": dict(type="str", required=True),
        "show": dict(type="str", default="queries", choices=list(FILTERS)),
        "period": dict(type="str", choices=["15m", "1h", "3h", "6h", "12h", "1d", "2d", "7d", "8d"]),
        "from": dict(type="str"),
        "to": dict(type="str"),
        "sort": dict(type="str"),
        "order": dict(type="str", choices=["asc", "desc"]),
        "limit": dict(type="int"),
        "search": dict(type="str"),
        "statement_type": dict(type="str", choices=["SELECT", "INSERT", "UPDATE", "DELETE"]),
        "tablet_type": dict(type="str", choices=["primary", "replica", "rdonly"]),
        "fingerprint": dict(type="str"),
        "keyspace": dict(type="str", no_log=False),  # a keyspace name, not a key
        "query_id": dict(type="str"),
        "error_fingerprint": dict(type="str"),
        "anomaly_id": dict(type="str"),
        "tag": dict(type="str"),
        "tags": dict(type="list", elements="str"),
        "values_limit": dict(type="int"),
        "literal_values_only": dict(type="bool"),
    }
    path_options = ("database", "branch", "fingerprint", "query_id", "error_fingerprint", "anomaly_id", "tag")
    must_exist = ("database", "branch")

    def validate(self):
        super().validate()
        params, show = self.params, self.params["show"]
        for name in ("from", "to"):
            if params[name] is not None and parse_iso8601(params[name]) is None:
                raise ModuleFailure("%s must be an ISO 8601 time such as 2026-01-31T12:00:00Z, not %r." % (
                    name, params[name]))
        if params["period"] is not None and (params["from"] is not None or params["to"] is not None):
            raise ModuleFailure("Give either period or from and to, not both: period is the window back from now.")
        if params["from"] and params["to"] and parse_iso8601(params["from"]) > parse_iso8601(params["to"]):
            raise ModuleFailure("from (%s) is after to (%s): the window would be empty." % (
                params["from"], params["to"]))
        stray = [name for name in set().union(*(FILTERS.values())) - set(FILTERS[show])
                 if params[name] not in (None, [])]
        if stray:
            raise ModuleFailure("%s %s not taken with show=%s: it takes %s." % (
                ", ".join(sorted(stray)), "is" if len(stray) == 1 else "are", show, ", ".join(sorted(FILTERS[show]))))
        sorts = ERROR_SORTS if show == "errors" else SORTS
        if params["sort"] is not None and params["sort"] not in sorts:
            raise ModuleFailure("sort of %s must be one of %s, not %r." % (show, ", ".join(sorts), params["sort"]))
        if show == "query" and not params["query_id"] and not (params["fingerprint"] and params["keyspace"]):
            raise ModuleFailure("show=query reads one query pattern (fingerprint and keyspace) or one sample "
                                "(query_id): give them.")
        if params["values_limit"] is not None and not 1 <= params["values_limit"] <= 100:
            raise ModuleFailure("values_limit must be between 1 and 100, not %s." % params["values_limit"])

    def query(self, show, *skip):
        """The API's query parameters of the view: the window and the view's filters (skip: those in the path)."""
        found = dict((api, self.params[name]) for name, api in WINDOW.items() if self.params[name] is not None)
        for name, api in FILTERS[show].items():
            value = self.params[name]
            if api is not None and name not in skip and value not in (None, []):
                found[api] = str(value).lower() if isinstance(value, bool) else value
        if "sort" in found:
            found["sort"] = camel(found["sort"])
        return found

    def run(self):
        show, params = self.params["show"], self.params
        insights = self.org_path("databases", params["database"], "branches", params["branch"], "insights")
        if show == "errors" and params["error_fingerprint"]:
            url = "%s/errors/%s" % (insights, params["error_fingerprint"])
            return dict(samples=self.items(url, self.window(), params["limit"]))
        if show == "query":
            return self.pattern(insights)
        one = dict(anomalies=params["anomaly_id"], tags=params["tag"]).get(show)
        if one is not None:
            query = self.query(show, "search") if show == "tags" else None
            found = self.client.get("%s/%s/%s" % (insights, show, one), params=query or None, missing_ok=True)
            if found is None:
                self.branch_exists()
            return {show: [found] if found is not None else []}
        path = dict(queries=insights, tag_summaries=insights + "/tags/summaries").get(show, "%s/%s" % (insights, show))
        return {show: self.items(path, self.query(show) or None, params["limit"])}

    def window(self):
        return dict((api, self.params[name]) for name, api in WINDOW.items() if self.params[name] is not None) or None

    def pattern(self, insights):
        """One query pattern (its summary and samples) or one sample; absent: null and no samples."""
        if self.params["query_id"]:
            found = self.client.get("%s/queries/%s" % (insights, self.params["query_id"]), missing_ok=True)
            if found is None:
                self.branch_exists()
            return dict(query=None, samples=[found] if found is not None else [])
        url = "%s/%s" % (insights, self.params["fingerprint"])
        query = self.query("query")
        summary = self.client.get(url + "/summary", params=query, missing_ok=True)
        if summary is None:
            self.branch_exists()
            return dict(query=None, samples=[])
        return dict(query=summary, samples=self.items(url, query, self.params["limit"]))

    def branch_exists(self):
        """Fail as a missing branch, database or organization does (a missing item of it is no failure): the
        branch's list of queries, one item, needs no other access than the rest."""
        self.client.get(self.org_path("databases", self.params["database"], "branches", self.params["branch"],
                                      "insights"), params=dict(per_page=1))


def main():
    run_module(QueryInsightsInfo)


if __name__ == "__main__":
    main()
