"""MoveTables workflows on the MariaDB server: the moved tables' rows copied, kept in step, compared and routed.

Vitess moves a table between keyspaces by copying its rows, replicating later writes (VReplication) and switching
the traffic with routing rules. Here each keyspace is a schema (dataplane/keyspaces.py), and the same steps are real
statements run as root on the administrative connection (world/workflows.py calls them under the world's lock):

- create: ``CREATE TABLE target.t LIKE source.t`` for each moved table;
- the copy (``copying`` ends): under ``LOCK TABLES source.t WRITE, target.t WRITE`` the target's rows are replaced by
  ``INSERT ... SELECT`` of the source's, and three triggers on ``source.t`` (after insert, update, delete) carry
  every later write to ``target.t``: forward replication. A row changed in the target only is not carried back,
  which is what a data check finds;
- verify-data: the rows of both sides compared by primary key (mismatched, only in the source, only in the target);
- switch-primaries: the forward triggers dropped, ``source.t`` moved aside (``RENAME TABLE`` into the workflow's
  own schema, ``_emulator_workflow_<id>``) and replaced by a view ``SELECT * FROM target.t`` (a single-table view is
  updatable: a client of the source keyspace reads and writes the target's rows, as routing rules send it there),
  and triggers on ``target.t`` carry every write back to the kept table: reverse replication;
- reverse-traffic: the view and the reverse triggers dropped, the kept table (it has every row written meanwhile)
  back in its place, the forward triggers again;
- cutover: the reverse triggers, the view and the kept table dropped (the moved tables leave the source keyspace,
  replication ends); reverse-cutover: the view again (routing rules back); complete: the view and the workflow's
  schema dropped;
- cancel: the triggers and the target's tables dropped (the source restored first when primaries were switched).
"""

from datetime import date, datetime, time, timedelta
from decimal import Decimal

from .schema import _insertable, describe_table, qualified, quote

KEPT_PREFIX = "_emulator_workflow_"
SAMPLES = 10  # rows of each kind a table report shows
EVENTS = (("INSERT", "i"), ("UPDATE", "u"), ("DELETE", "d"))


def kept_schema(workflow_id: str) -> str:
    """The schema that holds the source tables a workflow moved aside while its primaries are switched."""
    return KEPT_PREFIX + workflow_id


def exists(data, schema: str, table: str, kind: str = "BASE TABLE") -> bool:
    return bool(data.my("SELECT 1 FROM information_schema.TABLES WHERE TABLE_SCHEMA = %s AND TABLE_NAME = %s "
                        "AND TABLE_TYPE = %s", [schema, table, kind]))


def primary_key(data, schema: str, table: str) -> list[str]:
    return [row[0] for row in data.my(
        "SELECT COLUMN_NAME FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = %s AND TABLE_NAME = %s "
        "AND INDEX_NAME = 'PRIMARY' ORDER BY SEQ_IN_INDEX", [schema, table])]


def count_rows(data, schema: str, table: str) -> int:
    return int(data.my(f"SELECT COUNT(*) FROM {qualified(schema, table)}")[0][0])


def create_targets(data, source: str, target: str, tables: list[str]) -> None:
    """Each moved table made in the target keyspace, like the source's (no rows yet)."""
    for table in tables:
        data.my(f"CREATE TABLE {qualified(target, table)} LIKE {qualified(source, table)}")


def _trigger(schema: str, prefix: str, index: int, letter: str) -> str:
    return qualified(schema, f"{prefix}_{index}_{letter}")


def replicate(data, origin: str, into: str, table: str, prefix: str, index: int) -> None:
    """Three triggers on origin.table that carry every write to into.table (a REPLACE of the new row, the old row's
    key deleted first when an update changed it; a delete's key deleted)."""
    columns = _insertable(describe_table(data, into, table))
    keys = primary_key(data, into, table)
    names = ", ".join(quote(column) for column in columns)
    new = ", ".join(f"NEW.{quote(column)}" for column in columns)
    old = " AND ".join(f"{quote(key)} = OLD.{quote(key)}" for key in keys)
    target = qualified(into, table)
    bodies = {"INSERT": f"REPLACE INTO {target} ({names}) VALUES ({new})",
              "UPDATE": f"BEGIN DELETE FROM {target} WHERE {old}; REPLACE INTO {target} ({names}) VALUES ({new}); END",
              "DELETE": f"DELETE FROM {target} WHERE {old}"}
    for event, letter in EVENTS:
        data.my(f"CREATE TRIGGER {_trigger(origin, prefix, index, letter)} AFTER {event} ON "
                f"{qualified(origin, table)} FOR EACH ROW {bodies[event]}")


