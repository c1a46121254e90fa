"""A branch's metrics (the 8 operations under ``.../branches/{branch}/metrics``), derived from the real data plane.

Nothing here is invented: a metric the servers cannot tell has a series without points (or an instant metric without
values). What the servers tell:

- **table sizes**: ``information_schema.TABLES`` (``DATA_LENGTH + INDEX_LENGTH``) of each keyspace's schema on
  MariaDB (the branch's own, or its template until it is made: real, empty tables), and
  ``pg_total_relation_size`` of each table of a PostgreSQL branch's database (once made); the tables' and keyspaces'
  maps, ``storage_per_table`` and ``shard_storage_usage`` (one point, now, when the range holds now) and the instant
  ``planetscale_volume_disk_usage_bytes``;
- **statements**: each statement a branch's password ran in the branch's own keyspace schemas, as MariaDB's
  performance schema keeps it (``events_statements_history_long``: dataplane/insights.py, started by
  tests/harness/dataplane.py), at its moment on the emulator clock (``Clock.at``): ``queries``, ``query_errors``,
  ``rows_read`` (rows examined), ``rows_returned`` (rows sent), ``rows_written`` (rows affected),
  ``total_duration_millis``, ``latency_max``/``latency_min`` and the ratios, summed per step (a step without
  statements counts 0; an extreme or a ratio has no point there). PostgreSQL's ``pg_stat_statements`` keeps no
  times: a PostgreSQL branch's statement series have no points;
- **PostgreSQL settings and sessions**: ``max_connections`` and ``pg_stat_activity`` by state for the branch's
  database (instant ``planetscale_postgres_settings_max_connections``, ``planetscale_postgres_connection_state``).

Tablets are the branch's keyspaces and their shards (``shard_names``), one primary each (pod
``<keyspace>-<shard, '-' written x>-primary``); a sharded keyspace is one schema on MariaDB (no rows placed per
shard), so its shards' series have no points. A query tag is a statement's SQLCommenter comment
(``/* route='checkout' */``) or its connection's user and address (world/insights.py ``tags_of``): a tag set
``name:value`` (several joined by ``&``; another is 400, as the published description says) selects the statements
that carry all of them; without tag sets each tag seen is one. Replicas serve nothing here: ``tablet_type`` replica or rdonly selects no statements; the filters the
emulator cannot apply (role, container, pod, budget, rule, search) leave the statement and size series without points.

The answers are plain dicts; routes/metrics.py shapes them as the published description types them (series and
instant metrics as JSON strings, ``.../tables`` keyed by table name) or, under ``recorded_metrics``, as the platform
answers (objects, both table maps keyspace -> table -> bytes).
"""

import math
import re
from dataclasses import dataclass
from datetime import datetime

from ..dataplane.insights import mysql_statements
from ..dataplane.keyspaces import keyspace_schema_name
from .keyspaces import shard_names
from .insights import tags_of
from .records import ApiError, invalid_params, stamp

PERIODS = {"15m": 900, "1h": 3600, "3h": 10800, "6h": 21600, "12h": 43200, "1d": 86400, "2d": 172800,
           "7d": 604800, "8d": 691200}
DEFAULT_PERIOD = "12h"
DEFAULT_STEPS = 60
MAX_STEPS = 1000
METRIC_NAME = re.compile(r"[a-z][a-z0-9_]*")
# the statement metrics: the sum over a step's digests (a step without statements counts 0)
SUMS = {"queries": "count", "query_errors": "errors", "rows_read": "examined", "rows_returned": "sent",
        "rows_written": "affected", "total_duration_millis": "millis"}
# a ratio of two sums (no point where the divisor is 0)
RATIOS = {"rows_read_per_query": ("examined", "count"), "rows_returned_per_query": ("sent", "count"),
          "rows_affected_per_query": ("affected", "count"), "rows_read_per_returned": ("examined", "sent")}
EXTREMES = {"latency_max": ("max_millis", max), "latency_min": ("min_millis", min)}
TABLET_SUMS = {"primary_queries": "count", "pod_queries": "count", "primary_rows_read": "examined",
               "pod_rows_read": "examined", "primary_rows_written": "affected"}
