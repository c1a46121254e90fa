"""Branch schemas as the MariaDB server holds them: descriptions read from its catalogs, the three-way merge of a
deploy request over them, the DDL shown for each change, lint, and the statements that deploy and revert.

The emulator parses no DDL. A table is *described* by the catalog rows of ``information_schema``
(``COLUMNS``: name, ``COLUMN_TYPE``, nullability, default, extra; ``STATISTICS``: index names, uniqueness,
columns), a plain dict; two tables are the same when their descriptions are (``SHOW CREATE TABLE`` text is
shown, never compared: it carries ``AUTO_INCREMENT=n``, which inserts change). A schema's description is a
dict of table name -> table description.

Where a branch's tables are on the server (``SchemaHooks``, mixed into state.World):

- a branch not made on the server yet is described by its *template*: a schema the data plane made once per
  emulator process (the seed schema, or an empty one) or a backup's kept copy; so a reset and the seeding of
  hundreds of branches cost the servers nothing;
- a branch is made when first needed (a password, a login, DDL, a deploy into it, a backup, a child branch of a
  made branch): ``CREATE DATABASE`` and ``CREATE TABLE t LIKE <template>.t``; a child of a made branch is made
  at once from its parent's tables (the platform's new branch has its parent's schema, not its data);
- a made branch is read from the server at every read, so DDL a client runs through its own connection is seen
  by the next schema read and deploy request.

A deploy (``deploy_changes``) runs real statements on production's schema as online schema change tools do: a
created table ``CREATE TABLE prod.t LIKE dev.t``; a dropped one is moved aside; a changed one is a shadow table
made ``LIKE`` the branch's, filled with the rows of the columns both have, then swapped in with one ``RENAME
TABLE``; the old tables are kept (schema ``_emulator_kept``) for the revert window. A revert does the same
backwards from the kept table's definition, keeping the rows written since where their columns still exist.
"""

import html
import re
from dataclasses import dataclass

from ..world.records import ApiError, unprocessable

NO_UNIQUE_KEY_DOCS = "https://planetscale.com/docs/learn/onlineddl-change-unique-keys"
TEMPLATE_PREFIX = "_emulator_template_"  # per emulator process, kept when a world goes live
KEPT = "_emulator_kept"  # the tables a deploy replaced, kept for its revert window
BACKUP_PREFIX = "_emulator_backup_"  # a backup's copy of its branch's tables (structure)
EMPTY = "empty"


def quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def qualified(schema: str, table: str) -> str:
    return f"{quote(schema)}.{quote(table)}"


# ---------------------------------------------------------------- reading the server


def describe(data, schema: str) -> dict:
    """The description of every table of the schema, from the catalogs (name -> {columns, indexes})."""
    tables: dict[str, dict] = {}
    for (name,) in data.my("SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = %s "
                           "AND TABLE_TYPE = 'BASE TABLE' ORDER BY TABLE_NAME", [schema]):
        tables[name] = {"columns": [], "indexes": []}
    for table, name, column_type, nullable, default, extra in data.my(
            "SELECT TABLE_NAME, COLUMN_NAME, COLUMN_TYPE, IS_NULLABLE, COLUMN_DEFAULT, EXTRA "
            "FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = %s ORDER BY TABLE_NAME, ORDINAL_POSITION",
            [schema]):
        if table in tables:
            tables[table]["columns"].append({"name": name, "type": column_type, "nullable": nullable == "YES",
                                             "default": default, "extra": extra or ""})
    indexes: dict[tuple[str, str], dict] = {}
    for table, name, non_unique, column, sub_part, index_type in data.my(
            "SELECT TABLE_NAME, INDEX_NAME, NON_UNIQUE, COLUMN_NAME, SUB_PART, INDEX_TYPE "
            "FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = %s ORDER BY TABLE_NAME, INDEX_NAME, SEQ_IN_INDEX",
            [schema]):
        if table not in tables:
            continue
        index = indexes.setdefault((table, name), {"name": name, "unique": not int(non_unique), "type": index_type,
                                                   "columns": []})
        index["columns"].append([column, sub_part])

    def order(item):
        (table, name), _ = item
        return table, name != "PRIMARY", name

    for (table, _), index in sorted(indexes.items(), key=order):
        tables[table]["indexes"].append(index)
    return tables