def stop_replication(data, origin: str, prefix: str, index: int) -> None:
    for _, letter in EVENTS:
        data.my(f"DROP TRIGGER IF EXISTS {_trigger(origin, prefix, index, letter)}")


def copy_rows(data, source: str, target: str, tables: list[str], prefix: str) -> dict[str, int]:
    """The copy: each target table gets the source's rows, and forward replication starts, in one locked window
    per table (no write of a client falls between the copy and the triggers). The rows copied, by table."""
    copied = {}
    with data.lock:
        for index, table in enumerate(tables):
            columns = ", ".join(quote(column) for column in _insertable(describe_table(data, target, table)))
            stop_replication(data, source, prefix, index)  # a retried copy starts over
            data.my(f"LOCK TABLES {qualified(source, table)} WRITE, {qualified(target, table)} WRITE")
            try:
                data.my(f"DELETE FROM {qualified(target, table)}")
                data.my(f"INSERT INTO {qualified(target, table)} ({columns}) SELECT {columns} "
                        f"FROM {qualified(source, table)}")
                replicate(data, source, target, table, prefix, index)
            finally:
                data.my("UNLOCK TABLES")
            copied[table] = count_rows(data, target, table)
    return copied


def _json(value):
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, (datetime, date, time, timedelta)):
        return str(value)
    if isinstance(value, (bytes, bytearray)):
        return value.hex()
    return str(value)


def _rows(cursor_rows, names: list[str]) -> list[dict]:
    return [{name: _json(value) for name, value in zip(names, row)} for row in cursor_rows]


def _sample_query(table: str, keys: list[str], rows: list[dict]) -> str | None:
    """A query for the rows a report names (by primary key), as the platform's vdiff reports give one."""
    if not rows:
        return None
    import pymysql.converters

    def literal(value):
        return pymysql.converters.escape_item(value, "utf8mb4")

    if len(keys) == 1:
        values = ", ".join(literal(row[keys[0]]) for row in rows)
        return f"SELECT * FROM {quote(table)} WHERE {quote(keys[0])} IN ({values})"
    tuples = ", ".join("(" + ", ".join(literal(row[key]) for key in keys) + ")" for row in rows)
    return f"SELECT * FROM {quote(table)} WHERE ({', '.join(quote(key) for key in keys)}) IN ({tuples})"


def compare(data, source: str, target: str, table: str) -> dict:
    """The rows of source.table and target.table compared by primary key: counts and samples of the mismatched rows
    (same key, another value in a column both have), of those only in the source and of those only in the target."""
    keys = primary_key(data, target, table)
    theirs = {name.lower() for name in _insertable(describe_table(data, target, table))}
    columns = [name for name in _insertable(describe_table(data, source, table)) if name.lower() in theirs]
    joined = " AND ".join(f"s.{quote(key)} = t.{quote(key)}" for key in keys)
    same = " AND ".join(f"s.{quote(column)} <=> t.{quote(column)}" for column in columns) or "TRUE"
    src, tgt = qualified(source, table), qualified(target, table)
    source_columns = ", ".join(f"s.{quote(column)}" for column in columns)
    target_columns = ", ".join(f"t.{quote(column)}" for column in columns)
    mismatched = data.my(f"SELECT {source_columns}, {target_columns} FROM {src} s JOIN {tgt} t ON {joined} "
                         f"WHERE NOT ({same}) ORDER BY {', '.join(f's.{quote(key)}' for key in keys)}")
    only_source = data.my(f"SELECT {source_columns} FROM {src} s LEFT JOIN {tgt} t ON {joined} "
                          f"WHERE t.{quote(keys[0])} IS NULL ORDER BY {', '.join(f's.{quote(k)}' for k in keys)}")
    only_target = data.my(f"SELECT {target_columns} FROM {tgt} t LEFT JOIN {src} s ON {joined} "
                          f"WHERE s.{quote(keys[0])} IS NULL ORDER BY {', '.join(f't.{quote(k)}' for k in keys)}")
    width = len(columns)
    pairs = [{"source": _rows([row[:width]], columns)[0], "target": _rows([row[width:]], columns)[0]}
             for row in mismatched[:SAMPLES]]
    extra_source = _rows(only_source[:SAMPLES], columns)
    extra_target = _rows(only_target[:SAMPLES], columns)
    return {"mismatched_rows_count": len(mismatched), "extra_source_rows_count": len(only_source),
            "extra_target_rows_count": len(only_target), "mismatched_rows": pairs, "extra_source_rows": extra_source,
            "extra_target_rows": extra_target,
            "sample_mismatched_rows_query": _sample_query(table, keys, [pair["source"] for pair in pairs]),
            "sample_extra_source_rows_query": _sample_query(table, keys, extra_source),
            "sample_extra_target_rows_query": _sample_query(table, keys, extra_target)}


