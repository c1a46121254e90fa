"""Query insights of a branch (``.../branches/{branch}/insights``), derived from what the data plane's servers
measured (dataplane/insights.py); nothing here makes a number up.

A MySQL branch's statements are MariaDB's, one sample each, in its keyspace schemas, since this world started (the
servers are shared with earlier worlds), each at its moment on the emulator clock (the offset in effect when it
ran). From them: the queries (per keyspace and fingerprint: counts, errors, rows read/returned/affected, total time,
time per query, p50/p99/max latency, last run, share of the branch's time), one sample (``queries/{id}``), the
errors (per keyspace, fingerprint and error number, with the newest message, server schema names given as keyspace
names) and the samples of one, the samples and summary of one fingerprint, the tags (SQLCommenter comments
``/* key='value' */`` in the SQL: source ``sql``; the connection's ``username`` and ``remote_address`` when known:
``system``) and the statistics grouped by tag values, and anomalies: runs of minutes in which a statement ran at
least ``insights_slow_query_ms``, correlated with the fingerprints of those statements (``r``: their share of the
slow statements' time). What MariaDB does not measure is 0: CPU and I/O time, bytes in and out, blocks, traffic
control; a keyspace has one shard (each statement one shard query) and only primaries (``replica``/``rdonly``: none).

A PostgreSQL branch's are pg_stat_statements' sums per query id (count, time, rows, max latency, blocks), which keep
no times: they answer whatever the period, without samples, errors, tags or anomalies.

The window is ``from``/``to`` (ISO 8601) or ``period`` back from now (default ``1d``); malformed: 422.
"""

import hashlib
import html
import re
import urllib.parse
from datetime import datetime, timedelta

from ..dataplane import insights as measured
from .records import invalid_params, not_found, stamp

PERIODS = {"15m": 900, "1h": 3600, "3h": 10800, "6h": 21600, "12h": 43200, "1d": 86400, "2d": 172800, "7d": 604800,
           "8d": 691200}
TABLES = re.compile(r"\b(?:FROM|JOIN|INTO|UPDATE|TABLE)\s+`([^`]+)`", re.IGNORECASE)
COMMENT = re.compile(r"/\*(.*?)\*/", re.DOTALL)
TAG = re.compile(r"([A-Za-z_][\w.-]*)\s*=\s*'([^']*)'")
DURATIONS = ("sum_total_duration_millis", "sum_cpu_duration_millis", "sum_io_duration_millis", "total_duration_millis")
NOT_RECORDED = ("sum_shard_queries", "max_shard_queries", "avg_shard_queries", "egress_bytes",
                "egress_bytes_per_query", "max_egress_bytes", "ingress_bytes", "ingress_bytes_per_query",
                "max_ingress_bytes", "blocks_read", "blocks_hit", "block_cache_hit_ratio", "blocks_dirtied",
                "blocks_written")
SORT_NAMES = {"query": "normalized_sql", "lastRun": "last_run_at", "count": "query_count", "rowsRead": "sum_rows_read",
              "rowsAffected": "sum_rows_affected", "rowsReturned": "sum_rows_returned",
              "totalTime": "sum_total_duration_millis", "cpuTime": "sum_cpu_duration_millis",
              "ioTime": "sum_io_duration_millis", "table": "tables", "qualifiedTable": "qualified_tables",
              "tableKeyspace": "table_keyspaces", "indexes": "index_usages", "routingIndexes": "routing_index_usages",
              "percentTime": "sum_total_duration_percent", "percentCpuTime": "sum_cpu_duration_percent",
              "percentIoTime": "sum_io_duration_percent", "error": "error_message"}
ERROR_SORT = {"count": "error_count", "lastRun": "started_at", "totalTime": "total_duration_millis"}


def digest(*parts) -> str:
    return hashlib.sha256(":".join(map(str, parts)).encode()).hexdigest()[:32]


