"""Keyspaces on the MariaDB server: each keyspace of a MySQL branch is a schema of its own.

``keyspace_schema(branch, keyspace)`` is the one mapping (world/keyspaces.py keeps the records): the default keyspace
(``default: true``, named after the database) is the branch's schema, ``<database>__<branch>`` (unchanged, so every
login and table made before keyspaces stays where it was); another keyspace ``k`` is ``<database>__<branch>$k``
('$' is legal in a MariaDB name and never in a branch's, so no branch's schema can take it; hashed beyond 64
characters as ``server_name`` does). ``made_keyspace_schema`` makes it on the server when it is not yet (a new
keyspace is an empty schema; a child branch's copy of its parent's keyspace has the parent's tables, ``LIKE``).
The branch's passwords are granted on every keyspace schema with their role's privileges; a client that names a
keyspace at login (the MySQL edge, ``data_route``) lands in that keyspace's schema.

``KeyspaceSchemas`` is mixed into state.World: every method runs under its lock.
"""

import hashlib

from .schema import copy_tables, describe, quote, show_create, tables_of
from .servers import mysql_privileges
from ..world.records import not_found


def keyspace_schema_name(branch_schema: str, keyspace: str, limit: int = 64) -> str:
    """The schema of a keyspace other than the default one, beside its branch's schema."""
    name = f"{branch_schema}${keyspace}"
    if len(name) <= limit:
        return name
    digest = hashlib.sha256(name.encode()).hexdigest()[:12]
    return f"{name[:limit - 14]}__{digest}"


class KeyspaceSchemas:
    """World methods that find and keep a branch's keyspace schemas on the server."""

    def keyspace_schema(self, branch, keyspace: str) -> str | None:
        """The server schema of the branch's keyspace (made or not); None without a data plane, for a PostgreSQL
        branch or a keyspace the branch does not have."""
        record = branch.keyspaces.get(keyspace)
        base = self.data_names.get(branch.model.id) if self.data is not None else None
        if record is None or base is None or branch.model.kind != "mysql":
            return None
        return base if record.default else keyspace_schema_name(base, keyspace)

    def keyspace_schemas(self, branch) -> dict[str, str]:
        """Every keyspace of the branch -> its server schema (the default keyspace first)."""
        found = {name: self.keyspace_schema(branch, name) for name in self.keyspace_names(branch)}
        return {name: schema for name, schema in found.items() if schema is not None}

    def _other_keyspace_schemas(self, branch) -> list[str]:
        return [self.keyspace_schema(branch, name) for name, record in branch.keyspaces.items()
                if not record.default and self.keyspace_schema(branch, name) is not None]

    def made_keyspace_schema(self, branch, keyspace: str) -> str:
        """The keyspace's schema on the server, made now (empty) when it is not yet; 404 for a keyspace the branch
        does not have, 503 without a data plane (made_schema)."""
        if keyspace not in branch.keyspaces:
            raise not_found("Keyspace")
        default = self.made_schema(branch)
        if branch.keyspaces[keyspace].default:
            return default
        name = self.keyspace_schema(branch, keyspace)
        if name not in self.data_schemas:
            self.data.my(f"CREATE DATABASE IF NOT EXISTS {quote(name)}")
            self.data_schemas.add(name)
        return name

    def _keyspace_source(self, branch, keyspace: str) -> str | None:
        record = branch.keyspaces.get(keyspace)
        if record is None:
            raise not_found("Keyspace")
        if record.default:
            return self._schema_source(branch)
        name = self.keyspace_schema(branch, keyspace)
        live = self.data is not None and self.data_live and self.data.owner is self
        return name if live and name in self.data_schemas else None

    def describe_keyspace(self, branch, keyspace: str) -> dict:
        """The keyspace's tables as the server describes them (name -> {columns, indexes}); a keyspace whose
        schema is not made yet has none."""
        if branch.keyspaces.get(keyspace) is not None and branch.keyspaces[keyspace].default:
            return self.describe_branch(branch)
        source = self._keyspace_source(branch, keyspace)
        return describe(self.data, source) if source is not None else {}

    def keyspace_tables(self, branch, keyspace: str) -> list[tuple[str, str]]:
        """(name, SHOW CREATE TABLE) of each table of the keyspace."""
        source = self._keyspace_source(branch, keyspace)
        if source is None:
            return []
        return [(table, show_create(self.data, source, table)) for table in tables_of(self.data, source)]

    # ------------------------------------------------------------ keeping the server in step

    def _grant_keyspaces(self, branch, record, schemas=None) -> None:
        """The password's privileges on each keyspace schema other than the default one (granted at its creation)."""
        privileges = mysql_privileges(record.model.role, branch.model.safe_migrations)
        for name in (schemas if schemas is not None else [n for n in branch.keyspaces
                                                          if not branch.keyspaces[n].default]):
            self.data.grant_user(record.model.username, self.made_keyspace_schema(branch, name), privileges)

    def data_keyspace_created(self, branch, keyspace: str) -> None:
        """A new keyspace: its schema made, the branch's passwords granted on it."""
        if self._data_go_live() is None or branch.model.kind != "mysql":
            return
        self.made_keyspace_schema(branch, keyspace)
        for record in branch.passwords.values():
            if record.model.username in self.data_secrets:
                self._grant_keyspaces(branch, record, [keyspace])

    def data_keyspace_removed(self, branch, keyspace: str) -> None:
        """A deleted keyspace's schema goes (with its tables and rows)."""
        name = self.keyspace_schema(branch, keyspace)
        if name is None or self._data_go_live() != "live":
            return
        self.data.drop_schema(name)
        self.data_schemas.discard(name)

    def data_keyspaces_branched(self, branch, parent) -> None:
        """A new branch's keyspaces other than the default one: the tables of its parent's made ones (LIKE)."""
        if self.data is None or parent is None or branch.model.kind != "mysql" or not self.data_live \
                or self.data.owner is not self:
            return
        for name, record in branch.keyspaces.items():
            source = self.keyspace_schema(parent, name)
            if record.default or source not in self.data_schemas:
                continue
            target = self.keyspace_schema(branch, name)
            copy_tables(self.data, source, target)
            self.data_schemas.add(target)

    def data_keyspace_schemas_removed(self, branch) -> list[str]:
        """The schemas of a branch's keyspaces other than the default one (dropped with the branch)."""
        return self._other_keyspace_schemas(branch)
