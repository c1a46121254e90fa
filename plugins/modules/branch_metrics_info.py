#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: branch_metrics_info
short_description: Read the metrics of a branch, now or over a time range
version_added: 0.3.0
description:
  - Returns the metrics of a branch as the platform measures them. O(scope) chooses what they are of, the branch as a
    whole, its tablets (the primaries of its keyspaces' shards), its queries, its query tags, or its tables' sizes.
  - By default each metric is a series of points over a time range (the last O(period), or O(since) to O(until)).
    With O(instant=true) the module returns the values of now instead (for O(scope=branch) and O(scope=tablets)).
  - The platform's answers name their series in two shapes (the published description types them as strings, the
    platform answers objects); the module returns the same keys for both.
  - Only reads. A metric the platform does not measure for the branch comes back as a series without points, or an
    instant metric without values.
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
  scope:
    description:
      - What the metrics are of. V(branch) the branch as a whole, V(tablets) each tablet (keyspace and shard),
        V(query) each query (by fingerprint), V(tag) each set of query tags, V(tables) the size of each table in bytes
        (RV(tables)).
    type: str
    choices: [branch, tablets, query, tag, tables]
    default: branch
  instant:
    description:
      - Return the values of now (RV(metrics)) instead of series over a range (RV(series)). Only with
        O(scope=branch) or O(scope=tablets); not with O(period), O(since), O(until) or O(steps).
    type: bool
    default: false
  metrics:
    description:
      - The names of the metrics to read, such as V(queries), V(rows_read), V(total_duration_millis),
        V(latency_p99), V(storage_per_table) (O(scope=branch)), V(primary_queries), V(shard_storage_usage)
        (O(scope=tablets)) or V(planetscale_volume_disk_usage_bytes) (instant). The platform's API reference lists
        the names of each scope.
      - By default the platform chooses.
    type: list
    elements: str
  period:
    description: The time range that ends now. The platform's default is V(12h). Not with O(since) or O(until).
    type: str
    choices: [15m, 1h, 3h, 6h, 12h, 1d, 2d, 7d, 8d]
  since:
    description: The start of the time range (ISO 8601, such as V(2026-01-31T12:00:00Z)).
    type: str
  until:
    description: The end of the time range (ISO 8601). By default the platform ends the range now.
    type: str
  steps:
    description: How many points each series has over the range (the platform spaces them evenly).
    type: int
  keyspace:
    description:
      - Only the metrics of this keyspace. With O(scope=branch), O(scope=tablets) or O(scope=query); with
        O(scope=tables) only the tables of this keyspace.
    type: str
  shard:
    description: Only the metrics of this shard, such as V(-80). With O(scope=branch) or O(scope=tablets).
    type: str
  pod:
    description: Only the metrics of this pod. With O(scope=branch) or O(scope=tablets) over a range, or instant
      O(scope=branch).
    type: str
  tablet_type:
    description: Only the metrics of tablets of this type. With O(scope=branch), O(scope=query) or O(scope=tag) over a
      range.
    type: str
    choices: [primary, replica, rdonly]
  fingerprint:
    description: Only the query of this fingerprint (as query insights name it). With O(scope=query).
    type: str
  query_ids:
    description: Only the query patterns of these IDs. With O(scope=query).
    type: list
    elements: str
  tag_sets:
    description: The tag sets to read the metrics of, such as V(route:checkout). With O(scope=tag).
    type: list
    elements: str
extends_documentation_fragment:
  - planetscale.cloud.api
  - planetscale.cloud.api.connection
  - planetscale.cloud.api.organization
  - planetscale.cloud.attributes.info
seealso:
  - module: planetscale.cloud.branch
  - module: planetscale.cloud.branch_schema_info
"""

EXAMPLES = r"""
- name: Count the queries of main and the rows they read in the last hour, one point a minute
  planetscale.cloud.branch_metrics_info:
    organization: acme
    database: app
    branch: main
    metrics: [queries, rows_read, total_duration_millis]
    period: 1h
    steps: 60
  register: last_hour