def parse_time(value: str | None, name: str) -> datetime | None:
    if value is None:
        return None
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        moment = None
    if moment is None or moment.tzinfo is None:
        raise invalid_params(f"{name}: {value!r} is not an ISO 8601 time with a zone, such as 2026-01-02T03:04:05Z")
    return moment


def window(world, start: str | None, end: str | None, period: str | None) -> tuple[datetime, datetime]:
    """The time window on the emulator clock a request asks for."""
    now = world.now()
    until = parse_time(end, "to") or now
    since = parse_time(start, "from") or until - timedelta(seconds=PERIODS[period or "1d"])
    if since > until:
        raise invalid_params("from must not be after to")
    return since, until


class Measured:
    """A branch's measured statements in a window, and the answers made of them."""

    def __init__(self, world, org, database: str, branch: str, since: datetime, until: datetime,
                 tablet_type: str | None = None):
        self.world, self.now = world, world.now()
        db = world.find_database(org, database)
        record = world.find_branch(org, database, branch)
        self.postgres = db.model.kind == "postgresql"
        self.pg_rows: list[dict] = []
        self.samples: list[dict] = []
        data = world.data
        if data is None or tablet_type in ("replica", "rdonly"):
            return
        if self.postgres:
            name = world.data_names.get(record.model.id)
            self.pg_rows = measured.postgres_statements(data, name) if name else []
            return
        schemas = {schema: keyspace for keyspace, schema in world.keyspace_schemas(record).items()}
        names = sorted(schemas.items(), key=lambda pair: -len(pair[0]))
        for sample in measured.mysql_statements(data, schemas, world.clock.started):
            at = world.clock.at(sample["at"])
            if since <= at <= until:
                sample["at"] = at
                for schema, keyspace in names:  # server names in messages as the platform's keyspaces
                    sample["message"] = sample["message"].replace(schema, keyspace)
                sample["tags"] = tags_of(sample)
                self.samples.append(sample)

    # ------------------------------------------------------------ queries

    def queries(self, q: str | None = None, kind: str | None = None) -> list[dict]:
        total = sum(s["millis"] for s in self.samples) or sum(r["millis"] for r in self.pg_rows)
        groups: dict[tuple, list[dict]] = {}
        for sample in self.samples:
            groups.setdefault((sample["keyspace"], sample["fingerprint"]), []).append(sample)
        found = [query_item(key, group, total) for key, group in groups.items()]
        found += [pg_item(row, total) for row in self.pg_rows]
        return [item for item in found if (not q or q.lower() in item["normalized_sql"].lower())
                and (not kind or item["statement_type"] == kind)]

    def summary(self, fingerprint: str, keyspace: str) -> dict:
        found = [item for item in self.queries() if item["fingerprint"] == fingerprint and item["keyspace"] == keyspace]
        if not found:
            raise not_found("Query")
        return found[0]

    def sample(self, sample_id: str) -> dict:
        found = [sample for sample in self.samples if sample["id"] == sample_id]
        if not found:
            raise not_found("Query")
        return sample_item(found[0], self.world)

    def statistics(self, fingerprint: str, keyspace: str) -> list[dict]:
        return [sample_item(s, self.world) for s in reversed(self.samples)
                if s["fingerprint"] == fingerprint and s["keyspace"] == keyspace]

    # ------------------------------------------------------------ errors

    def errors(self, q: str | None = None) -> list[dict]:
        groups: dict[str, list[dict]] = {}
        for sample in self.samples:
            if sample["errno"]:
                groups.setdefault(digest(sample["keyspace"], sample["fingerprint"], sample["errno"]), []).append(sample)
        found = []
        for key, group in groups.items():
            millis = sum(s["millis"] for s in group)
            found.append({"id": key, "error_fingerprint": key, "started_at": stamp(group[0]["at"]),
                          "total_duration_millis": millis, "time_per_query": millis / len(group),
                          "error_count": len(group), "error_message": group[-1]["message"]})
        return [item for item in found if not q or q.lower() in item["error_message"].lower()]

    def error_samples(self, fingerprint: str) -> list[dict]:
        return [sample_item(s, self.world) for s in reversed(self.samples)
                if s["errno"] and digest(s["keyspace"], s["fingerprint"], s["errno"]) == fingerprint]

    # ------------------------------------------------------------ tags

    def tags(self, q: str | None = None, fingerprint: str | None = None, keyspace: str | None = None,
             values_limit: int | None = None, literal_only: bool = False) -> list[dict]:
        if values_limit is not None and not 1 <= values_limit <= 100:
            raise invalid_params("values_limit: must be between 1 and 100")
        counted: dict[tuple[str, str], dict[str, int]] = {}
        for sample in self.samples:
            if fingerprint not in (None, sample["fingerprint"]) or keyspace not in (None, sample["keyspace"]):
                continue
            for name, value, source in sample["tags"]:
                values = counted.setdefault((name, source), {})
                values[value] = values.get(value, 0) + 1
        found = []
        for (name, source), values in sorted(counted.items()):
            ranked = sorted(values.items(), key=lambda pair: (-pair[1], pair[0]))
            limit = values_limit or 100
            shown = [{"name": value, "query_count": count, "kind": "literal"} for value, count in ranked[:limit]]
            rest = sum(count for _, count in ranked[limit:])
            if rest and not literal_only:
                shown.append({"name": "(other)", "query_count": rest, "kind": "overflow"})
            found.append({"id": digest("tag", name), "name": name, "source": source,
                          "query_count": sum(values.values()), "values": shown})
        return [tag for tag in found if not q or q.lower() in tag["name"].lower()]

    def tag(self, name: str, **filters) -> dict:
        found = [tag for tag in self.tags(**filters) if name in (tag["name"], tag["id"])]
        if not found:
            raise not_found("Tag")
        return found[0]

    def tag_summaries(self, tags: list[str] | None, q: str | None = None, kind: str | None = None) -> list[dict]:
        names = {tag["id"]: tag["name"] for tag in self.tags()}
        chosen = [names.get(tag, tag) for tag in tags] if tags else sorted(
            {name for s in self.samples for name, _, source in s["tags"] if source == "sql"})
        total = sum(s["millis"] for s in self.samples)
        groups: dict[tuple, list[dict]] = {}
        for sample in self.samples:
            if (q and q.lower() not in sample["normalized"].lower()) or (kind and sample["statement_type"] != kind):
                continue
            values = {name: value for name, value, _ in sample["tags"]}
            groups.setdefault(tuple(values.get(name) for name in chosen), []).append(sample)
        return [{"dimensions": dict(zip(chosen, key)), **statistics(group, total)} for key, group in groups.items()]

    # ------------------------------------------------------------ anomalies

    def anomalies(self) -> list[dict]:
        threshold = self.world.settings.insights_slow_query_ms
        minutes: dict[datetime, list[dict]] = {}
        for sample in self.samples:
            if sample["millis"] >= threshold:
                minutes.setdefault(sample["at"].replace(second=0, microsecond=0), []).append(sample)
        runs: list[list[datetime]] = []
        for minute in sorted(minutes):
            if runs and minute - runs[-1][-1] == timedelta(minutes=1):
                runs[-1].append(minute)
            else:
                runs.append([minute])
        found = []
        for run in runs:
            start, end = run[0], run[-1] + timedelta(minutes=1)
            slow = [s for minute in run for s in minutes[minute]]
            found.append({"id": digest("anomaly", stamp(start)), "period_start": stamp(start),
                          "period_end": stamp(end), "minutes_in_violation": len(run), "active": end > self.now,
                          "duration": (end - start).total_seconds(),
                          "metrics_start": stamp(start - timedelta(minutes=10)),
                          "metrics_end": stamp(end + timedelta(minutes=10)), "correlations": correlations(slow)})
        return list(reversed(found))

    def anomaly(self, anomaly_id: str) -> dict:
        found = [item for item in self.anomalies() if item["id"] == anomaly_id]
        if not found:
            raise not_found("Anomaly")
        return found[0]