def show_create(data, schema: str, table: str) -> str:
    """The table as the server writes it (``SHOW CREATE TABLE``)."""
    return data.my(f"SHOW CREATE TABLE {qualified(schema, table)}")[0][1]


def tables_of(data, schema: str) -> list[str]:
    return [row[0] for row in data.my("SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = %s "
                                      "AND TABLE_TYPE = 'BASE TABLE' ORDER BY TABLE_NAME", [schema])]


def copy_tables(data, source: str, target: str) -> None:
    """``target`` made (when missing) with a table ``LIKE`` each of ``source``'s (structure, no rows)."""
    data.my(f"CREATE DATABASE IF NOT EXISTS {quote(target)}")
    for table in tables_of(data, source):
        data.my(f"CREATE TABLE {qualified(target, table)} LIKE {qualified(source, table)}")


def run_statements(data, schema: str, statements: list[str]) -> None:
    """Statements on one connection in the schema (``USE``), in order, as a client's connection runs them; the
    first the server refuses stops the batch (422 naming it, 1-based, with the server's message)."""
    import pymysql

    with data.lock:  # the administrative connection (a new one costs 20 ms), its schema the branch's meanwhile
        data.my(f"USE {quote(schema)}")
        try:
            for number, statement in enumerate(statements, 1):
                try:
                    data.my(statement)
                except pymysql.MySQLError as error:
                    shown = " ".join(statement.split())
                    shown = shown if len(shown) <= 80 else shown[:77] + "..."
                    message = error.args[1] if len(error.args) > 1 else str(error)
                    raise unprocessable(f"statement {number} ({shown!r}): {message}") from None
        finally:
            data.my("USE mysql")


# ---------------------------------------------------------------- comparing and rendering


def _column_sql(column: dict) -> str:
    text = f"{quote(column['name'])} {column['type']}"
    if not column["nullable"]:
        text += " NOT NULL"
    if column["default"] is not None and not (column["nullable"] and column["default"] == "NULL"):
        text += f" DEFAULT {column['default']}"
    extra = column["extra"].upper()
    if extra and "GENERATED" not in extra:
        text += f" {column['extra']}"
    return text


def _index_sql(index: dict) -> str:
    parts = ",".join(quote(name) + (f"({length})" if length else "") for name, length in index["columns"])
    if index["name"] == "PRIMARY":
        return f"PRIMARY KEY ({parts})"
    if index["unique"]:
        kind = "UNIQUE KEY"
    else:
        kind = f"{index['type']} KEY" if index["type"] in ("FULLTEXT", "SPATIAL") else "KEY"
    return f"{kind} {quote(index['name'])} ({parts})"


def _by_name(items: list[dict]) -> dict[str, dict]:
    return {item["name"].lower(): item for item in items}


@dataclass
class Change:
    """One operation of a deploy request: the table on the target before (None: created) and the branch's
    after (None: dropped), as described by the server when the request was checked."""

    table_name: str
    before: dict | None
    after: dict | None
    create_sql: str = ""  # the branch's SHOW CREATE TABLE, for a created table

    @property
    def operation(self) -> str:
        return "CREATE" if self.before is None else "DROP" if self.after is None else "ALTER"

    @property
    def can_drop_data(self) -> bool:
        if self.after is None:
            return True
        if self.before is None:
            return False
        kept = _by_name(self.after["columns"])
        return any(column["name"].lower() not in kept for column in self.before["columns"])

    @property
    def instant_eligible(self) -> bool:
        """MySQL's instant DDL: only columns added (at the end) and dropped, nothing else."""
        if self.operation != "ALTER":
            return False
        before, after = _by_name(self.before["columns"]), _by_name(self.after["columns"])
        kept_before = [c for c in self.before["columns"] if c["name"].lower() in after]
        kept_after = [c for c in self.after["columns"] if c["name"].lower() in before]
        added = [c for c in self.after["columns"] if c["name"].lower() not in before]
        return kept_before == kept_after and self.after["columns"][len(kept_after):] == added \
            and self.before["indexes"] == self.after["indexes"]

    def ddl(self) -> str:
        if self.after is None:
            return f"DROP TABLE {quote(self.table_name)}"
        if self.before is None:
            return self.create_sql
        return f"ALTER TABLE {quote(self.table_name)} " + ", ".join(_alter_clauses(self.before, self.after))