DEFAULTS = {
    "branch": ("queries", "query_errors", "rows_read", "rows_returned", "rows_written", "total_duration_millis",
               "latency_max"),
    "query": ("queries", "total_duration_millis", "rows_read", "rows_returned"),
    "tag": ("queries", "total_duration_millis", "rows_read", "rows_returned"),
    "tablets": ("primary_queries", "primary_rows_read", "primary_rows_written", "shard_storage_usage"),
    "instant": ("planetscale_volume_disk_usage_bytes", "planetscale_postgres_settings_max_connections",
                "planetscale_postgres_connection_state"),
    "tablets-instant": ("replication_lag", "primary_cpu_usage", "primary_memory_usage", "vtgate_cpu_usage",
                        "vtgate_memory_usage"),
}
UNAPPLIED_FILTERS = ("role", "container", "pod", "pods", "budget_id", "rule_id", "q")


@dataclass
class Statement:
    """Statements of one digest in one keyspace (here one statement each), with the moment of the last."""

    keyspace: str
    fingerprint: str
    text: str
    count: int
    errors: int
    examined: int
    sent: int
    affected: int
    millis: float
    min_millis: float
    max_millis: float
    last: float  # emulator time, unix seconds
    tags: tuple = ()  # (name, value): its SQLCommenter comments and its connection's (world/insights.py tags_of)