def tags_of(sample: dict) -> list[tuple[str, str, str]]:
    """The SQLCommenter tags of a statement (source sql) and of its connection (source system), when known."""
    found = [(name, urllib.parse.unquote(value), "sql") for comment in COMMENT.findall(sample["sql"])
             for name, value in TAG.findall(comment)]
    found += [(name, sample[key], "system") for name, key in (("username", "user"), ("remote_address", "host"))
              if sample[key]]
    return found


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))] if ordered else 0.0


def statistics(group: list[dict], total: float) -> dict:
    """The statistics of a group of samples (one query, one tag value), on a branch whose statements took total."""
    count = len(group)
    millis = [s["millis"] for s in group]
    read, returned = sum(s["rows_read"] for s in group), sum(s["rows_returned"] for s in group)
    affected = sum(s["rows_affected"] for s in group)
    tables = sorted({t for s in group for t in TABLES.findall(s["normalized"])})
    keyspaces = sorted({s["keyspace"] for s in group})
    return {
        "query_count": count, "error_count": sum(1 for s in group if s["errno"]), "tables": tables,
        "qualified_tables": [f"{k}.{t}" for k in keyspaces for t in tables], "table_keyspaces": [],
        "index_usages": [], "routing_index_usages": [], "sum_shard_queries": count, "max_shard_queries": 1,
        "avg_shard_queries": 1.0, "avg_parallel_workers": 0.0, "sum_rows_read": read, "sum_rows_affected": affected,
        "sum_rows_returned": returned, "rows_read_per_returned": read / returned if returned else 0.0,
        "rows_read_per_query": read / count, "rows_returned_per_query": returned / count,
        "rows_affected_per_query": affected / count, "sum_total_duration_millis": sum(millis),
        "sum_total_duration_percent": 100 * sum(millis) / total if total else 0.0, "sum_cpu_duration_millis": 0,
        "sum_cpu_duration_percent": 0.0, "sum_io_duration_millis": 0, "sum_io_duration_percent": 0.0,
        "last_run_at": stamp(max(s["at"] for s in group)), "time_per_query": sum(millis) / count,
        "p50_latency": percentile(millis, 0.5), "p99_latency": percentile(millis, 0.99), "max_latency": max(millis),
        "egress_bytes": 0, "egress_bytes_per_query": 0.0, "max_egress_bytes": 0, "ingress_bytes": 0,
        "ingress_bytes_per_query": 0.0, "max_ingress_bytes": 0, "blocks_read": 0, "blocks_hit": 0,
        "block_cache_hit_ratio": 0.0, "blocks_dirtied": 0, "blocks_written": 0, "traffic_control_warnings": 0,
        "traffic_control_throttled": 0, "traffic_control_checked": 0,
    }