def _alter_clauses(before: dict, after: dict) -> list[str]:
    clauses = []
    new_indexes = _by_name(after["indexes"])
    for index in before["indexes"]:
        if new_indexes.get(index["name"].lower()) != index:
            clauses.append("DROP PRIMARY KEY" if index["name"] == "PRIMARY" else f"DROP KEY {quote(index['name'])}")
    new_columns, old_columns = _by_name(after["columns"]), _by_name(before["columns"])
    for column in before["columns"]:
        if column["name"].lower() not in new_columns:
            clauses.append(f"DROP COLUMN {quote(column['name'])}")
    previous = None
    for number, column in enumerate(after["columns"]):
        old = old_columns.get(column["name"].lower())
        place = f" AFTER {quote(previous)}" if previous else " FIRST"
        if old is None:
            clauses.append(f"ADD COLUMN {_column_sql(column)}{place if number < len(after['columns']) - 1 else ''}")
        elif old != column:
            clauses.append(f"MODIFY COLUMN {_column_sql(column)}")
        previous = column["name"]
    old_indexes = _by_name(before["indexes"])
    for index in after["indexes"]:
        if old_indexes.get(index["name"].lower()) != index:
            clauses.append(f"ADD {_index_sql(index)}")
    return clauses


def merge(base: dict, source: dict, target: dict) -> tuple[list[Change], list[str]]:
    """The three-way merge of a deploy request: the changes ``source`` (a development branch) made since
    ``base`` (the description it was made from), each applied to ``target`` as it is now; and the names of the
    tables both sides changed, differently, since the base (conflicts). What the target gained since the base
    and the branch did not touch is kept; a change the target already has is no change."""
    changes, conflicts = [], []
    for name in sorted(set(base) | set(source)):
        was, mine, now = base.get(name), source.get(name), target.get(name)
        if mine in (was, now):
            continue
        if now != was:
            conflicts.append(name)
            continue
        changes.append(Change(name, now, mine))
    return changes, conflicts


def has_unique_key(table: dict) -> bool:
    """A primary or unique index whose columns are all NOT NULL."""
    columns = _by_name(table["columns"])
    return any((index["name"] == "PRIMARY" or index["unique"])
               and all(not columns.get(str(name).lower(), {"nullable": True})["nullable"]
                       for name, _ in index["columns"])
               for index in table["indexes"])


def lint(description: dict, keyspace: str, tables: list[str] | None = None) -> list[dict]:
    """The lint errors of the schema (of the named tables only, when given), as the platform lists them."""
    errors = []
    for name, table in description.items():
        if tables is not None and name not in tables:
            continue
        if not has_unique_key(table):
            errors.append(lint_error(
                "NO_UNIQUE_KEY", keyspace, name,
                f"Table `{name}` has no unique key: all tables must have at least one unique, not-null key.",
                NO_UNIQUE_KEY_DOCS,
            ))
    return errors


def lint_error(code: str, keyspace: str, table: str, description: str, docs_url: str) -> dict:
    return {
        "lint_error": code,
        "subject_type": "table",
        "keyspace_name": keyspace,
        "table_name": table,
        "error_description": description,
        "docs_url": docs_url,
        "column_name": "",
        "foreign_key_column_names": [],
        "auto_increment_column_names": [],
        "charset_name": "",
        "engine_name": "",
        "vindex_name": "",
        "json_path": "",
        "check_constraint_name": "",
        "enum_value": "",
        "partitioning_type": "",
        "partition_name": "",
    }


def highlight(ddl: str) -> str:
    """The syntax-highlighted HTML of a statement the emulator rendered (keywords in spans, as the platform's
    pages show it)."""
    escaped = html.escape(ddl)
    keywords = r"\b(CREATE|TABLE|ALTER|DROP|ADD|COLUMN|MODIFY|PRIMARY|UNIQUE|KEY|INDEX|NOT|NULL|DEFAULT|AFTER|FIRST)\b"
    return '<pre class="highlight sql">' + re.sub(keywords, r'<span class="k">\1</span>', escaped) + "</pre>"


