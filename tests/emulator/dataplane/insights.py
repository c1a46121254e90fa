"""What the data plane's servers measured of the statements a branch's credentials ran (query insights).

The test harness (tests/harness/dataplane.py) starts MariaDB with its performance schema (the statement instruments
only; ``setup_actors`` leaves ``root`` out, so the emulator's own administration, dumps and loads are not counted)
and PostgreSQL with ``pg_stat_statements`` preloaded when the server has it.

- MariaDB: every statement ``performance_schema.events_statements_history_long`` still holds (the last 10,000 the
  server ran) whose default schema is one of the branch's keyspace schemas: its digest (the fingerprint), digest
  text (the normalized SQL), text, timer (turned into UTC once per data plane, from a statement of the emulator's
  own instrumented for that moment), duration, rows read, returned and affected, and error. Its user and host are
  its connection's, from ``performance_schema.threads`` as seen at a read; a connection that came and went between
  two reads leaves them unknown (``""``). Driver housekeeping (``SET``, commands) is left out.
- PostgreSQL: ``pg_stat_statements`` for the branch's database and the roles that exist now (the superuser, the
  emulator, left out): calls, times, rows and blocks per query id, since the role was made. It keeps no time of a
  statement: the sums answer whatever the period, and there are no samples. Without it (not preloaded): nothing.
"""

from datetime import UTC, datetime

PICOSECONDS = 10 ** 12
_epochs: dict[int, float] = {}  # id(data plane) -> the UTC seconds of MariaDB's timer 0
_threads: dict[int, dict[int, tuple[str, str]]] = {}  # id(data plane) -> thread id -> (user, host)

HISTORY = """SELECT THREAD_ID, EVENT_ID, TIMER_START, TIMER_WAIT, SQL_TEXT, DIGEST, DIGEST_TEXT, CURRENT_SCHEMA,
    MYSQL_ERRNO, MESSAGE_TEXT, ROWS_EXAMINED, ROWS_SENT, ROWS_AFFECTED
    FROM performance_schema.events_statements_history_long
    WHERE CURRENT_SCHEMA IN ({}) AND DIGEST IS NOT NULL AND EVENT_NAME LIKE 'statement/sql/%%'
    AND EVENT_NAME <> 'statement/sql/set_option' AND TIMER_START >= %s"""

PG_STATEMENTS = """SELECT s.queryid::text, s.query, r.rolname, s.calls, s.total_exec_time, s.min_exec_time,
    s.max_exec_time, s.mean_exec_time, s.rows, s.shared_blks_hit, s.shared_blks_read, s.shared_blks_dirtied,
    s.shared_blks_written
    FROM pg_stat_statements s JOIN pg_roles r ON r.oid = s.userid JOIN pg_database d ON d.oid = s.dbid
    WHERE d.datname = %s AND r.rolname <> %s AND s.queryid IS NOT NULL"""


def _epoch(data) -> float:
    """The UTC seconds of MariaDB's performance-schema timer at 0: one statement of the emulator's own connection,
    instrumented for it, reads its own start on the timer and on the clock."""
    if id(data) not in _epochs:
        with data.lock:
            data.my("UPDATE performance_schema.threads SET INSTRUMENTED = 'YES' WHERE PROCESSLIST_ID = CONNECTION_ID()")
            try:
                rows = data.my("SELECT s.TIMER_START, UNIX_TIMESTAMP(NOW(6)) FROM performance_schema."
                               "events_statements_current s JOIN performance_schema.threads t USING (THREAD_ID) "
                               "WHERE t.PROCESSLIST_ID = CONNECTION_ID()")
            finally:
                data.my("UPDATE performance_schema.threads SET INSTRUMENTED = 'NO' "
                        "WHERE PROCESSLIST_ID = CONNECTION_ID()")
        if not rows:
            raise RuntimeError("MariaDB's performance schema records no statements: start it through the harness")
        timer, now = rows[0]
        _epochs[id(data)] = float(now) - timer / PICOSECONDS
    return _epochs[id(data)]


def _users(data) -> dict[int, tuple[str, str]]:
    """Thread id -> (user, host) of every connection seen so far (those connected now added)."""
    known = _threads.setdefault(id(data), {})
    for thread, user, host in data.my("SELECT THREAD_ID, PROCESSLIST_USER, PROCESSLIST_HOST FROM "
                                      "performance_schema.threads WHERE PROCESSLIST_USER IS NOT NULL"):
        known[thread] = (user, host or "")
    return known


def mysql_statements(data, schemas: dict[str, str], since: datetime) -> list[dict]:
    """The statements run in the schemas ({schema: keyspace}) since a real moment, oldest first."""
    if not schemas or not data.my("SELECT @@performance_schema")[0][0]:
        return []
    epoch = _epoch(data)
    floor = max(0, int((since.timestamp() - epoch) * PICOSECONDS))
    rows = data.my(HISTORY.format(", ".join(["%s"] * len(schemas))), [*schemas, floor])
    users = _users(data)
    found = []
    for thread, event, start, wait, text, digest, normalized, schema, errno, message, read, sent, affected \
            in sorted(rows, key=lambda row: row[2]):
        user, host = users.get(thread, ("", ""))
        found.append({
            "id": f"{thread}-{event}", "at": datetime.fromtimestamp(epoch + start / PICOSECONDS, UTC),
            "millis": wait / 10 ** 9, "sql": text or "", "fingerprint": digest, "normalized": normalized.strip(),
            "keyspace": schemas[schema], "schema": schema, "errno": errno or 0, "message": message or "",
            "rows_read": read, "rows_returned": sent, "rows_affected": affected, "user": user, "host": host,
            "statement_type": normalized.split(maxsplit=1)[0].upper(),
        })
    return found


def postgres_statements(data, database: str) -> list[dict]:
    """pg_stat_statements of the database (its roles' statements, summed per query id), or none when the server
    does not load it."""
    import psycopg

    try:
        data.pg("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
        rows = data.pg(PG_STATEMENTS, [database, data.postgres["user"]])
    except psycopg.Error:
        return []
    return [{"fingerprint": queryid, "normalized": " ".join(query.split()), "user": role, "count": calls,
             "millis": total, "min": low, "max": high, "mean": mean, "rows": rows_, "blocks_hit": hit,
             "blocks_read": blocks_read, "blocks_dirtied": dirtied, "blocks_written": written}
            for queryid, query, role, calls, total, low, high, mean, rows_, hit, blocks_read, dirtied, written
            in rows]