def query_item(key: tuple[str, str], group: list[dict], total: float) -> dict:
    keyspace, fingerprint = key
    normalized = group[-1]["normalized"]
    return {"id": digest(keyspace, fingerprint), "fingerprint": fingerprint,
            "statement_type": group[-1]["statement_type"], "keyspace": keyspace, "normalized_sql": normalized,
            "syntax_highlighted_sql": highlighted(normalized), "multishard": False, **statistics(group, total)}


def pg_item(row: dict, total: float) -> dict:
    """A pg_stat_statements entry as a query: its sums, no times, one database (the keyspace is its name)."""
    count, millis = row["count"], row["millis"]
    blocks = row["blocks_hit"] + row["blocks_read"]
    item = statistics([{"millis": millis, "rows_read": 0, "rows_returned": row["rows"], "rows_affected": 0,
                        "errno": 0, "normalized": "", "keyspace": "", "at": datetime.min}], total)
    item.update(query_count=count, sum_shard_queries=count, rows_returned_per_query=row["rows"] / count if count else 0,
                rows_read_per_query=0.0, time_per_query=row["mean"], p50_latency=0.0, p99_latency=0.0,
                max_latency=row["max"], last_run_at=None, tables=[], qualified_tables=[], blocks_hit=row["blocks_hit"],
                blocks_read=row["blocks_read"], blocks_dirtied=row["blocks_dirtied"],
                blocks_written=row["blocks_written"],
                block_cache_hit_ratio=row["blocks_hit"] / blocks if blocks else 0.0)
    kind = row["normalized"].split(maxsplit=1)[0].upper() if row["normalized"] else ""
    return {"id": digest("pg", row["fingerprint"]), "fingerprint": row["fingerprint"], "statement_type": kind,
            "keyspace": "", "normalized_sql": row["normalized"],
            "syntax_highlighted_sql": highlighted(row["normalized"]),
            "multishard": False, **item}