- name: Say how many queries main ran
  ansible.builtin.debug:
    msg: "{{ queries.total }} queries, {{ queries.max }} in the busiest minute"
  vars:
    queries: "{{ last_hour.series | selectattr('metric', 'eq', 'queries') | first }}"

- name: Read the largest tables of main
  planetscale.cloud.branch_metrics_info:
    organization: acme
    database: app
    branch: main
    scope: tables
  register: sizes

- name: Show them, largest first
  ansible.builtin.debug:
    msg: "{{ sizes.tables[:5] }}"

- name: Read the disk main uses now
  planetscale.cloud.branch_metrics_info:
    organization: acme
    database: app
    branch: main
    instant: true
    metrics: [planetscale_volume_disk_usage_bytes]

- name: Read each tablet's queries since a deploy
  planetscale.cloud.branch_metrics_info:
    organization: acme
    database: app
    branch: main
    scope: tablets
    metrics: [primary_queries]
    since: "2026-01-31T12:00:00Z"
"""

RETURN = r"""
series:
  description:
    - The series over the range, one per metric and what it is of (a table, a tablet, a query, a tag set).
  returned: success, unless O(instant) or O(scope=tables)
  type: list
  elements: dict
  contains:
    metric:
      description: The name of the metric.
      type: str
      sample: queries
    label:
      description: What the series is of, as the platform labels it (a table, a tablet, a query's text, a tag set).
      type: str
    labels:
      description: The platform's labels of the series, such as C(keyspace), C(shard), C(table) or C(fingerprint).
      type: dict
    points:
      description: The points, oldest first.
      type: list
      elements: dict
      contains:
        time:
          description: The moment of the point (ISO 8601 UTC).
          type: str
          sample: "2026-01-31T12:00:00Z"
        value:
          description: The value at that moment.
          type: float
    total:
      description: The sum of the points' values (the count over the range for a count such as C(queries)), or
        null without points.
      type: float
    max:
      description: The largest value, or null without points.
      type: float
    last:
      description: The value of the newest point, or null without points.
      type: float
start:
  description: The start of the range the platform answered (ISO 8601).
  returned: success, unless O(instant) or O(scope=tables)
  type: str
end:
  description: The end of the range the platform answered (ISO 8601).
  returned: success, unless O(instant) or O(scope=tables)
  type: str
interval:
  description: The seconds between two points.
  returned: success, unless O(instant) or O(scope=tables)
  type: int
metrics:
  description: The values of now, one entry per metric and label.
  returned: O(instant=true)
  type: list
  elements: dict
  contains:
    metric:
      description: The name of the metric.
      type: str
    label:
      description: The platform's label of the entry.
      type: str
    samples:
      description:
        - The value of each pod, C(pod), C(role) and C(value). (The platform calls them C(values), a name that
          Jinja reads as the method of a dict.)
      type: list
      elements: dict
tables:
  description: The tables and their sizes, largest first.
  returned: O(scope=tables)
  type: list
  elements: dict
  contains:
    keyspace:
      description: The keyspace of the table, or null where the platform's answer names no keyspace.
      type: str
    name:
      description: The name of the table.
      type: str
    bytes:
      description: The table's size in bytes.
      type: int
total_bytes:
  description: The size of all the tables in RV(tables).
  returned: O(scope=tables)
  type: int
"""

import json
import math

from ansible_collections.planetscale.cloud.plugins.module_utils.adapter import run_module
from ansible_collections.planetscale.cloud.plugins.module_utils.base import InfoModule, ModuleFailure
from ansible_collections.planetscale.cloud.plugins.module_utils.options import CONNECTION, CREDENTIALS, ORGANIZATION
from ansible_collections.planetscale.cloud.plugins.module_utils.timestamps import iso8601, parse_iso8601

PERIODS = ("15m", "1h", "3h", "6h", "12h", "1d", "2d", "7d", "8d")
RANGE = ("period", "since", "until", "steps")
# the endpoint below .../metrics of each scope, over a range (False) or now (True), and the filters it takes
ENDPOINTS = {
    ("branch", False): ("", ("tablet_type", "keyspace", "shard", "pod")),
    ("branch", True): ("instant", ("shard", "pod")),
    ("tablets", False): ("tablets", ("keyspace", "shard", "pod")),
    ("tablets", True): ("tablets-instant", ("keyspace", "shard")),
    ("query", False): ("query", ("fingerprint", "query_ids", "keyspace", "tablet_type")),
    ("tag", False): ("tag", ("tag_sets", "tablet_type")),
    ("tables", False): ("tables", ("keyspace",)),
}
FILTERS = ("tablet_type", "keyspace", "shard", "pod", "fingerprint", "query_ids", "tag_sets")
API_NAMES = dict(since="from", until="to")


class BranchMetricsInfo(InfoModule):
    """The metrics of a branch: series over a range, values of now, or the tables' sizes."""

    option_sets = (CREDENTIALS, CONNECTION, ORGANIZATION)
    argument_spec = dict(
        database=dict(type="str", required=True),
        branch=dict(type="str", required=True),
        scope=dict(type="str", default="branch", choices=["branch", "tablets", "query", "tag", "tables"]),
        instant=dict(type="bool", default=False),
        metrics=dict(type="list", elements="str"),
        period=dict(type="str", choices=list(PERIODS)),
        since=dict(type="str"),
        until=dict(type="str"),
        steps=dict(type="int"),
        keyspace=dict(type="str", no_log=False),  # a keyspace name, not a key
        shard=dict(type="str"),
        pod=dict(type="str"),
        tablet_type=dict(type="str", choices=["primary", "replica", "rdonly"]),
        fingerprint=dict(type="str"),
        query_ids=dict(type="list", elements="str"),
        tag_sets=dict(type="list", elements="str"),
    )
    mutually_exclusive = (("period", "since"), ("period", "until"))
    path_options = ("database", "branch")
    must_exist = ("database", "branch")

    def validate(self):
        super().validate()
        scope, instant = self.params["scope"], self.params["instant"]
        if (scope, instant) not in ENDPOINTS:
            raise ModuleFailure("instant is for scope branch or tablets; the platform keeps no values of now for "
                                "scope %s: leave instant out to read its series over a range." % scope)
        given = [name for name in FILTERS if self.params[name] not in (None, [])]
        wrong = [name for name in given if name not in ENDPOINTS[scope, instant][1]]
        if wrong:
            takes = ", ".join(ENDPOINTS[scope, instant][1])
            raise ModuleFailure("%s does not filter the metrics of scope %s%s; it takes %s." % (
                " and ".join(wrong), scope, " with instant" if instant else "", takes))
        ranged = [name for name in RANGE if self.params[name] is not None]
        if ranged and (instant or scope == "tables"):
            raise ModuleFailure("%s is for series over a range; %s has none: leave %s out." % (
                " and ".join(ranged), "instant" if instant else "scope tables", " and ".join(ranged)))
        if scope == "tables" and self.params["metrics"]:
            raise ModuleFailure("metrics is not for scope tables: it answers the size of every table.")
        self.check_range()
        for name in ("metrics", "query_ids", "tag_sets"):
            if any(not (item or "").strip() for item in self.params[name] or []):
                raise ModuleFailure("%s must not hold an empty name." % name)

    def check_range(self):
        moments = {}
        for name in ("since", "until"):
            if self.params[name] is not None:
                moments[name] = parse_iso8601(self.params[name])
                if moments[name] is None:
                    raise ModuleFailure("%s must be an ISO 8601 time such as 2026-01-31T12:00:00Z, not %r." % (
                        name, self.params[name]))
        if len(moments) == 2 and moments["since"] >= moments["until"]:
            raise ModuleFailure("since must be before until, not %s after %s." % (
                self.params["since"], self.params["until"]))
        if self.params["steps"] is not None and self.params["steps"] < 1:
            raise ModuleFailure("steps must be 1 or more, not %s." % self.params["steps"])

    def run(self):
        scope, instant = self.params["scope"], self.params["instant"]
        endpoint, filters = ENDPOINTS[scope, instant]
        if scope == "tables":  # no query: the sizes by keyspace keep the keyspace asked for (matched here)
            endpoint, filters = "keyspace-tables" if self.params["keyspace"] is not None else endpoint, ()
        url = self.org_path("databases", self.params["database"], "branches", self.params["branch"], "metrics")
        url = "%s/%s" % (url, endpoint) if endpoint else url
        query = {}
        for name in ("metrics",) + RANGE + filters:
            value = self.params[name]
            if value not in (None, []):
                query[API_NAMES.get(name, name)] = ",".join(value) if isinstance(value, list) else value
        answer = self.client.get(url, params=query or None)
        if not isinstance(answer, dict):
            raise self.client.wrong_answer("the answer is not a JSON object")
        if scope == "tables":
            return self.tables(answer)
        if instant:
            return dict(metrics=[self.instant_entry(item) for item in self.entries(answer, "metrics")])
        return dict(series=[self.series(item) for item in self.entries(answer, "series")],
                    start=answer.get("start_date"), end=answer.get("end_date"), interval=answer.get("interval"))

    def entries(self, answer, key):
        """The objects of a list of the answer, each an object or (the published type) an object as a string."""
        found = answer.get(key) or []
        if not isinstance(found, list):
            raise self.client.wrong_answer("its %s is not a list" % key)
        objects = []
        for item in found:
            if isinstance(item, str):
                try:
                    item = json.loads(item)
                except ValueError:
                    item = None
            if not isinstance(item, dict):
                raise self.client.wrong_answer("an item of its %s is not an object, nor one written as a string" % key)
            objects.append(item)
        return objects

    def series(self, item):
        points = []
        for point in item.get("points") or []:
            if isinstance(point, dict):
                point = (point.get("time", point.get("timestamp")), point.get("value"))
            if not isinstance(point, (list, tuple)) or len(point) != 2:
                raise self.client.wrong_answer("a point of series %r is not a [time, value] pair" % item.get("metric"))
            points.append(dict(time=moment(point[0]), value=number(point[1])))
        values = [point["value"] for point in points if point["value"] is not None]
        return dict(metric=item.get("metric"), label=item.get("label"), labels=item.get("labels") or {},
                    points=points, total=sum(values) if values else None, max=max(values) if values else None,
                    last=values[-1] if values else None)

    @staticmethod
    def instant_entry(item):
        samples = [dict(pod=value.get("pod"), role=value.get("role"), value=number(value.get("value")))
                   for value in item.get("values") or [] if isinstance(value, dict)]
        return dict(metric=item.get("metric"), label=item.get("label"), samples=samples)

    def tables(self, answer):
        """The sizes of a bare map: keyspace -> table -> bytes, or (the published description) table -> bytes."""
        rows = []
        for key, value in answer.items():
            if isinstance(value, dict):
                rows += [dict(keyspace=key, name=table, bytes=number(size)) for table, size in value.items()]
            else:
                rows.append(dict(keyspace=None, name=key, bytes=number(value)))
        keyspace = self.params["keyspace"]
        rows = [row for row in rows if keyspace is None or row["keyspace"] == keyspace]
        rows.sort(key=lambda row: (-(row["bytes"] or 0), row["keyspace"] or "", row["name"]))
        return dict(tables=rows, total_bytes=sum(row["bytes"] or 0 for row in rows))


def moment(value):
    """A point's time: unix seconds (a number or its string) as ISO 8601; a time already written stays."""
    try:
        return iso8601(float(value))
    except (TypeError, ValueError):
        return value


def number(value):
    """A value as a number (the platform writes some as strings); a whole one as an int; null stays null."""
    if isinstance(value, bool) or value is None:
        return None
    try:
        found = float(value)
    except (TypeError, ValueError):
        return None
    if not math.isfinite(found):
        return None
    return int(found) if found.is_integer() and abs(found) < 2 ** 53 else found


def main():
    run_module(BranchMetricsInfo)


if __name__ == "__main__":
    main()
