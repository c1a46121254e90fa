"""Branch schemas: tables, the DDL that changes them, the difference between two schemas, and lint.

A schema is a dict of table name -> ``Table``. The DDL the control endpoint takes (standing in for a
MySQL connection) is a small subset of MySQL's: CREATE TABLE, ALTER TABLE (ADD/DROP/MODIFY/CHANGE/RENAME
COLUMN, ADD/DROP PRIMARY KEY, UNIQUE KEY, KEY/INDEX), DROP TABLE, CREATE [UNIQUE] INDEX, DROP INDEX.
A statement it cannot parse, or one the schema refuses (a table that exists, a column that does not),
raises ``DdlError`` with a sentence; a batch applies whole or not at all.

``Table.raw()`` is the table as ``SHOW CREATE TABLE`` writes it, so two tables are the same when their
raw texts are. ``diff`` gives the operations a deploy request runs (CREATE, ALTER, DROP) and ``lint``
the errors that block one (a table without a primary or unique key: ``NO_UNIQUE_KEY``).
"""

import copy
import html
import re
from dataclasses import dataclass, field

DEFAULT_OPTIONS = "ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_0900_ai_ci"
NO_UNIQUE_KEY_DOCS = "https://planetscale.com/docs/learn/onlineddl-change-unique-keys"

IDENT = r"(?:`(?:[^`]|``)+`|[A-Za-z0-9_$]+)"
TYPES = {
    "tinyint", "smallint", "mediumint", "int", "integer", "bigint", "decimal", "numeric", "dec", "fixed", "float",
    "double", "real", "bit", "bool", "boolean", "serial", "date", "datetime", "timestamp", "time", "year", "char",
    "varchar", "binary", "varbinary", "tinyblob", "blob", "mediumblob", "longblob", "tinytext", "text",
    "mediumtext", "longtext", "enum", "set", "json", "geometry", "point", "linestring", "polygon", "multipoint",
    "multilinestring", "multipolygon", "geometrycollection", "vector",
}
INDEX_KINDS = {"PRIMARY": "PRIMARY KEY", "UNIQUE": "UNIQUE KEY", "KEY": "KEY", "FULLTEXT": "FULLTEXT KEY",
               "SPATIAL": "SPATIAL KEY"}


class DdlError(ValueError):
    """A statement the emulator cannot parse or the schema refuses; the message says which and why."""


@dataclass
class Column:
    name: str
    definition: str  # type and attributes: "bigint unsigned NOT NULL AUTO_INCREMENT"

    def render(self) -> str:
        return f"{quote(self.name)} {self.definition}"


@dataclass
class Index:
    kind: str  # PRIMARY, UNIQUE, KEY, FULLTEXT, SPATIAL
    name: str  # "PRIMARY" for the primary key
    parts: list[str]  # rendered key parts: "`email`", "`name`(10)"

    def render(self) -> str:
        parts = ",".join(self.parts)
        if self.kind == "PRIMARY":
            return f"PRIMARY KEY ({parts})"
        return f"{INDEX_KINDS[self.kind]} {quote(self.name)} ({parts})"

    @property
    def columns(self) -> list[str]:
        return [unquote(re.match(IDENT, part).group(0)) for part in self.parts]


@dataclass
class Table:
    name: str
    columns: list[Column] = field(default_factory=list)
    indexes: list[Index] = field(default_factory=list)
    constraints: list[str] = field(default_factory=list)  # CONSTRAINT/FOREIGN KEY/CHECK lines, as written
    options: str = DEFAULT_OPTIONS

    def raw(self) -> str:
        lines = [c.render() for c in self.columns] + [i.render() for i in self.indexes] + self.constraints
        body = ",\n".join(f"  {line}" for line in lines)
        return f"CREATE TABLE {quote(self.name)} (\n{body}\n) {self.options}"

    def html(self) -> str:
        return f'<pre class="highlight sql">{html.escape(self.raw())}</pre>'

    def column(self, name: str) -> Column | None:
        return next((c for c in self.columns if c.name.lower() == name.lower()), None)

    def index(self, name: str) -> Index | None:
        return next((i for i in self.indexes if i.name.lower() == name.lower()), None)

    @property
    def has_unique_key(self) -> bool:
        return any(i.kind in ("PRIMARY", "UNIQUE") for i in self.indexes)


Schema = dict[str, Table]


def quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def unquote(token: str) -> str:
    return token[1:-1].replace("``", "`") if token.startswith("`") else token


# ---------------------------------------------------------------- splitting text


def _strip_comments(text: str) -> str:
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"(--|#)[^\n]*", " ", text)


def split_top(text: str, separator: str = ",") -> list[str]:
    """Split at the separators that are outside parentheses and quotes."""
    parts, depth, quote_char, start = [], 0, "", 0
    for index, char in enumerate(text):
        if quote_char:
            if char == quote_char:
                quote_char = ""
        elif char in "'\"`":
            quote_char = char
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth < 0:
                raise DdlError("unbalanced parentheses")
        elif char == separator and depth == 0:
            parts.append(text[start:index])
            start = index + 1
    if depth or quote_char:
        raise DdlError("unbalanced parentheses or quotes")
    parts.append(text[start:])
    return [part.strip() for part in parts]


def _closing(text: str, opening: int) -> int:
    """The index of the parenthesis that closes the one at ``opening``."""
    depth, quote_char = 0, ""
    for index in range(opening, len(text)):
        char = text[index]
        if quote_char:
            if char == quote_char:
                quote_char = ""
        elif char in "'\"`":
            quote_char = char
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth == 0:
                return index
    raise DdlError("unbalanced parentheses or quotes")