def sample_item(sample: dict, world) -> dict:
    at = stamp(sample["at"])
    password = {}
    for org in world.orgs.values():
        for db in org.databases.values():
            for branch in db.branches.values():
                for record in branch.passwords.values():
                    if sample["user"] and record.model.username == sample["user"]:
                        password = {"id": record.model.id, "name": record.model.name, "role": record.model.role}
    return {"id": sample["id"], "password": password,
            "tags": [{"name": name, "value": value} for name, value, _ in sample["tags"]],
            "fingerprint": sample["fingerprint"], "started_at": at, "statement_type": sample["statement_type"],
            "keyspace": sample["keyspace"], "tables": sorted(set(TABLES.findall(sample["normalized"]))),
            "username": sample["user"], "remote_address": sample["host"], "shard_queries": 1,
            "rows_read": sample["rows_read"], "rows_affected": sample["rows_affected"],
            "rows_returned": sample["rows_returned"], "total_duration_millis": sample["millis"],
            "error_message": sample["message"], "normalized_sql": sample["normalized"],
            "syntax_highlighted_sql": highlighted(sample["normalized"]), "created_at": at, "updated_at": at,
            "explainable": sample["statement_type"] == "SELECT" and not sample["errno"],
            "truncated": len(sample["sql"]) >= 1024}


def correlations(slow: list[dict]) -> list[dict]:
    total = sum(s["millis"] for s in slow) or 1.0
    shares: dict[tuple[str, str], list[dict]] = {}
    for sample in slow:
        shares.setdefault((sample["keyspace"], sample["fingerprint"]), []).append(sample)
    return [{"id": digest(keyspace, fingerprint), "r": round(sum(s["millis"] for s in group) / total, 3),
             "keyspace": keyspace, "fingerprint": fingerprint, "normalized_sql": group[-1]["normalized"],
             "syntax_highlighted_sql": highlighted(group[-1]["normalized"]), "tablet_type": "primary"}
            for (keyspace, fingerprint), group in shares.items()]


def highlighted(sql: str) -> str:
    return f'<span class="sql">{html.escape(sql)}</span>'


def ordered(items: list[dict], sort: str | None, direction: str | None, names: dict, default: str) -> list[dict]:
    """Items sorted by the field an API sort name stands for (camelCase to the field's name), newest or largest
    first unless dir is asc; items without it last."""
    sort = sort or default
    key = names.get(sort) or SORT_NAMES.get(sort) or re.sub(r"([A-Z])", r"_\1", sort).lower()
    present = [item for item in items if item.get(key) is not None]
    absent = [item for item in items if item.get(key) is None]
    present.sort(key=lambda item: (str(item[key]) if isinstance(item[key], (list, dict)) else item[key]),
                 reverse=direction != "asc")
    return present + absent


def shaped(item: dict, recorded: bool, kind: str | None) -> dict:
    """An item as the published description types it (durations whole milliseconds) or, recorded, as the
    platform's answers carry it (fractions, its type, without the fields they lack)."""
    item = dict(item)
    for key in DURATIONS:
        if key in item:
            item[key] = round(item[key], 3) if recorded else int(round(item[key]))
    if recorded:
        for key in NOT_RECORDED:
            item.pop(key, None)
        if kind == "sample":
            for key in ("statement_type", "keyspace", "tables", "password"):
                item.pop(key, None)
        elif kind:
            item = {"type": kind, **item}
    return item