def route_to_target(data, source: str, target: str, table: str) -> None:
    """A view in the source keyspace in place of the table: its clients read and write the target's rows."""
    data.my(f"CREATE SQL SECURITY DEFINER VIEW {qualified(source, table)} AS SELECT * FROM {qualified(target, table)}")


def switch_primaries(data, source: str, target: str, kept: str, tables: list[str], prefix: str) -> None:
    """The source tables moved aside (kept), views routing to the target in their place, reverse replication."""
    data.my(f"CREATE DATABASE IF NOT EXISTS {quote(kept)}")
    for index, table in enumerate(tables):
        stop_replication(data, source, prefix, index)
        data.my(f"RENAME TABLE {qualified(source, table)} TO {qualified(kept, table)}")
        route_to_target(data, source, target, table)
        replicate(data, target, kept, table, prefix, index)


def reverse_traffic(data, source: str, target: str, kept: str, tables: list[str], prefix: str) -> None:
    """The kept tables (with every row written while switched) back in the source keyspace, forward replication."""
    for index, table in enumerate(tables):
        stop_replication(data, target, prefix, index)
        data.my(f"DROP VIEW IF EXISTS {qualified(source, table)}")
        if exists(data, kept, table):
            data.my(f"RENAME TABLE {qualified(kept, table)} TO {qualified(source, table)}")
            replicate(data, source, target, table, prefix, index)
    data.my(f"DROP DATABASE IF EXISTS {quote(kept)}")


def cutover(data, source: str, target: str, kept: str, tables: list[str], prefix: str) -> None:
    """Replication ends and the moved tables leave the source keyspace (the kept tables and the views go)."""
    for index, table in enumerate(tables):
        stop_replication(data, target, prefix, index)
        data.my(f"DROP VIEW IF EXISTS {qualified(source, table)}")
    data.my(f"DROP DATABASE IF EXISTS {quote(kept)}")


def reverse_cutover(data, source: str, target: str, tables: list[str]) -> None:
    """The routing back: the source keyspace's clients reach the moved tables in the target again."""
    for table in tables:
        if not exists(data, source, table) and not exists(data, source, table, "VIEW"):
            route_to_target(data, source, target, table)


def complete(data, source: str, kept: str, tables: list[str]) -> None:
    """The routing rules go with the workflow (a cut-over table stays in the target keyspace only)."""
    for table in tables:
        data.my(f"DROP VIEW IF EXISTS {qualified(source, table)}")
    data.my(f"DROP DATABASE IF EXISTS {quote(kept)}")


def cancel(data, source: str, target: str, kept: str, tables: list[str], prefix: str) -> None:
    """Replication stopped both ways and the moved tables dropped from the target (the source keeps its own, put back
    first when a step that failed left it aside)."""
    for index, table in enumerate(tables):
        stop_replication(data, source, prefix, index)
        stop_replication(data, target, prefix, index)
        if exists(data, kept, table) and not exists(data, source, table):
            data.my(f"DROP VIEW IF EXISTS {qualified(source, table)}")
            data.my(f"RENAME TABLE {qualified(kept, table)} TO {qualified(source, table)}")
        data.my(f"DROP TABLE IF EXISTS {qualified(target, table)}")
    data.my(f"DROP DATABASE IF EXISTS {quote(kept)}")