def _squash(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


# ---------------------------------------------------------------- definitions


def _column(text: str) -> tuple[Column, list[Index]]:
    """A column definition; a PRIMARY KEY or UNIQUE written on the column becomes an index."""
    match = re.match(rf"({IDENT})\s+(.*)$", text, re.S)
    if match is None:
        raise DdlError(f"expected a column definition (name and type), got {_squash(text)!r}")
    name, rest = unquote(match.group(1)), _squash(match.group(2))
    type_match = re.match(r"([A-Za-z]+)(\s*\([^)]*\))?((?:\s+(?:unsigned|signed|zerofill))*)", rest, re.I)
    if type_match is None or type_match.group(1).lower() not in TYPES:
        raise DdlError(f"column {quote(name)}: unknown data type in {rest!r}")
    data_type = (type_match.group(1) + (type_match.group(2) or "").replace(" ", "") + type_match.group(3)).lower()
    attributes = rest[type_match.end():].strip()
    indexes = []
    if re.search(r"\bPRIMARY\s+KEY\b", attributes, re.I):
        attributes = _squash(re.sub(r"\bPRIMARY\s+KEY\b", "", attributes, flags=re.I))
        if not re.search(r"\bNOT\s+NULL\b", attributes, re.I):
            attributes = _squash(re.sub(r"^\s*NULL\b", "", attributes, flags=re.I))
            attributes = f"NOT NULL {attributes}".strip()
        indexes.append(Index("PRIMARY", "PRIMARY", [quote(name)]))
    elif re.search(r"\bUNIQUE(\s+KEY)?\b", attributes, re.I):
        attributes = _squash(re.sub(r"\bUNIQUE(\s+KEY)?\b", "", attributes, flags=re.I))
        indexes.append(Index("UNIQUE", name, [quote(name)]))
    return Column(name, f"{data_type} {attributes}".strip()), indexes


def _key_parts(text: str) -> list[str]:
    text = text.strip()
    if not (text.startswith("(") and text.endswith(")")):
        raise DdlError(f"expected a parenthesized list of key columns, got {_squash(text)!r}")
    parts = []
    for part in split_top(text[1:-1]):
        match = re.match(rf"({IDENT})\s*(\(\s*\d+\s*\))?\s*(ASC|DESC)?$", part, re.I)
        if match is None:
            raise DdlError(f"expected a key column, got {part!r}")
        length = (match.group(2) or "").replace(" ", "")
        parts.append(quote(unquote(match.group(1))) + length + (" DESC" if (match.group(3) or "").upper() == "DESC"
                                                                 else ""))
    if not parts:
        raise DdlError("a key needs at least one column")
    return parts


INDEX_DEFINITION = re.compile(
    rf"^(?:CONSTRAINT(?:\s+(?P<constraint>{IDENT}))?\s+)?"
    r"(?P<kind>PRIMARY\s+KEY|UNIQUE(?:\s+(?:KEY|INDEX))?|(?:FULLTEXT|SPATIAL)(?:\s+(?:KEY|INDEX))?|KEY|INDEX)"
    rf"(?:\s+(?!\()(?P<name>{IDENT}))?(?:\s+USING\s+\w+)?\s*(?P<parts>\(.*\))(?:\s+USING\s+\w+)?$",
    re.I | re.S,
)


def _index(text: str, table: Table | None = None) -> Index | None:
    """An index definition (PRIMARY KEY, UNIQUE KEY, KEY...), or None when the text is not one."""
    match = INDEX_DEFINITION.match(text.strip())
    if match is None:
        return None
    word = match.group("kind").split()[0].upper()
    kind = "KEY" if word == "INDEX" else word
    parts = _key_parts(match.group("parts"))
    if kind == "PRIMARY":
        return Index("PRIMARY", "PRIMARY", parts)
    name = match.group("name") or match.group("constraint")
    if name is None:  # MySQL names an unnamed key after its first column (then _2, _3...)
        base = name = unquote(re.match(IDENT, parts[0]).group(0))
        suffix = 1
        while table is not None and table.index(name):
            suffix += 1
            name = f"{base}_{suffix}"
        return Index(kind, name, parts)
    return Index(kind, unquote(name), parts)


def _is_constraint(text: str) -> bool:
    return re.match(r"^(CONSTRAINT\b|FOREIGN\s+KEY\b|CHECK\b)", text.strip(), re.I) is not None


def _add_index(table: Table, index: Index) -> None:
    if index.kind == "PRIMARY" and table.index("PRIMARY"):
        raise DdlError(f"table {quote(table.name)}: multiple primary key defined")
    if table.index(index.name):
        raise DdlError(f"table {quote(table.name)}: duplicate key name {quote(index.name)}")
    for column in index.columns:
        if table.column(column) is None:
            raise DdlError(f"table {quote(table.name)}: key column {quote(column)} doesn't exist in table")
    if index.kind == "PRIMARY":
        table.indexes.insert(0, index)
    else:
        table.indexes.append(index)


def _add_column(table: Table, column: Column, position: str = "") -> None:
    if table.column(column.name):
        raise DdlError(f"table {quote(table.name)}: duplicate column name {quote(column.name)}")
    where = len(table.columns)
    if position.upper() == "FIRST":
        where = 0
    elif position:
        after = table.column(unquote(position))
        if after is None:
            raise DdlError(f"table {quote(table.name)}: unknown column {quote(unquote(position))} in AFTER")
        where = table.columns.index(after) + 1
    table.columns.insert(where, column)


# ---------------------------------------------------------------- statements


def _create_table(schema: Schema, match: re.Match, statement: str) -> None:
    name = unquote(match.group("name"))
    opening = match.end() - 1
    closing = _closing(statement, opening)
    options = _squash(statement[closing + 1:])
    if name in schema:
        if match.group("if_not_exists"):
            return
        raise DdlError(f"table {quote(name)} already exists")
    table = Table(name, options=_options(options))
    for element in split_top(statement[opening + 1:closing]):
        if not element:
            raise DdlError(f"table {quote(name)}: empty definition in the column list")
        index = _index(element, table)
        if index is not None:
            _add_index(table, index)
        elif _is_constraint(element):
            table.constraints.append(_squash(element))
        else:
            column, indexes = _column(element)
            _add_column(table, column)
            for key in indexes:
                _add_index(table, key)
    if not table.columns:
        raise DdlError(f"table {quote(name)} must have at least one column")
    schema[name] = table


def _options(text: str) -> str:
    if not text:
        return DEFAULT_OPTIONS
    if not re.match(r"^(\w+(\s*=\s*|\s+)[\w'\"]+\s*,?\s*)+$", text):
        raise DdlError(f"cannot parse the table options {text!r}")
    given = {}
    for key, value in re.findall(r"(DEFAULT\s+CHARSET|CHARSET|CHARACTER\s+SET|COLLATE|ENGINE|COMMENT)\s*=?\s*"
                                 r"('[^']*'|\w+)", text, re.I):
        key = re.sub(r"\s+", " ", key.upper()).replace("CHARACTER SET", "CHARSET")
        given["CHARSET" if key == "DEFAULT CHARSET" else key] = value
    engine = given.get("ENGINE", "InnoDB")
    charset = given.get("CHARSET", "utf8mb4")
    collate = given.get("COLLATE", "utf8mb4_0900_ai_ci" if charset == "utf8mb4" else f"{charset}_general_ci")
    rendered = f"ENGINE={engine} DEFAULT CHARSET={charset} COLLATE={collate}"
    return rendered + (f" COMMENT={given['COMMENT']}" if "COMMENT" in given else "")


def _find_table(schema: Schema, token: str) -> Table:
    name = unquote(token)
    if name not in schema:
        raise DdlError(f"table {quote(name)} doesn't exist")
    return schema[name]


ADD_COLUMN = re.compile(rf"^ADD\s+(?:COLUMN\s+)?(?!(?:CONSTRAINT|PRIMARY|UNIQUE|KEY|INDEX|FULLTEXT|SPATIAL|FOREIGN|"
                        rf"CHECK)\b)(?P<definition>.*?)(?:\s+(?P<first>FIRST)|\s+AFTER\s+(?P<after>{IDENT}))?$",
                        re.I | re.S)


def _alter_spec(table: Table, spec: str) -> None:
    text = _squash(spec)
    if match := re.match(rf"^ADD\s+(?P<definition>(?:CONSTRAINT\b|PRIMARY\b|UNIQUE\b|KEY\b|INDEX\b|FULLTEXT\b|"
                         rf"SPATIAL\b|FOREIGN\b|CHECK\b).*)$", text, re.I):
        index = _index(match.group("definition"), table)
        if index is not None:
            _add_index(table, index)
        elif _is_constraint(match.group("definition")):
            table.constraints.append(match.group("definition"))
        else:
            raise DdlError(f"cannot parse {text!r}")
    elif match := ADD_COLUMN.match(text):
        column, indexes = _column(match.group("definition"))
        _add_column(table, column, match.group("first") or match.group("after") or "")
        for key in indexes:
            _add_index(table, key)
    elif re.match(r"^DROP\s+PRIMARY\s+KEY$", text, re.I):
        if table.index("PRIMARY") is None:
            raise DdlError(f"table {quote(table.name)}: can't DROP PRIMARY KEY; it doesn't exist")
        table.indexes.remove(table.index("PRIMARY"))
    elif match := re.match(rf"^DROP\s+(?:INDEX|KEY)\s+({IDENT})$", text, re.I):
        index = table.index(unquote(match.group(1)))
        if index is None:
            raise DdlError(f"table {quote(table.name)}: can't DROP {quote(unquote(match.group(1)))}; "
                           "check that it exists")
        table.indexes.remove(index)
    elif match := re.match(rf"^DROP\s+(?:COLUMN\s+)?({IDENT})$", text, re.I):
        _drop_column(table, unquote(match.group(1)))
    elif match := re.match(rf"^MODIFY\s+(?:COLUMN\s+)?(.*)$", text, re.I):
        column, indexes = _column(match.group(1))
        _replace_column(table, column.name, column)
        for key in indexes:
            _add_index(table, key)
    elif match := re.match(rf"^CHANGE\s+(?:COLUMN\s+)?({IDENT})\s+(.*)$", text, re.I):
        column, indexes = _column(match.group(2))
        _replace_column(table, unquote(match.group(1)), column)
        for key in indexes:
            _add_index(table, key)
    elif match := re.match(rf"^RENAME\s+COLUMN\s+({IDENT})\s+TO\s+({IDENT})$", text, re.I):
        old = table.column(unquote(match.group(1)))
        if old is None:
            raise DdlError(f"table {quote(table.name)}: unknown column {quote(unquote(match.group(1)))}")
        _replace_column(table, old.name, Column(unquote(match.group(2)), old.definition))
    else:
        raise DdlError(f"cannot parse the ALTER TABLE clause {text!r}")


def _drop_column(table: Table, name: str) -> None:
    column = table.column(name)
    if column is None:
        raise DdlError(f"table {quote(table.name)}: can't DROP {quote(name)}; check that column/key exists")
    if len(table.columns) == 1:
        raise DdlError(f"table {quote(table.name)}: you can't delete all columns with ALTER TABLE; "
                       "use DROP TABLE instead")
    table.columns.remove(column)
    for index in list(table.indexes):
        kept = [part for part in index.parts if unquote(re.match(IDENT, part).group(0)).lower() != name.lower()]
        if not kept:
            table.indexes.remove(index)
        else:
            index.parts = kept


def _replace_column(table: Table, old_name: str, column: Column) -> None:
    old = table.column(old_name)
    if old is None:
        raise DdlError(f"table {quote(table.name)}: unknown column {quote(old_name)}")
    if column.name.lower() != old.name.lower() and table.column(column.name):
        raise DdlError(f"table {quote(table.name)}: duplicate column name {quote(column.name)}")
    table.columns[table.columns.index(old)] = column
    if column.name != old.name:
        for index in table.indexes:
            index.parts = [quote(column.name) + part[len(quote(old.name)):]
                           if unquote(re.match(IDENT, part).group(0)).lower() == old.name.lower() else part
                           for part in index.parts]


STATEMENTS = [
    ("create_table", re.compile(rf"^CREATE\s+TABLE\s+(?P<if_not_exists>IF\s+NOT\s+EXISTS\s+)?(?P<name>{IDENT})\s*\(",
                                re.I)),
    ("alter_table", re.compile(rf"^ALTER\s+TABLE\s+(?P<name>{IDENT})\s+(?P<specs>.+)$", re.I | re.S)),
    ("drop_table", re.compile(rf"^DROP\s+TABLES?\s+(?P<if_exists>IF\s+EXISTS\s+)?(?P<names>{IDENT}(?:\s*,\s*{IDENT})*)"
                              r"(?:\s+(?:RESTRICT|CASCADE))?$", re.I)),
    ("create_index", re.compile(rf"^CREATE\s+(?P<kind>UNIQUE\s+|FULLTEXT\s+|SPATIAL\s+)?INDEX\s+(?P<index>{IDENT})\s+"
                                rf"ON\s+(?P<name>{IDENT})\s*(?P<parts>\(.*\))$", re.I | re.S)),
    ("drop_index", re.compile(rf"^DROP\s+INDEX\s+(?P<index>{IDENT})\s+ON\s+(?P<name>{IDENT})$", re.I)),
]


def apply_statement(schema: Schema, statement: str) -> None:
    """Apply one statement to the schema in place (callers give a copy: an error leaves it half-changed)."""
    text = _strip_comments(statement).strip().rstrip(";").strip()
    if not text:
        raise DdlError("empty statement")
    for kind, pattern in STATEMENTS:
        match = pattern.match(text)
        if match is None:
            continue
        if kind == "create_table":
            _create_table(schema, match, text)
        elif kind == "alter_table":
            table = _find_table(schema, match.group("name"))
            for spec in split_top(match.group("specs")):
                _alter_spec(table, spec)
        elif kind == "drop_table":
            for token in re.findall(IDENT, match.group("names")):
                if unquote(token) in schema:
                    del schema[unquote(token)]
                elif not match.group("if_exists"):
                    raise DdlError(f"unknown table {quote(unquote(token))}")
        elif kind == "create_index":
            word = (match.group("kind") or "KEY").strip().upper()
            table = _find_table(schema, match.group("name"))
            _add_index(table, Index(word, unquote(match.group("index")), _key_parts(match.group("parts"))))
        else:
            table = _find_table(schema, match.group("name"))
            _alter_spec(table, f"DROP INDEX {match.group('index')}")
        return
    first = " ".join(text.split()[:3])
    raise DdlError(f"cannot parse the statement starting {first!r}: the emulator takes CREATE TABLE, ALTER TABLE, "
                   "DROP TABLE, CREATE INDEX and DROP INDEX")


def apply_ddl(schema: Schema, statements: list[str]) -> Schema:
    """The schema after the statements, in order; the given schema is left as it was.
    A statement that fails raises DdlError naming it (1-based) and saying why."""
    changed = copy.deepcopy(schema)
    for number, statement in enumerate(statements, 1):
        try:
            apply_statement(changed, statement)
        except DdlError as exc:
            shown = _squash(statement)
            shown = shown if len(shown) <= 80 else shown[:77] + "..."
            raise DdlError(f"statement {number} ({shown!r}): {exc}") from None
    return dict(sorted(changed.items()))


# ---------------------------------------------------------------- difference and lint


@dataclass
class Change:
    """One operation of a deploy request: the table before (None: created) and after (None: dropped)."""

    table_name: str
    before: Table | None
    after: Table | None

    @property
    def operation(self) -> str:
        return "CREATE" if self.before is None else "DROP" if self.after is None else "ALTER"

    @property
    def can_drop_data(self) -> bool:
        if self.after is None:
            return True
        if self.before is None:
            return False
        return any(self.after.column(c.name) is None for c in self.before.columns)

    @property
    def instant_eligible(self) -> bool:
        """MySQL's instant DDL: only columns added (at the end) and dropped, nothing else."""
        if self.operation != "ALTER":
            return False
        kept_before = [c for c in self.before.columns if self.after.column(c.name)]
        kept_after = [c for c in self.after.columns if self.before.column(c.name)]
        return (kept_before == kept_after and self.before.indexes == self.after.indexes
                and self.before.constraints == self.after.constraints and self.before.options == self.after.options)

    def ddl(self) -> str:
        if self.after is None:
            return f"DROP TABLE {quote(self.table_name)}"
        if self.before is None:
            return self.after.raw()
        return f"ALTER TABLE {quote(self.table_name)} " + ", ".join(_alter_clauses(self.before, self.after))


def _alter_clauses(before: Table, after: Table) -> list[str]:
    clauses = []
    for index in before.indexes:
        if index not in after.indexes:
            clauses.append("DROP PRIMARY KEY" if index.kind == "PRIMARY" else f"DROP KEY {quote(index.name)}")
    for constraint in before.constraints:
        if constraint not in after.constraints:
            clauses.append(f"DROP CONSTRAINT {constraint}")
    for column in before.columns:
        if after.column(column.name) is None:
            clauses.append(f"DROP COLUMN {quote(column.name)}")
    previous = None
    for column in after.columns:
        old = before.column(column.name)
        place = f" AFTER {quote(previous)}" if previous else " FIRST"
        if old is None:
            clauses.append(f"ADD COLUMN {column.render()}{place if column is not after.columns[-1] else ''}")
        elif old.definition != column.definition:
            clauses.append(f"MODIFY COLUMN {column.render()}")
        previous = column.name
    for index in after.indexes:
        if index not in before.indexes:
            clauses.append(f"ADD {index.render()}")
    for constraint in after.constraints:
        if constraint not in before.constraints:
            clauses.append(f"ADD {constraint}")
    if before.options != after.options:
        clauses.append(after.options)
    return clauses


def diff(source: Schema, target: Schema) -> list[Change]:
    """What deploying ``source`` (a development branch) into ``target`` changes, table by table."""
    changes = []
    for name in sorted(set(source) | set(target)):
        before, after = target.get(name), source.get(name)
        if before is None or after is None or before.raw() != after.raw():
            changes.append(Change(name, copy.deepcopy(before), copy.deepcopy(after)))
    return changes


def _same(one: Table | None, other: Table | None) -> bool:
    return one is None and other is None or one is not None and other is not None and one.raw() == other.raw()


def merge(base: Schema, source: Schema, target: Schema) -> tuple[list[Change], list[str]]:
    """The three-way merge of a deploy request: the changes ``source`` (a development branch) made since
    ``base`` (the schema it was made from), each applied to ``target`` as it is now; and the names of the
    tables both sides changed, differently, since the base (conflicts). What the target gained since the
    base and the branch did not touch is kept; a change the target already has is no change."""
    changes, conflicts = [], []
    for name in sorted(set(base) | set(source)):
        was, mine, now = base.get(name), source.get(name), target.get(name)
        if _same(was, mine) or _same(now, mine):
            continue
        if not _same(now, was):
            conflicts.append(name)
            continue
        changes.append(Change(name, copy.deepcopy(now), copy.deepcopy(mine)))
    return changes, conflicts


def lint(schema: Schema, keyspace: str, tables: list[str] | None = None) -> list[dict]:
    """The lint errors of the schema (of the named tables only, when given), as the platform lists them."""
    errors = []
    for name, table in schema.items():
        if tables is not None and name not in tables:
            continue
        if not table.has_unique_key:
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
    """The syntax-highlighted HTML of a statement (keywords in spans, as the platform's pages show it)."""
    escaped = html.escape(ddl)
    keywords = r"\b(CREATE|TABLE|ALTER|DROP|ADD|COLUMN|MODIFY|PRIMARY|UNIQUE|KEY|INDEX|NOT|NULL|DEFAULT|AFTER|FIRST)\b"
    return '<pre class="highlight sql">' + re.sub(keywords, r'<span class="k">\1</span>', escaped) + "</pre>"