@dataclass
class Range:
    start: int
    end: int
    interval: int
    steps: int

    def step_of(self, moment: float) -> int | None:
        if not self.start <= moment <= self.end:
            return None
        return min(int((moment - self.start) // self.interval), self.steps - 1)

    def times(self) -> list[int]:
        return [self.start + index * self.interval for index in range(self.steps)]


def metric_names(value: str | None, kind: str) -> list[str]:
    """The metrics asked for (a comma-separated list), or the kind's defaults."""
    if not value:
        return list(DEFAULTS[kind])
    names = [name.strip() for name in value.split(",") if name.strip()]
    bad = [name for name in names if not METRIC_NAME.fullmatch(name)]
    if bad or not names:
        raise invalid_params(f"metrics: {', '.join(bad) or repr(value)} is not a metric name")
    return names


def time_range(now: datetime, period: str | None, start: str | None, end: str | None, steps: int | None) -> Range:
    """The range asked for: from..to, or the period up to to (or now); DEFAULT_PERIOD without either."""
    if period is not None and period not in PERIODS:
        raise invalid_params(f"period: {period!r} is not one of {', '.join(PERIODS)}")
    if steps is not None and not 1 <= steps <= MAX_STEPS:
        raise invalid_params(f"steps: {steps} is not from 1 to {MAX_STEPS}")
    last = math.ceil(_moment(end, "to") if end else now.timestamp())
    first = math.floor(_moment(start, "from")) if start else last - PERIODS[period or DEFAULT_PERIOD]
    if first >= last:
        raise invalid_params("from must be before to")
    count = steps or DEFAULT_STEPS
    interval = max(1, math.ceil((last - first) / count))
    return Range(first, first + interval * count, interval, count)


def _moment(value: str, name: str) -> float:
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise invalid_params(f"{name}: {value!r} is not an ISO 8601 time") from None
    if moment.tzinfo is None:
        raise invalid_params(f"{name}: {value!r} needs a time zone (Z for UTC)")
    return moment.timestamp()


# ---------------------------------------------------------------- what the servers know


def tablets(branch) -> list[tuple[str, str, bool]]:
    """(keyspace, shard, whether the keyspace's rows are this shard's alone) of a MySQL branch."""
    found = []
    for name in sorted(branch.keyspaces, key=lambda key: not branch.keyspaces[key].default):
        shards = shard_names(branch.keyspaces[name].shards)
        found += [(name, shard, len(shards) == 1) for shard in shards]
    return found


def tag_pairs(tag_set: str) -> list[tuple[str, str]]:
    """The (name, value) pairs of a tag set: name:value (or name=value), several joined by &."""
    pairs = [re.split(r"[:=]", part.strip(), maxsplit=1) for part in tag_set.split("&")]
    if any(len(pair) != 2 or not pair[0] for pair in pairs):
        raise ApiError(400, "bad_request", f"tag_sets: {tag_set!r} is not name:value (several joined by &)")
    return [(name, value) for name, value in pairs]


def pod_of(keyspace: str, shard: str) -> str:
    return f"{keyspace}-{shard.replace('-', 'x')}-primary"


def _live(world) -> bool:
    return world.data is not None and world.data_live and world.data.owner is world


def _sources(world, branch) -> dict[str, str]:
    """keyspace -> the server schema that holds its tables now (its own, or the template of the default one)."""
    found = {}
    for name, record in branch.keyspaces.items():
        source = world._schema_source(branch) if record.default else world._keyspace_source(branch, name)
        if source is not None:
            found[name] = source
    return found


def table_sizes(world, branch) -> dict[str, dict[str, int]]:
    """keyspace (a PostgreSQL branch: schema) -> table -> bytes on the server now."""
    if world.data is None:
        return {}
    if branch.model.kind == "postgresql":
        name = world.data_names.get(branch.model.id)
        if not _live(world) or name not in world.data_made:
            return {}
        rows = world.data.pg("SELECT schemaname, tablename, pg_total_relation_size(format('%I.%I', schemaname, "
                             "tablename)) FROM pg_tables WHERE schemaname NOT IN ('pg_catalog', "
                             "'information_schema')", database=name)
        return _nested(rows)
    sources = _sources(world, branch)
    if not sources:
        return {}
    keyspace_of = {schema: keyspace for keyspace, schema in sources.items()}
    rows = world.data.my("SELECT TABLE_SCHEMA, TABLE_NAME, DATA_LENGTH + INDEX_LENGTH FROM information_schema.TABLES "
                         "WHERE TABLE_TYPE = 'BASE TABLE' AND TABLE_SCHEMA IN (%s)" % ", ".join(["%s"] * len(sources)),
                         list(sources.values()))
    return _nested((keyspace_of[schema], table, size) for schema, table, size in rows)


def _nested(rows) -> dict[str, dict[str, int]]:
    found: dict[str, dict[str, int]] = {}
    for keyspace, table, size in rows:
        found.setdefault(keyspace, {})[table] = int(size or 0)
    return found


def statements(world, branch) -> list[Statement] | None:
    """The statements run in the branch's own keyspace schemas since the world began (dataplane/insights.py), at
    their moments on the emulator clock; None when the servers keep no times of them (no data plane, MariaDB without
    performance_schema, a PostgreSQL branch)."""
    if world.data is None or branch.model.kind != "mysql":
        return None
    if not world.data.my("SELECT @@performance_schema")[0][0]:
        return None
    base = world.data_names.get(branch.model.id)
    schemas = {(base if record.default else keyspace_schema_name(base, name)): name
               for name, record in branch.keyspaces.items()}
    schemas = {schema: name for schema, name in schemas.items() if _live(world) and schema in world.data_schemas}
    created = datetime.fromisoformat(branch.model.created_at.replace("Z", "+00:00")).timestamp()
    found = [Statement(row["keyspace"], row["fingerprint"], row["normalized"], 1, 1 if row["errno"] else 0,
                       row["rows_read"], row["rows_returned"], row["rows_affected"], row["millis"], row["millis"],
                       row["millis"], world.clock.at(row["at"]).timestamp(),
                       tuple((name, value) for name, value, _ in tags_of(row)))
             for row in mysql_statements(world.data, schemas, world.clock.started)]
    return [statement for statement in found if statement.last >= created]


# ---------------------------------------------------------------- the answers


def _points(found: list[Statement] | None, metric: str, span: Range) -> list:
    """The [seconds, value] points of a statement metric over the range; none without statistics or for a metric
    the statements cannot tell."""
    if found is None or not (metric in SUMS or metric in RATIOS or metric in EXTREMES or metric in TABLET_SUMS):
        return []
    steps: list[list[Statement]] = [[] for _ in range(span.steps)]
    for statement in found:
        index = span.step_of(statement.last)
        if index is not None:
            steps[index].append(statement)
    points = []
    for moment, step in zip(span.times(), steps):
        total = {key: sum(getattr(s, key) for s in step) for key in ("count", "errors", "examined", "sent",
                                                                     "affected", "millis")}
        if metric in SUMS or metric in TABLET_SUMS:
            points.append([moment, round(total[SUMS.get(metric) or TABLET_SUMS[metric]], 3)])
        elif metric in RATIOS and total[RATIOS[metric][1]]:
            points.append([moment, round(total[RATIOS[metric][0]] / total[RATIOS[metric][1]], 3)])
        elif metric in EXTREMES and step:
            key, pick = EXTREMES[metric]
            points.append([moment, round(pick(getattr(s, key) for s in step), 3)])
    return points


def _size_points(size: int | None, span: Range, now: float) -> list:
    return [[span.times()[span.step_of(now)], size]] if size is not None and span.step_of(now) is not None else []


def _series(metric: str, label: str, labels: dict, points: list) -> dict:
    return {"type": "TimeSeries", "metric": metric, "label": label, "labels": labels, "points": points}


def series_answer(world, branch, kind: str, query: dict) -> dict:
    """A MetricSeries of the branch (kind: branch, tablets, query or tag) over the range the query asks."""
    now = world.now()
    span = time_range(now, query.get("period"), query.get("from"), query.get("to"), query.get("steps"))
    metrics = metric_names(query.get("metrics"), kind)
    found = statements(world, branch)
    unapplied = any(query.get(name) for name in UNAPPLIED_FILTERS)
    if found is not None and (unapplied or query.get("tablet_type") not in (None, "primary")):
        found = []  # replicas serve nothing here; a filter the servers cannot apply selects no statements
    keyspace, shard = query.get("keyspace"), query.get("shard")
    if found is not None and keyspace:
        found = [s for s in found if s.keyspace == keyspace]
    series = []
    if kind == "branch":
        whole = [(k, s) for k, s, alone in tablets(branch) if alone and (not keyspace or k == keyspace)]
        if found is not None and shard:
            found = [s for s in found if (s.keyspace, shard) in whole]
        series = [_series(metric, metric, {}, _points(found, metric, span)) for metric in metrics
                  if metric != "storage_per_table"]
        if "storage_per_table" in metrics and not unapplied:
            sizes = table_sizes(world, branch)
            for name in sorted(sizes):
                if keyspace in (None, name) and shard in (None, "-"):
                    series += [_series("storage_per_table", f"{name}.{table}", {"keyspace": name, "table": table},
                                       _size_points(size, span, now.timestamp()))
                               for table, size in sorted(sizes[name].items())]
    elif kind == "query":
        wanted = {query.get("fingerprint")} | set(filter(None, (query.get("query_ids") or "").split(",")))
        wanted.discard(None)
        groups: dict[tuple[str, str], list[Statement]] = {}
        for statement in found or []:
            if not wanted or statement.fingerprint in wanted:
                groups.setdefault((statement.fingerprint, statement.keyspace), []).append(statement)
        for (fingerprint, name), group in groups.items():
            labels = {"fingerprint": fingerprint, "keyspace": name}
            series += [_series(metric, group[0].text[:100], labels, _points(group, metric, span))
                       for metric in metrics]
    elif kind == "tag":
        asked = [tag_set for tag_set in (query.get("tag_sets") or "").split(",") if tag_set]
        for tag_set in asked or sorted({f"{name}:{value}" for s in found or [] for name, value in s.tags}):
            pairs = set(tag_pairs(tag_set))
            group = [s for s in found if pairs <= set(s.tags)] if found is not None else None
            series += [_series(metric, tag_set, {"tag_set": tag_set}, _points(group, metric, span))
                       for metric in metrics]
    else:
        sizes = table_sizes(world, branch) if not query.get("workflow") else {}
        for name, piece, alone in tablets(branch):
            pod = pod_of(name, piece)
            if keyspace not in (None, name) or shard not in (None, piece) or query.get("pod") not in (None, pod):
                continue
            mine = [s for s in found if s.keyspace == name] if found is not None and alone else None
            labels = {"keyspace": name, "shard": piece, "tablet_type": "primary", "pod": pod}
            for metric in metrics:
                if metric == "shard_storage_usage":
                    size = sum(sizes[name].values()) if alone and name in sizes else None
                    points = _size_points(size, span, now.timestamp())
                else:
                    points = _points(mine, metric, span) if metric in TABLET_SUMS else []
                series.append(_series(metric, f"{name}/{piece}", labels, points))
    return {"type": "MetricSeries", "start_date": stamp(datetime.fromtimestamp(span.start, now.tzinfo)),
            "end_date": stamp(datetime.fromtimestamp(span.end, now.tzinfo)), "interval": span.interval,
            "series": series}


def instant_answer(world, branch, tablets_only: bool, query: dict) -> dict:
    """InstantMetrics of the branch now (tablets_only: the tablets' metrics, which the servers cannot tell)."""
    metrics = metric_names(query.get("metrics"), "tablets-instant" if tablets_only else "instant")
    if tablets_only:
        return {"type": "InstantMetrics", "branch": {"id": branch.model.id, "name": branch.model.name},
                "metrics": [{"metric": metric, "label": metric, "values": []} for metric in metrics]}
    values = {metric: [] for metric in metrics}
    applies = not query.get("container")
    if branch.model.kind == "postgresql":
        _postgres_values(world, branch, values)
    elif "planetscale_volume_disk_usage_bytes" in values:
        sizes = table_sizes(world, branch)
        values["planetscale_volume_disk_usage_bytes"] = [
            {"pod": pod_of(name, piece), "role": "primary", "value": sum(sizes[name].values())}
            for name, piece, alone in tablets(branch) if alone and name in sizes]
    entries = []
    for metric, found in values.items():
        groups = found if isinstance(found, dict) else {metric: found}
        for label, items in groups.items():
            items = [item for item in items if applies and query.get("pod") in (None, item["pod"])
                     and query.get("role") in (None, item["role"]) and query.get("shard") in (None, "-")]
            entries.append({"metric": metric, "label": label, "values": items})
    return {"type": "InstantMetrics", "branch": {"id": branch.model.id, "name": branch.model.name},
            "metrics": entries}


def _postgres_values(world, branch, values: dict) -> None:
    name = world.data_names.get(branch.model.id) if world.data is not None else None
    if name is None:
        return
    primary = {"pod": "primary", "role": "primary"}
    if "planetscale_postgres_settings_max_connections" in values:
        setting = world.data.pg("SHOW max_connections")[0][0]
        values["planetscale_postgres_settings_max_connections"] = [{**primary, "value": int(setting)}]
    if "planetscale_postgres_connection_state" in values:
        rows = world.data.pg("SELECT coalesce(state, 'unknown'), count(*) FROM pg_stat_activity WHERE datname = %s "
                             "GROUP BY 1 ORDER BY 1", (name,))
        values["planetscale_postgres_connection_state"] = {state: [{**primary, "value": count}]
                                                           for state, count in rows} or []
    if "planetscale_volume_disk_usage_bytes" in values and _live(world) and name in world.data_made:
        size = world.data.pg("SELECT pg_database_size(%s)", (name,))[0][0]
        values["planetscale_volume_disk_usage_bytes"] = [{**primary, "value": int(size)}]


def tables_answer(world, branch, by_keyspace: bool, recorded: bool) -> dict:
    """The tables' sizes: keyspace -> table -> bytes (by_keyspace, or as the platform answers both), else
    table -> bytes (the published description's .../metrics/tables: tables of one name in two keyspaces added)."""
    sizes = table_sizes(world, branch)
    if by_keyspace or recorded:
        return sizes
    flat: dict[str, int] = {}
    for tables in sizes.values():
        for table, size in tables.items():
            flat[table] = flat.get(table, 0) + size
    return flat
