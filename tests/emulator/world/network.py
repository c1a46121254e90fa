"""Who may connect to a PostgreSQL database (its IP restrictions, ``.../databases/{database}/cidrs``) and the
throttler of a database's deploy requests (``.../databases/{database}/throttler``); the published
``platform-openapi-ops.json``, groups ``postgres_network`` and ``throttler``.

IP restrictions: entries ``{id, schema, role, cidrs, description, ...}`` of a PostgreSQL database (every
operation on a MySQL database: 422, whose passwords take ``cidrs`` instead); ``cidrs`` are IPv4 addresses or
ranges, at least one (an IPv6 or malformed one: 422 ``invalid_params``), kept as sent; an empty ``role`` or
``schema`` means every role or schema; a ``description`` of ``""`` clears it (null). With a data plane they are
enforced by the PostgreSQL server: once a database has entries, a login to any of its branches' databases is
admitted only from an address some entry lists for that role (an entry without a role: every role), and refused
from every other address (``pg_hba.conf`` rewritten and reloaded, ``data_hba``). The server cannot restrict a
login to a schema: an entry's ``schema`` is recorded, not enforced.

Throttler: a MySQL database's keyspaces (those of its production branch, world/keyspaces.py) and their ratios
(0..95); ``PATCH`` takes ``ratio`` (every keyspace) or ``configurations`` ``[{keyspace_name, ratio}]`` (an unknown
keyspace: 422); nothing is configured until the first ``PATCH`` (``configurations`` empty). A PostgreSQL database:
422.

Mixed into state.World: every public method runs under its lock.
"""

import ipaddress
from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field, StrictStr

from ..dataplane.servers import server_name
from .models import Actor, Record, ResourceRef, Throttler, ThrottlerConfiguration, ThrottlerUpdate
from .records import DatabaseRecord, OrgRecord, Paging, Window, invalid_params, locked, not_found, stamp
from .records import unprocessable, window


class IpRestriction(Record):
    record_type: ClassVar[str] = "DatabasePostgresCidr"

    id: str
    schema_name: str = ""  # "schema" in JSON (a BaseModel attribute of that name would shadow pydantic's)
    role: str = ""
    cidrs: list[str]
    description: str | None = None
    created_at: str
    updated_at: str
    deleted_at: str | None = None
    actor: Actor

    def _lean(self, data, context):
        data = dict(data)
        data["schema"] = data.pop("schema_name")
        return data


class IpRestrictionBody(BaseModel):
    model_config = ConfigDict(extra="ignore", strict=True)

    schema_: StrictStr | None = Field(None, alias="schema")
    role: StrictStr | None = None
    cidrs: list[StrictStr] | None = None
    description: StrictStr | None = None


def check_cidrs(cidrs: list[str] | None, required: bool) -> None:
    if cidrs is None and not required:
        return
    if not cidrs:
        raise invalid_params("cidrs: must contain at least one IPv4 address or range")
    for cidr in cidrs:
        try:
            network = ipaddress.ip_network(cidr, strict=False)
        except ValueError:
            raise invalid_params(f"cidrs: {cidr!r} is not a valid IPv4 address or CIDR range") from None
        if network.version != 4:
            raise invalid_params(f"cidrs: {cidr!r} is an IPv6 range: only IPv4 ranges are supported")


def _hba_name(name: str) -> str | None:
    """A database or role name as pg_hba.conf spells it (quoted), None for one it cannot hold."""
    if not name or any(char in name for char in '"\n\r,') or name != name.strip():
        return None
    return f'"{name}"'