def plain_html(ddl: str) -> str:
    return f'<pre class="highlight sql">{html.escape(ddl)}</pre>'


# ---------------------------------------------------------------- deploying and reverting


def _insertable(table: dict) -> list[str]:
    return [c["name"] for c in table["columns"] if "GENERATED" not in c["extra"].upper()
            and c["extra"].upper() not in ("VIRTUAL", "STORED", "PERSISTENT")]


def _swap_in(data, schema: str, table: str, shadow: str, kept: str | None) -> None:
    """The shadow table (in KEPT, filled) takes the table's place in one RENAME; the old one goes to ``kept``
    (in KEPT) or is dropped."""
    parked = kept or f"x_{shadow}"
    data.my(f"RENAME TABLE {qualified(schema, table)} TO {qualified(KEPT, parked)}, "
            f"{qualified(KEPT, shadow)} TO {qualified(schema, table)}")
    if kept is None:
        data.my(f"DROP TABLE {qualified(KEPT, parked)}")


def _fill(data, shadow: str, schema: str, table: str) -> None:
    """The shadow (in KEPT) gets the rows of the table, in the columns both have."""
    into = _by_name([{"name": name} for name in _insertable(describe_table(data, KEPT, shadow))])
    common = [name for name in _insertable(describe_table(data, schema, table)) if name.lower() in into]
    if common:
        names = ", ".join(quote(name) for name in common)
        data.my(f"INSERT IGNORE INTO {qualified(KEPT, shadow)} ({names}) SELECT {names} "
                f"FROM {qualified(schema, table)}")


def describe_table(data, schema: str, table: str) -> dict:
    columns = [{"name": name, "type": kind, "nullable": null == "YES", "default": default, "extra": extra or ""}
               for name, kind, null, default, extra in data.my(
                   "SELECT COLUMN_NAME, COLUMN_TYPE, IS_NULLABLE, COLUMN_DEFAULT, EXTRA "
                   "FROM information_schema.COLUMNS "
                   "WHERE TABLE_SCHEMA = %s AND TABLE_NAME = %s ORDER BY ORDINAL_POSITION", [schema, table])]
    return {"columns": columns, "indexes": []}


def deploy_change(data, target: str, source: str, change: Change, key: str) -> None:
    """One change applied to the target schema (production) from the source schema (the branch's tables);
    what it replaces is kept in KEPT as ``o_<key>`` for a revert."""
    table = change.table_name
    data.my(f"CREATE DATABASE IF NOT EXISTS {quote(KEPT)}")
    exists = bool(data.my("SELECT 1 FROM information_schema.TABLES WHERE TABLE_SCHEMA = %s AND TABLE_NAME = %s",
                          [target, table]))
    if change.after is None:
        if exists:
            data.my(f"RENAME TABLE {qualified(target, table)} TO {qualified(KEPT, 'o_' + key)}")
        return
    if not exists:
        data.my(f"CREATE TABLE {qualified(target, table)} LIKE {qualified(source, table)}")
        return
    shadow = f"n_{key}"
    data.my(f"DROP TABLE IF EXISTS {qualified(KEPT, shadow)}")
    data.my(f"CREATE TABLE {qualified(KEPT, shadow)} LIKE {qualified(source, table)}")
    _fill(data, shadow, target, table)
    _swap_in(data, target, table, shadow, f"o_{key}")


def revert_change(data, target: str, change: Change, key: str) -> None:
    """The change undone on the target schema: its kept table back, with the rows written since in the
    columns it has (an ALTER), as it was (a DROP); a created table dropped."""
    table = change.table_name
    kept = f"o_{key}"
    has_kept = bool(data.my("SELECT 1 FROM information_schema.TABLES WHERE TABLE_SCHEMA = %s AND TABLE_NAME = %s",
                            [KEPT, kept]))
    if change.before is None:
        data.my(f"DROP TABLE IF EXISTS {qualified(target, table)}")
    elif not has_kept:
        return
    elif change.after is None:
        data.my(f"RENAME TABLE {qualified(KEPT, kept)} TO {qualified(target, table)}")
    else:
        shadow = f"r_{key}"
        data.my(f"DROP TABLE IF EXISTS {qualified(KEPT, shadow)}")
        data.my(f"CREATE TABLE {qualified(KEPT, shadow)} LIKE {qualified(KEPT, kept)}")
        _fill(data, shadow, target, table)
        _swap_in(data, target, table, shadow, None)
        data.my(f"DROP TABLE {qualified(KEPT, kept)}")


