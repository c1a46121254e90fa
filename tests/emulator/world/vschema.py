"""The checks of a keyspace's VSchema (PATCH .../keyspaces/{keyspace}/vschema), against the keyspace's real tables.

A VSchema is a JSON object (Vitess's ``vschemapb.Keyspace``): ``sharded``, ``vindexes`` (name -> ``{type, params,
owner}``), ``tables`` (name -> ``{column_vindexes: [{column | columns, name}], auto_increment: {column, sequence},
type: sequence | reference, ...}``), ``require_explicit_routing``, ``foreign_key_mode``, ``multi_tenant_spec``.
``check_vschema(document, keyspace, shards, tables)`` refuses (422 ``unprocessable``) with a sentence naming the
table, column or vindex at fault; ``tables`` is the keyspace's description as the server has it (dataplane/schema.py
``describe``: name -> {columns, indexes}), so a table or column the keyspace's MariaDB schema does not have is
refused. The vindex types are those Vitess documents as predefined ("Predefined Vindexes",
https://vitess.io/docs/reference/features/vindexes/).
"""

import json

from .records import unprocessable

# Vitess's predefined vindexes: type -> (may be a primary vindex: True, False or "unowned"; takes several columns)
VINDEX_TYPES = {
    "binary": (True, False),
    "binary_md5": (True, False),
    "consistent_lookup": (False, True),
    "consistent_lookup_unique": ("unowned", True),
    "hash": (True, False),
    "lookup": (False, True),
    "lookup_unique": ("unowned", True),
    "multicol": (True, True),
    "null": (True, False),
    "numeric": (True, False),
    "numeric_static_map": (True, False),
    "region_experimental": (True, True),
    "region_json": (True, True),
    "reverse_bits": (True, False),
    "unicode_loose_md5": (True, False),
    "unicode_loose_xxhash": (True, False),
    "xxhash": (True, False),
}
KEYSPACE_KEYS = ("sharded", "vindexes", "tables", "require_explicit_routing", "foreign_key_mode", "multi_tenant_spec",
                 "cross_tablet")
TABLE_KEYS = ("type", "column_vindexes", "auto_increment", "columns", "pinned", "column_list_authoritative", "source")
TABLE_TYPES = ("", "sequence", "reference")
VINDEX_KEYS = ("type", "params", "owner")
FOREIGN_KEY_MODES = ("unspecified", "disallow", "unmanaged", "managed")


def parse_vschema(text: str, keyspace: str) -> dict:
    """The VSchema a PATCH sends (a JSON string), as a JSON object; else 422."""
    try:
        document = json.loads(text) if text.strip() else {}
    except ValueError as error:
        raise unprocessable(f"VSchema of keyspace {keyspace!r} is not valid JSON: {error}") from None
    if not isinstance(document, dict):
        raise unprocessable(f"VSchema of keyspace {keyspace!r} must be a JSON object, not {type(document).__name__}")
    return document


def _refuse(keyspace: str, sentence: str):
    return unprocessable(f"VSchema of keyspace {keyspace!r}: {sentence}")


def _unknown(keys, known, keyspace: str, where: str) -> None:
    extra = sorted(set(keys) - set(known))
    if extra:
        raise _refuse(keyspace, f"{where} has an unknown field {extra[0]!r} (known: {', '.join(known)})")


def check_vschema(document: dict, keyspace: str, shards: int, tables: dict) -> None:
    """Refuse (422, a sentence) a VSchema that does not fit the keyspace: its fields, its vindexes (declared, of a
    type Vitess predefines), its tables and columns (the keyspace's real ones), a primary vindex for every table of
    a sharded keyspace."""
    _unknown(document, KEYSPACE_KEYS, keyspace, "the VSchema")
    sharded = document.get("sharded", False)
    if not isinstance(sharded, bool):
        raise _refuse(keyspace, "'sharded' must be true or false")
    if shards > 1 and not sharded:
        raise _refuse(keyspace, f"the keyspace has {shards} shards, so its VSchema must say \"sharded\": true")
    mode = document.get("foreign_key_mode", "unspecified")
    if mode not in FOREIGN_KEY_MODES:
        raise _refuse(keyspace, f"foreign_key_mode {mode!r} is not one of {', '.join(FOREIGN_KEY_MODES)}")
    vindexes = document.get("vindexes", {})
    declared = document.get("tables", {})
    if not isinstance(vindexes, dict) or not isinstance(declared, dict):
        raise _refuse(keyspace, "'vindexes' and 'tables' must be JSON objects")
    for name, vindex in vindexes.items():
        _check_vindex(keyspace, name, vindex, tables)
    for name, table in declared.items():
        _check_table(keyspace, name, table, tables, vindexes, sharded)