class PostgresNetwork:
    """World methods of IP restrictions and of a database's throttler (self.lock, self.find_database...)."""

    def _network(self) -> dict:
        """Per database id: its IP restrictions (id -> IpRestriction) and throttler ratios (keyspace -> ratio)."""
        state = self.__dict__.get("_network_state")
        if state is None:
            state = self.__dict__["_network_state"] = {"cidrs": {}, "throttler": {}}
        return state

    def _restrictions(self, db: DatabaseRecord) -> dict[str, IpRestriction]:
        return self._network()["cidrs"].setdefault(db.model.id, {})

    def _postgres_database(self, org: OrgRecord, database: str) -> DatabaseRecord:
        db = self.find_database(org, database)
        if db.model.kind != "postgresql":
            raise unprocessable(f"Database {database!r} is not a PostgreSQL database: IP restrictions are for "
                                "PostgreSQL databases (a MySQL database's passwords take cidrs)")
        return db

    def _find_restriction(self, db: DatabaseRecord, restriction_id: str) -> IpRestriction:
        found = self._restrictions(db).get(restriction_id)
        if found is None:
            raise not_found("IP restriction entry")
        return found

    @locked
    def ip_restrictions(self, org: OrgRecord, database: str, paging: Paging) -> Window[IpRestriction]:
        return window(list(self._restrictions(self._postgres_database(org, database)).values()), paging)

    @locked
    def ip_restriction(self, org: OrgRecord, database: str, restriction_id: str) -> IpRestriction:
        return self._find_restriction(self._postgres_database(org, database), restriction_id)

    @locked
    def create_ip_restriction(self, org: OrgRecord, database: str, body: IpRestrictionBody, who) -> IpRestriction:
        db = self._postgres_database(org, database)
        check_cidrs(body.cidrs, required=True)
        when = stamp(self.now())
        record = IpRestriction(id=self.new_id(), schema_name=body.schema_ or "", role=body.role or "",
                               cidrs=list(body.cidrs), description=body.description or None, created_at=when,
                               updated_at=when, actor=who.actor())
        self._restrictions(db)[record.id] = record
        self.data_hba()
        return record

    @locked
    def update_ip_restriction(self, org: OrgRecord, database: str, restriction_id: str,
                              body: IpRestrictionBody) -> IpRestriction:
        db = self._postgres_database(org, database)
        record = self._find_restriction(db, restriction_id)
        check_cidrs(body.cidrs, required=False)
        if body.schema_ is not None:
            record.schema_name = body.schema_
        if body.role is not None:
            record.role = body.role
        if body.cidrs is not None:
            record.cidrs = list(body.cidrs)
        if body.description is not None:
            record.description = body.description or None
        record.updated_at = stamp(self.now())
        self.data_hba()
        return record

    @locked
    def delete_ip_restriction(self, org: OrgRecord, database: str, restriction_id: str) -> None:
        db = self._postgres_database(org, database)
        self._find_restriction(db, restriction_id)
        del self._restrictions(db)[restriction_id]
        self.data_hba()

    # ------------------------------------------------------------ the data plane: pg_hba.conf

    def hba_lines(self) -> list[str]:
        """The pg_hba.conf lines of every PostgreSQL database with IP restrictions, before the general ones."""
        lines = []
        for org in self.orgs.values():
            for db in org.databases.values():
                entries = self._network()["cidrs"].get(db.model.id)
                if db.model.kind != "postgresql" or not entries:
                    continue
                names = [_hba_name(server_name(db.model.name, b.model.name, 63)) for b in db.branches.values()]
                databases = ",".join(name for name in names if name)
                lines.append(f"# IP restrictions of {org.ref.name}/{db.model.name}")
                for entry in entries.values():
                    users = "all"
                    if entry.role:
                        matches = [role.model.username for branch in db.branches.values()
                                   for role in branch.roles.values()
                                   if entry.role in (role.model.name, role.model.username, role.model.base_username)]
                        quoted = [name for name in map(_hba_name, matches or [entry.role]) if name]
                        if not quoted:
                            continue
                        users = ",".join(quoted)
                    for cidr in entry.cidrs:
                        network = ipaddress.ip_network(cidr, strict=False)
                        lines.append(f"hostssl {databases} {users} {network} scram-sha-256")
                lines.append(f"host {databases} all 0.0.0.0/0 reject")
        return lines

    def data_hba(self) -> None:
        """Give the PostgreSQL server the IP restrictions as they are now (when the world is live on it)."""
        if self._data_go_live() == "live":
            self.data.set_hba(self.hba_lines())

    # ------------------------------------------------------------ the throttler of a database

    def _throttler(self, org: OrgRecord, database: str) -> tuple[DatabaseRecord, dict[str, float]]:
        db = self.find_database(org, database)
        if db.model.kind == "postgresql":
            raise unprocessable(f"Database {database!r} is a PostgreSQL database: the throttler is for the deploy "
                                "requests of Vitess (MySQL) databases")
        return db, self._network()["throttler"].setdefault(db.model.id, {})

    def _throttled_keyspaces(self, db: DatabaseRecord) -> list[str]:
        """The keyspaces of the database's production (default) branch (world/keyspaces.py)."""
        branch = db.branches.get(db.model.default_branch)
        return self.keyspace_names(branch) if branch is not None and branch.keyspaces else [db.model.name]

    def _throttler_of(self, db: DatabaseRecord, ratios: dict[str, float]) -> Throttler:
        model = db.model
        return Throttler(keyspaces=self._throttled_keyspaces(db),
                         configurable=ResourceRef(id=model.id, name=model.name, created_at=model.created_at,
                                                  updated_at=model.updated_at),
                         configurations=[ThrottlerConfiguration(keyspace_name=name, ratio=ratio)
                                         for name, ratio in ratios.items()])

    @locked
    def database_throttler(self, org: OrgRecord, database: str) -> Throttler:
        return self._throttler_of(*self._throttler(org, database))

    @locked
    def update_database_throttler(self, org: OrgRecord, database: str, body: ThrottlerUpdate) -> Throttler:
        db, ratios = self._throttler(org, database)
        keyspaces = self._throttled_keyspaces(db)
        unknown = [c.keyspace_name for c in body.configurations or [] if c.keyspace_name not in keyspaces]
        if unknown:
            raise unprocessable(f"Keyspace {unknown[0]!r} is not a keyspace of database {database!r} (its keyspaces: "
                                f"{', '.join(keyspaces)})")
        if body.ratio is not None:
            ratios.update({name: float(body.ratio) for name in keyspaces})
        for configuration in body.configurations or []:
            ratios[configuration.keyspace_name] = float(configuration.ratio)
        return self._throttler_of(db, ratios)
