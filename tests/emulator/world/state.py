"""The emulated world: organizations and everything in them, the clock and the settings;
``World.auth`` (oauth.Authority) holds the credentials and OAuth grants.

Every public method of both runs under ``World.lock`` (re-entrant), so each operation is atomic
whatever thread calls it. Resource models are mutated in place; the HTTP handlers are
``async`` and serialize what they get back before yielding to the event loop, so a
response never mixes two states.

Time-driven transitions (branch readiness, report completion, password and token expiry)
follow the emulator clock: real UTC time plus an offset that the control API advances.
They are computed when a resource is read ("settled"), so nothing runs in the background.
"""

import gzip
import hashlib
import hmac
import random
import threading
from datetime import datetime, timedelta

from .models import (
    Branch,
    BranchCreate,
    BranchSummary,
    CursorPage,
    Database,
    DatabaseRef,
    MemberAdd,
    OrganizationMember,
    Password,
    PasswordCreate,
    PasswordUpdate,
    QueryPatternReport,
    Region,
    ResourceRef,
    Team,
    TeamCreate,
    TeamMember,
    TeamUpdate,
    User,
)
from .access import Access
from .audit import AuditLog
from .backups import Backups
from .bouncers import Bouncers
from .capacity import Capacity
from .databases import Databases, size_for
from ..dataplane.keyspaces import KeyspaceSchemas
from ..dataplane.schema import SchemaHooks
from ..dataplane.servers import DataPlaneHooks
from .deploys import DeployRequests
from .keyspaces import Keyspaces
from .lifecycle import BranchLifecycle
from .network import PostgresNetwork
from .oauth import Authority
from .webhooks import Webhooks
from .workflows import Workflows
from .traffic_budgets import TrafficBudgets
from .upkeep import Upkeep
from .postgres import Roles
from .records import (
    ID_ALPHABET,
    SECRET_ALPHABET,
    ApiError,
    BranchRecord,
    Clock,
    DatabaseRecord,
    OrgRecord,
    Paging,
    PasswordRecord,
    Principal,
    ReportRecord,
    Settings,
    TeamRecord,
    Window,
    invalid_params,
    locked,
    not_found,
    slugify,
    stamp,
    unprocessable,
    window,
)

SIGNED_URL_LIFETIME = timedelta(minutes=5)
SSO_MANAGED = "Teams managed by single sign-on cannot be updated"