def forget_kept(data, key: str) -> None:
    """The revert window is over: the kept table goes."""
    data.my(f"DROP TABLE IF EXISTS {qualified(KEPT, 'o_' + key)}")


# ---------------------------------------------------------------- the world's branches


class SchemaHooks:
    """World methods that find a branch's tables on the server (mixed into state.World, under its lock)."""

    def data_template(self, name: str, statements: list[str]) -> str:
        """A template schema (made once per emulator process, with the statements): its server name."""
        if self.data is None:
            return EMPTY
        return self.data.template(TEMPLATE_PREFIX + name, statements, run_statements)

    def _schema_source(self, branch) -> str | None:
        """The server schema that holds the branch's tables now: its own (made), or its template; None without
        a data plane, for a PostgreSQL branch, or a branch with an empty template."""
        if self.data is None or branch.model.kind == "postgresql":
            return None
        name = self.data_names.get(branch.model.id)
        if name is not None and name in self.data_schemas and self.data_live and self.data.owner is self:
            return name
        return branch.template if branch.template not in (None, EMPTY) else None

    def describe_branch(self, branch) -> dict:
        """The branch's tables as the server describes them (name -> {columns, indexes})."""
        source = self._schema_source(branch)
        if source is None:
            return {}
        if source.startswith((TEMPLATE_PREFIX, BACKUP_PREFIX)):
            return self.data.frozen(source, describe)
        return describe(self.data, source)

    def branch_tables(self, branch) -> list[tuple[str, str]]:
        """(name, SHOW CREATE TABLE) of each of the branch's tables."""
        source = self._schema_source(branch)
        if source is None:
            return []
        return [(table, show_create(self.data, source, table)) for table in tables_of(self.data, source)]

    def create_sql(self, branch, table: str) -> str:
        source = self._schema_source(branch)
        return show_create(self.data, source, table) if source is not None else ""

    def made_schema(self, branch) -> str:
        """The branch's own schema on the server, made now (from its template) when it is not yet. 503
        without a data plane."""
        if self.data is None:
            raise ApiError(503, "unavailable", "The emulator runs without a data plane: start it through the "
                           "test harness (tests/harness/emulator.py)")
        self._data_go_live()
        name = self.data_names[branch.model.id]
        if name not in self.data_schemas:
            template = branch.template if branch.template not in (None, EMPTY) else None
            if template is not None:
                copy_tables(self.data, template, name)
            else:
                self.data.my(f"CREATE DATABASE IF NOT EXISTS {quote(name)}")
            self.data_schemas.add(name)
        return name

    def data_schema_branched(self, branch, parent) -> None:
        """A new branch: its parent's tables (the parent's template, or a copy of its made schema now), and
        the parent's description as its base."""
        branch.template = parent.template
        if branch.model.kind == "postgresql":
            branch.base = {}
            return
        branch.base = dict(self.describe_branch(parent))
        source = self._schema_source(parent)
        if source is not None and source == self.data_names.get(parent.model.id):
            name = self.data_names[branch.model.id]
            copy_tables(self.data, source, name)
            self.data_schemas.add(name)

    def data_backup_schema(self, branch, backup_id: str) -> tuple[str | None, dict]:
        """What a backup of the branch keeps of its schema: the server schema a restore is made from (a copy
        of the made branch's tables, or its template) and the description."""
        source = self._schema_source(branch)
        if source is None or source != self.data_names.get(branch.model.id):
            return branch.template, self.describe_branch(branch)
        kept = (BACKUP_PREFIX + backup_id)[:64]
        copy_tables(self.data, source, kept)
        return kept, self.data.frozen(kept, describe)

    def data_restore_schema(self, branch, source: str | None, description: dict) -> None:
        """A branch restored from a backup: made from the backup's copy (when it is first needed), with the
        backup's description as its base."""
        branch.template, branch.base = source, dict(description)
        name = self.data_names.get(branch.model.id)
        if name in self.data_schemas:
            self.data.drop_schema(name)
            self.data_schemas.discard(name)