def _check_vindex(keyspace: str, name: str, vindex, tables: dict) -> None:
    if not isinstance(vindex, dict):
        raise _refuse(keyspace, f"vindex {name!r} must be a JSON object")
    _unknown(vindex, VINDEX_KEYS, keyspace, f"vindex {name!r}")
    kind = vindex.get("type")
    if kind not in VINDEX_TYPES:
        raise _refuse(keyspace, f"vindex {name!r} has type {kind!r}, which is not a vindex type Vitess predefines "
                                f"({', '.join(VINDEX_TYPES)})")
    params = vindex.get("params", {})
    if not isinstance(params, dict) or not all(isinstance(v, str) for v in params.values()):
        raise _refuse(keyspace, f"vindex {name!r}: 'params' must map names to strings")
    owner = vindex.get("owner")
    if owner is not None and owner not in tables:
        raise _refuse(keyspace, f"vindex {name!r} is owned by table {owner!r}, which the keyspace does not have")


def _columns_of(keyspace: str, name: str, tables: dict) -> set[str]:
    if name not in tables:
        raise _refuse(keyspace, f"table {name!r} does not exist in the keyspace (its tables: "
                                f"{', '.join(sorted(tables)) or 'none'})")
    return {column["name"].lower() for column in tables[name]["columns"]}


def _check_column(keyspace: str, table: str, column, columns: set[str], where: str) -> None:
    if not isinstance(column, str) or column.lower() not in columns:
        raise _refuse(keyspace, f"table {table!r} has no column {column!r} ({where})")


def _check_table(keyspace: str, name: str, table, tables: dict, vindexes: dict, sharded: bool) -> None:
    if not isinstance(table, dict):
        raise _refuse(keyspace, f"table {name!r} must be a JSON object")
    _unknown(table, TABLE_KEYS, keyspace, f"table {name!r}")
    columns = _columns_of(keyspace, name, tables)
    kind = table.get("type", "")
    if kind not in TABLE_TYPES:
        raise _refuse(keyspace, f"table {name!r} has type {kind!r}: a table's type is sequence or reference")
    if kind == "sequence" and sharded:
        raise _refuse(keyspace, f"table {name!r} is a sequence: sequence tables belong to an unsharded keyspace")
    column_vindexes = table.get("column_vindexes", [])
    if not isinstance(column_vindexes, list):
        raise _refuse(keyspace, f"table {name!r}: 'column_vindexes' must be a list")
    for number, entry in enumerate(column_vindexes):
        if not isinstance(entry, dict) or set(entry) - {"column", "columns", "name"}:
            raise _refuse(keyspace, f"table {name!r}: a column vindex is {{column or columns, name}}")
        vindex = entry.get("name")
        if vindex not in vindexes:
            raise _refuse(keyspace, f"table {name!r} uses vindex {vindex!r}, which the VSchema does not declare "
                                    f"under 'vindexes'")
        kind_of, several = vindexes[vindex]["type"], VINDEX_TYPES[vindexes[vindex]["type"]][1]
        named = [entry["column"]] if "column" in entry else entry.get("columns")
        if not isinstance(named, list) or not named or ("column" in entry and "columns" in entry):
            raise _refuse(keyspace, f"table {name!r}: vindex {vindex!r} needs 'column' or 'columns' (one of them)")
        if len(named) > 1 and not several:
            raise _refuse(keyspace, f"table {name!r}: vindex {vindex!r} of type {kind_of!r} takes one column")
        for column in named:
            _check_column(keyspace, name, column, columns, f"vindex {vindex!r}")
        primary = VINDEX_TYPES[kind_of][0]
        if number == 0 and sharded and (primary is False or primary == "unowned" and vindexes[vindex].get("owner")):
            raise _refuse(keyspace, f"table {name!r}: its primary (first) vindex {vindex!r} of type {kind_of!r} "
                                    f"cannot be a primary vindex")
    if sharded and kind == "" and not column_vindexes:
        raise _refuse(keyspace, f"table {name!r} has no primary vindex: every table of a sharded keyspace needs "
                                f"one in 'column_vindexes'")
    auto = table.get("auto_increment")
    if auto is not None:
        if not isinstance(auto, dict) or not isinstance(auto.get("sequence"), str) or set(auto) - {"column",
                                                                                                    "sequence"}:
            raise _refuse(keyspace, f"table {name!r}: 'auto_increment' is {{column, sequence}}")
        _check_column(keyspace, name, auto.get("column"), columns, "auto_increment")


def tables_without_primary_vindex(document: dict, tables: dict) -> list[str]:
    """The tables of a sharded keyspace (its real ones) the VSchema gives no primary vindex (lint)."""
    if not document.get("sharded"):
        return []
    declared = document.get("tables", {})
    return [name for name in sorted(tables) if not declared.get(name, {}).get("column_vindexes")
            and declared.get(name, {}).get("type", "") == ""]