class World(AuditLog, Bouncers, Capacity, TrafficBudgets, Webhooks, Access, BranchLifecycle, DeployRequests,
            Databases, Backups, Roles, DataPlaneHooks, SchemaHooks, PostgresNetwork, Upkeep, Keyspaces,
            KeyspaceSchemas, Workflows):
    def __init__(self, settings: Settings):
        self.lock = threading.RLock()
        self.settings = settings
        self.clock = Clock()
        self.rng = random.Random(0)  # deterministic: the same requests give the same ids
        self.signing_key = self.rng.randbytes(32)
        self.users: dict[str, User] = {}
        self.orgs: dict[str, OrgRecord] = {}
        self.description: dict = {}  # seeded names and credentials, for GET /_emulator/world
        self.default_user: User | None = None  # who authorizes OAuth applications by default
        self.auth = Authority(self)  # credentials: service tokens, OAuth applications and grants
        self.data_setup()  # the data plane's servers, emptied (dataplane/servers.py)

    # ------------------------------------------------------------ primitives

    def new_id(self) -> str:
        return "".join(self.rng.choices(ID_ALPHABET, k=12))

    def new_secret(self, prefix: str, length: int = 32) -> str:
        return prefix + "".join(self.rng.choices(SECRET_ALPHABET, k=length))

    def now(self) -> datetime:
        return self.clock.now()

    # ------------------------------------------------------------ creation (no validation)

    @locked
    def add_org(self, name: str, created: datetime) -> OrgRecord:
        org = OrgRecord(ResourceRef(id=self.new_id(), name=name, created_at=stamp(created), updated_at=stamp(created)))
        self.orgs[name] = org
        return org

    @locked
    def add_user(self, name: str, email: str, org: OrgRecord | None, role: str = "member") -> User:
        now = stamp(self.now())
        digest = hashlib.md5(email.encode()).hexdigest()
        user = User(
            id=self.new_id(),
            display_name=name,
            name=name,
            email=email,
            avatar_url=f"https://www.gravatar.com/avatar/{digest}",
            created_at=now,
            updated_at=now,
            default_organization=org.ref if org else None,
        )
        self.users[user.id] = user
        if org is not None:
            org.members[user.id] = OrganizationMember(
                id=self.new_id(), user=user, role=role, created_at=now, updated_at=now
            )
        return user

    @locked
    def add_database(self, org: OrgRecord, name: str, region: Region, created: datetime) -> DatabaseRecord:
        url = f"/v1/organizations/{org.ref.name}/databases/{name}"
        model = Database(
            id=self.new_id(),
            name=name,
            url=url,
            branches_url=f"{url}/branches",
            html_url=f"/{org.ref.name}/{name}",
            region=region,
            created_at=stamp(created),
            updated_at=stamp(created),
            schema_last_updated_at=stamp(created),
        )
        org.databases[name] = DatabaseRecord(model)
        return org.databases[name]

    @locked
    def add_branch(
        self,
        org: OrgRecord,
        db: DatabaseRecord,
        name: str,
        region: Region,
        actor: User,
        parent: BranchRecord | None = None,
        *,
        production: bool = False,
        cluster: str = "PS_10",
        restored_from: ResourceRef | None = None,
        created: datetime | None = None,
        ready: bool = False,
    ) -> BranchRecord:
        created = created or self.now()
        model = Branch(
            id=self.new_id(),
            name=name,
            created_at=stamp(created),
            updated_at=stamp(created),
            schema_last_updated_at=stamp(created),
            kind=db.model.kind,
            mysql_address=f"{region.slug}.private-connect.psdb.localhost",
            mysql_edge_address=f"{region.slug}.connect.psdb.localhost",
            vtgate_count=2 if production else 1,
            cluster_name=cluster,
            production=production,
            safe_migrations=production,
            has_replicas=production,
            actor=actor.actor(),
            restored_from_branch=restored_from,
            html_url=f"{db.model.html_url}/{name}",
            url=f"{db.model.branches_url}/{name}",
            region=region,
            parent_branch=parent.model.name if parent else None,
        )
        delay = 0 if ready else self.settings.ready_delay
        record = BranchRecord(model, ready_at=created + timedelta(seconds=delay))
        db.branches[name] = record
        self.data_branch_created(db, record)
        self.keyspaces_branched(db, record, parent)  # its default keyspace, or its parent's keyspaces
        if parent is not None:  # a new branch starts with its parent's schema and remembers it (its base)
            self.data_schema_branched(record, parent)
            self.data_keyspaces_branched(record, parent)
        record.settle(self.now())
        return record

    @locked
    def add_password(self, branch: BranchRecord, actor: User, body: PasswordCreate) -> Password:
        """Create a password; the returned copy carries its plain text, the stored one never does."""
        now = self.now()
        pid = self.new_id()
        b = branch.model
        model = Password(
            id=pid,
            name=body.name or f"password-{pid}",
            role=body.role,
            cidrs=body.cidrs,
            created_at=stamp(now),
            ttl_seconds=body.ttl or None,
            access_host_url=b.mysql_edge_address,
            access_host_regional_url=b.mysql_edge_address,
            access_host_regional_urls=[f"{b.region.slug}-replica.connect.psdb.localhost"] if body.replica else [],
            actor=actor.actor(),
            region=b.region,
            username="".join(self.rng.choices(ID_ALPHABET, k=20)),
            replica=body.replica,
            renewable=body.ttl > 0,
            database_branch=BranchSummary(
                name=b.name,
                id=b.id,
                production=b.production,
                mysql_edge_address=b.mysql_edge_address,
                private_edge_connectivity=b.private_edge_connectivity,
            ),
        )
        record = PasswordRecord(model, expires=None)
        branch.passwords[pid] = record
        issued = self._issue_password(record)
        self.data_password_created(branch, record, issued.plain_text)  # a real user; the host leads to it
        return record.model.model_copy(update={"plain_text": issued.plain_text})

    def _issue_password(self, record: PasswordRecord) -> Password:
        """Give a password a new secret and a new expiry; return it with its plain text."""
        now = self.now()
        if record.model.ttl_seconds:
            record.expires = now + timedelta(seconds=record.model.ttl_seconds)
            record.model.expires_at = stamp(record.expires)
        record.settle(now)
        plain_text = self.new_secret("pscale_pw_", 43)
        record.secret_digest = hashlib.sha256(plain_text.encode()).hexdigest()
        return record.model.model_copy(update={"plain_text": plain_text})

    @locked
    def serve_credentials(self) -> None:
        """The seeded credentials are read (GET /_emulator/world): the data plane's servers take them, so that they
        log in (dataplane.DataPlaneHooks.data_serve). Tests and users log in with a real client."""
        self.data_serve()

    @locked
    def add_report(self, branch: BranchRecord, actor: User, *, done: bool = False) -> QueryPatternReport:
        now = self.now()
        rid = self.new_id()
        url = f"{branch.model.url}/query-patterns/{rid}"
        model = QueryPatternReport(
            id=rid, created_at=stamp(now), url=url, download_url=f"{url}/download", actor=actor.actor()
        )
        delay = 0 if done else self.settings.report_delay
        record = ReportRecord(model, finishes_at=now + timedelta(seconds=delay))
        branch.reports[rid] = record
        return record.settle(now)

    @locked
    def add_team(
        self,
        org: OrgRecord,
        name: str,
        description: str,
        creator: User,
        *,
        managed: bool = False,
        databases: tuple[DatabaseRecord, ...] = (),
    ) -> TeamRecord:
        slug = base = slugify(name)
        suffix = 1
        while slug in org.teams:
            suffix += 1
            slug = f"{base}-{suffix}"
        now = stamp(self.now())
        refs = [
            DatabaseRef(id=d.model.id, name=d.model.name, url=d.model.url, branches_url=d.model.branches_url)
            for d in databases
        ]
        model = Team(
            id=self.new_id(),
            display_name=name,
            creator=creator.actor(),
            databases=refs,
            name=name,
            slug=slug,
            created_at=now,
            updated_at=now,
            description=description,
            managed=managed,
        )
        org.teams[slug] = TeamRecord(model)
        return org.teams[slug]

    @locked
    def add_team_member(self, team: TeamRecord, user: User, actor: User) -> TeamMember:
        now = stamp(self.now())
        member = TeamMember(id=self.new_id(), user=user, actor=actor.actor(), created_at=now, updated_at=now)
        team.members[member.id] = member
        team.by_user[user.id] = member.id
        return member

    @locked
    def organization(self, name: str, who: Principal) -> OrgRecord:
        org = self.orgs.get(name)
        if org is None:
            raise not_found("Organization")
        if who.user.id not in org.members:
            raise ApiError(403, "forbidden", f"This credential has no access to organization {name!r}")
        return org

    # ------------------------------------------------------------ regions and databases

    @locked
    def regions(self, org: OrgRecord, paging: Paging, database: str | None = None) -> Window[Region]:
        if database is None:
            return window(org.regions.values(), paging)
        self.find_database(org, database)
        return window([r for r in org.regions.values() if r.enabled], paging)

    @locked
    def public_regions(self, paging: Paging) -> Window[Region]:
        """The platform's regions, which every organization's are (GET /regions needs no credentials)."""
        found: dict[str, Region] = {}
        for org in self.orgs.values():
            for region in org.regions.values():
                found.setdefault(region.slug, region)
        return window(list(found.values()), paging)

    @locked
    def database(self, org: OrgRecord, name: str) -> Database:
        return self.render_database(self.find_database(org, name))

    def find_database(self, org: OrgRecord, name: str) -> DatabaseRecord:
        """The database, its deploy requests settled (so its branches and schemas are as of now)."""
        db = org.databases.get(name)
        if db is None:
            raise not_found("Database")
        self.settle_deploys(db)
        self.settle_capacity(db)  # completed change and resize requests reach their branches
        self.settle_keyspaces(db)  # and completed keyspace resize requests their keyspaces
        self.settle_workflows(db)  # the workflows' steps due by now (their rows moved on the server)
        return db

    def find_branch(self, org: OrgRecord, database: str, name: str) -> BranchRecord:
        branch = self.find_database(org, database).branches.get(name)
        if branch is None:
            raise not_found("Branch")
        return branch

    # ------------------------------------------------------------ branches

    @locked
    def branches(
        self, org: OrgRecord, database: str, paging: Paging, q: str | None, production: bool | None
    ) -> Window[Branch]:
        now = self.now()
        matching = [
            b.settle(now)
            for b in self.find_database(org, database).branches.values()
            if (not q or q in b.model.name) and (production is None or b.model.production == production)
        ]
        return window(matching, paging)

    @locked
    def branch(self, org: OrgRecord, database: str, name: str) -> Branch:
        return self.find_branch(org, database, name).settle(self.now())

    @locked
    def create_branch(self, org: OrgRecord, database: str, body: BranchCreate, who: Principal) -> Branch:
        db = self.find_database(org, database)
        if body.name in db.branches:
            raise unprocessable(f"Name has already been taken: branch {body.name!r} exists")
        parent = db.branches.get(body.parent_branch)
        if parent is None:
            raise unprocessable(f"Parent branch {body.parent_branch!r} does not exist")
        region = db.model.region
        if body.region is not None:
            region = org.regions.get(body.region)
            if region is None or not region.enabled:
                raise unprocessable(f"Region {body.region!r} is not available for this database")
        if body.restore_point is not None and db.model.kind != "postgresql":
            raise unprocessable("restore_point is only available for PostgreSQL databases")
        if body.restore_point is not None and (body.backup_id is not None or body.seed_data is not None):
            raise unprocessable("restore_point cannot be given with backup_id or seed_data")
        size = size_for(db.model.kind, body.cluster_size) if body.cluster_size is not None else None
        restored, backup = self.restore_source(db, parent, body)
        major = self.major_version_of(db, parent, body.major_version, backup is not None)
        if self.check_restore_point(parent, body.restore_point):
            p = parent.model
            restored = ResourceRef(id=p.id, name=p.name, created_at=p.created_at, updated_at=p.updated_at)
        record = self.add_branch(
            org,
            db,
            body.name,
            region,
            who.user,
            parent,
            cluster=size or parent.model.cluster_name,
            restored_from=restored,
        )
        record.model.major_version = major
        self.restored_into(backup, record)
        return record.model

    @locked
    def delete_branch(self, org: OrgRecord, database: str, name: str, who: Principal) -> None:
        branch = self.find_branch(org, database, name)
        if branch.model.deletion_protected:
            raise unprocessable(f"Branch {name!r} is deletion protected: turn deletion protection off before "
                                "deleting it")
        if branch.model.production:
            raise unprocessable(f"Branch {name!r} is a production branch and cannot be deleted")
        self.remove_branch(org.databases[database], name, who.user.actor(), stamp(self.now()))

    def remove_branch(self, db: DatabaseRecord, name: str, who, when: str) -> None:
        """Delete a branch; deploy requests from it say so (those not deployed yet are closed)."""
        branch = db.branches.pop(name)
        self.data_branch_removed(branch)
        self.branch_deleted(db, branch.model.id, who, when)

    # ------------------------------------------------------------ passwords

    def _password(self, org: OrgRecord, database: str, branch: str, pid: str) -> PasswordRecord:
        record = self.find_branch(org, database, branch).passwords.get(pid)
        if record is None:
            raise not_found("Password")
        return record

    @locked
    def passwords(self, org: OrgRecord, database: str, branch: str, paging: Paging, q: str | None) -> Window[Password]:
        records = self.find_branch(org, database, branch).passwords.values()
        if q:
            records = [r for r in records if q in r.model.name]
        page = window(records, paging)
        now = self.now()
        return Window([r.settle(now) for r in page.items], page.total)

    @locked
    def create_password(
        self, org: OrgRecord, database: str, branch: str, body: PasswordCreate, who: Principal
    ) -> Password:
        return self.add_password(self.find_branch(org, database, branch), who.user, body)

    @locked
    def password(self, org: OrgRecord, database: str, branch: str, pid: str) -> Password:
        return self._password(org, database, branch, pid).settle(self.now())

    @locked
    def update_password(self, org: OrgRecord, database: str, branch: str, pid: str, body: PasswordUpdate) -> Password:
        record = self._password(org, database, branch, pid)
        if body.name is not None:
            record.model.name = body.name
        if body.cidrs is not None:
            record.model.cidrs = body.cidrs
        return record.settle(self.now())

    @locked
    def delete_password(self, org: OrgRecord, database: str, branch: str, pid: str) -> None:
        self.data_password_deleted(self._password(org, database, branch, pid))
        del self.find_branch(org, database, branch).passwords[pid]

    @locked
    def renew_password(self, org: OrgRecord, database: str, branch: str, pid: str) -> Password:
        record = self._password(org, database, branch, pid)
        if not record.model.renewable:
            raise unprocessable("Password has no ttl and cannot be renewed")
        issued = self._issue_password(record)
        self.data_password_renewed(record, issued.plain_text)
        return issued

    # ------------------------------------------------------------ query-pattern reports

    def _report(self, org: OrgRecord, database: str, branch: str, rid: str) -> ReportRecord:
        record = self.find_branch(org, database, branch).reports.get(rid)
        if record is None:
            raise not_found("Query patterns report")
        return record

    @locked
    def reports(
        self,
        org: OrgRecord,
        database: str,
        branch: str,
        limit: int,
        starting_after: str | None,
        ending_before: str | None,
    ) -> CursorPage[QueryPatternReport]:
        """Newest first; starting_after / ending_before name a report id of the previous page."""
        if starting_after is not None and ending_before is not None:
            raise invalid_params("Give starting_after or ending_before, not both")
        records = self.find_branch(org, database, branch).reports
        ids = list(reversed(records))
        if starting_after is not None:
            start = self._cursor(ids, starting_after, "starting_after") + 1
            end = start + limit
        elif ending_before is not None:
            end = self._cursor(ids, ending_before, "ending_before")
            start = max(0, end - limit)
        else:
            start, end = 0, limit
        now = self.now()
        data = [records[rid].settle(now) for rid in ids[start:end]]
        return CursorPage[QueryPatternReport](
            has_next=end < len(ids),
            has_prev=start > 0,
            cursor_start=data[0].id if data else None,
            cursor_end=data[-1].id if data else None,
            data=data,
        )

    @staticmethod
    def _cursor(ids: list[str], cursor: str, name: str) -> int:
        try:
            return ids.index(cursor)
        except ValueError:
            raise invalid_params(f"{name}: no report with id {cursor!r} on this branch") from None

    @locked
    def create_report(self, org: OrgRecord, database: str, branch: str, who: Principal) -> QueryPatternReport:
        return self.add_report(self.find_branch(org, database, branch), who.user)

    @locked
    def report(self, org: OrgRecord, database: str, branch: str, rid: str) -> QueryPatternReport:
        return self._report(org, database, branch, rid).settle(self.now())

    @locked
    def delete_report(self, org: OrgRecord, database: str, branch: str, rid: str) -> None:
        self._report(org, database, branch, rid)
        del self.find_branch(org, database, branch).reports[rid]

    @locked
    def sign_download(self, org: OrgRecord, database: str, branch: str, rid: str) -> tuple[QueryPatternReport, str]:
        """A completed report and the query string of its signed download URL."""
        report = self.report(org, database, branch, rid)
        if report.state != "completed":
            raise unprocessable("The query patterns report is not completed yet")
        expires = int((self.now() + SIGNED_URL_LIFETIME).timestamp())
        return report, f"expires={expires}&signature={self._signature(rid, expires)}"

    def _signature(self, rid: str, expires: int) -> str:
        return hmac.new(self.signing_key, f"{rid}:{expires}".encode(), hashlib.sha256).hexdigest()

    @locked
    def signed_report(self, rid: str, expires: int, signature: str) -> bytes:
        """The content of a report, a gzip CSV, for a signed URL that is valid and not expired."""
        valid = hmac.compare_digest(self._signature(rid, expires), signature)
        if not valid or self.now().timestamp() > expires:
            raise ApiError(403, "forbidden", "Invalid or expired signature")
        for org in self.orgs.values():
            for db in org.databases.values():
                for branch in db.branches.values():
                    if rid in branch.reports:
                        rows = ["report,organization,database,branch,fingerprint,count,total_time_ms",
                                f"{rid},{org.ref.name},{db.model.name},{branch.model.name},"
                                '"select * from `users` where `id` = ?",42,12.5']
                        # mtime 0: the same report is the same bytes, whenever it is downloaded
                        return gzip.compress(("\r\n".join(rows) + "\r\n").encode(), mtime=0)
        raise not_found("Query patterns report")

    # ------------------------------------------------------------ teams and members

    def find_team(self, org: OrgRecord, slug: str, *, changing: bool = False) -> TeamRecord:
        team = org.teams.get(slug)
        if team is None:
            raise not_found("Team")
        if changing and team.model.managed:
            raise unprocessable(SSO_MANAGED)
        return team

    def _check_team_name(self, org: OrgRecord, name: str, team: TeamRecord | None = None) -> None:
        lowered = name.lower()
        if any(t is not team and t.model.name.lower() == lowered for t in org.teams.values()):
            raise unprocessable(f"Name has already been taken: team {name!r} exists")

    @locked
    def teams(self, org: OrgRecord, paging: Paging, q: str | None) -> Window[Team]:
        records = org.teams.values()
        if q:
            records = [t for t in records if q.lower() in t.model.name.lower()]
        page = window(records, paging)
        return Window([t.render() for t in page.items], page.total)

    @locked
    def team(self, org: OrgRecord, slug: str) -> Team:
        return self.find_team(org, slug).render()

    @locked
    def create_team(self, org: OrgRecord, body: TeamCreate, who: Principal) -> Team:
        self._check_team_name(org, body.name)
        return self.add_team(org, body.name, body.description, who.user).render()

    @locked
    def update_team(self, org: OrgRecord, slug: str, body: TeamUpdate) -> Team:
        team = self.find_team(org, slug, changing=True)
        if body.name is not None:
            self._check_team_name(org, body.name, team)
            team.model.name = team.model.display_name = body.name
        if body.description is not None:
            team.model.description = body.description
        team.model.updated_at = stamp(self.now())
        return team.render()

    @locked
    def delete_team(self, org: OrgRecord, slug: str) -> None:
        self.find_team(org, slug, changing=True)
        del org.teams[slug]

    @locked
    def team_members(self, org: OrgRecord, slug: str, paging: Paging) -> Window[TeamMember]:
        return window(self.find_team(org, slug).members.values(), paging)

    @locked
    def add_to_team(self, org: OrgRecord, slug: str, body: MemberAdd, who: Principal) -> TeamMember:
        team = self.find_team(org, slug, changing=True)
        membership = org.members.get(body.user_id)
        if membership is None:
            raise unprocessable(f"User {body.user_id!r} is not a member of the organization")
        if body.user_id in team.by_user:
            raise unprocessable(f"User {body.user_id!r} is already a member of the team")
        return self.add_team_member(team, membership.user, who.user)

    def _membership_id(self, team: TeamRecord, member_id: str) -> str:
        """Team member paths take a membership id or a user id."""
        mid = member_id if member_id in team.members else team.by_user.get(member_id)
        if mid is None:
            raise not_found("Team member")
        return mid

    @locked
    def team_member(self, org: OrgRecord, slug: str, member_id: str) -> TeamMember:
        team = self.find_team(org, slug)
        return team.members[self._membership_id(team, member_id)]

    @locked
    def remove_from_team(self, org: OrgRecord, slug: str, member_id: str) -> None:
        team = self.find_team(org, slug)
        mid = self._membership_id(team, member_id)
        if team.model.managed:
            raise unprocessable(SSO_MANAGED)
        del team.by_user[team.members.pop(mid).user.id]

