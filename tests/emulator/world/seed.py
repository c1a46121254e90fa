"""The seeded world, and bulk fixtures for tests and benchmarks (POST /_emulator/seed)."""

from datetime import timedelta
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from .models import PasswordCreate, Region
from .postgres import DEFAULT_MAJOR_VERSION, RoleCreate
from .records import Settings, unprocessable
from .seed_access import OrgMembersFixture, ServiceTokensFixture, WebhooksFixture, seed_members, seed_service_tokens, \
    seed_webhooks
from .state import World
from .upkeep import seed_upkeep

ORGANIZATION = "acme"
DATABASE = "app"
PG_DATABASE = "pgapp"
BRANCH = "main"
LARGE_TEAM_SIZE = 260
# the production branch's schema at start: one table, with a primary and a unique key (no lint error)
SEED_SCHEMA = [
    "CREATE TABLE `users` (`id` bigint unsigned NOT NULL AUTO_INCREMENT, `email` varchar(255) NOT NULL, "
    "`created_at` datetime(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6), PRIMARY KEY (`id`), "
    "UNIQUE KEY `index_users_on_email` (`email`))",
]
APP_SCOPES = "read_user read_organization write_organization read_databases write_databases"

# slug, provider, display name, location, enabled
REGIONS = [
    ("us-east", "AWS", "AWS us-east-1 (N. Virginia)", "Ashburn, Virginia", True),
    ("us-west", "AWS", "AWS us-west-2 (Oregon)", "Boardman, Oregon", True),
    ("eu-west", "AWS", "AWS eu-west-1 (Dublin)", "Dublin, Ireland", True),
    ("ap-northeast", "AWS", "AWS ap-northeast-1 (Tokyo)", "Tokyo, Japan", True),
    ("gcp-us-central1", "GCP", "GCP us-central1 (Council Bluffs)", "Council Bluffs, Iowa", False),
]


def build_world(settings: Settings) -> World:
    world = World(settings)
    with world.lock:
        _seed(world)
        world.data_seeded = True  # from now on a change makes the world live on the data plane (dataplane/servers.py)
    return world


def _seed(world: World) -> None:
    now = world.now()
    org = world.add_org(ORGANIZATION, created=now - timedelta(days=400))
    for index, (slug, provider, display_name, location, enabled) in enumerate(REGIONS):
        org.regions[slug] = Region(
            id=world.new_id(),
            provider=provider,
            enabled=enabled,
            display_name=display_name,
            location=location,
            public_ip_addresses=[f"198.51.100.{index * 4 + n}" for n in (1, 2, 3)],
            slug=slug,
            current_default=index == 0,
        )
    admin = world.add_user("Emulator Admin", "admin@acme.test", org, role="admin")
    outsider = world.add_user("Outside Contractor", "contractor@elsewhere.test", None)
    world.default_user = admin
    db = world.add_database(org, DATABASE, org.regions["us-east"], created=now - timedelta(days=300))
    main = world.add_branch(
        org,
        db,
        BRANCH,
        db.model.region,
        admin,
        production=True,
        cluster="PS_40",
        created=now - timedelta(days=300),
        ready=True,
    )
    main.template = world.data_template("seed", SEED_SCHEMA)  # made on the server once per process

    regular = world.add_team(org, "Engineering", "Application engineers", admin, databases=(db,))
    for n in (1, 2):
        world.add_team_member(regular, world.add_user(f"Engineer {n}", f"engineer{n}@acme.test", org), admin)
    world.add_team_member(regular, admin, admin)
    sso = world.add_team(org, "SSO Admins", "Synchronized from the identity provider", admin, managed=True)
    for n in (1, 2):
        world.add_team_member(sso, world.add_user(f"Directory User {n}", f"directory{n}@acme.test", org), admin)
    large = world.add_team(org, "Everyone", "Every person in the company", admin)
    for n in range(1, LARGE_TEAM_SIZE + 1):
        world.add_team_member(large, world.add_user(f"Employee {n}", f"employee{n}@acme.test", org), admin)
    spare = [world.add_user(f"Member {n}", f"member{n}@acme.test", org) for n in range(1, 11)]

    token = world.auth.add_service_token(admin)
    forbidden = world.auth.add_service_token(outsider)
    app = world.auth.add_app(org, "Emulator CLI", "http://127.0.0.1:8976/oauth/callback", APP_SCOPES)
    # last, so that the ids drawn before stay what they were before backups existed
    policy = world.add_required_policies(db)
    backups = [world.add_backup(main, None, f"main-{hours}h-ago", now - timedelta(hours=hours), policy=policy,
                                retention_hours=48).model.id for hours in (36, 24, 12)]
    # the seeded token is an organization token; the SSO team's users are managed by the identity provider
    token.organization, token.name, token.created = ORGANIZATION, "emulator-admin", now - timedelta(days=400)
    for user in (m.user for m in sso.members.values()):
        user.directory_managed = user.managed = user.sso = True
    idp = next(iter(sso.members.values())).user
    postgres = _seed_postgres(world, org, admin, now)
    read_only = world.add_read_only_region(org, db, "eu-west", admin)  # its id drawn from no generator
    world.description = {
        "organization": ORGANIZATION,
        "database": DATABASE,
        "branch": BRANCH,
        "regions": [slug for slug, *_ in REGIONS],
        "default_region": "us-east",
        "service_token": {"id": token.id, "token": token.secret},
        "forbidden_service_token": {"id": forbidden.id, "token": forbidden.secret},
        "oauth_application": {
            "id": app.id,
            "name": app.name,
            "organization": ORGANIZATION,
            "client_id": app.client_id,
            "client_secret": app.client_secret,
            "redirect_uri": app.redirect_uri,
            "scope": app.scopes,
        },
        "teams": {"regular": regular.model.slug, "sso_managed": sso.model.slug, "large": large.model.slug},
        "user": {"id": admin.id, "email": admin.email},
        "users": [{"id": u.id, "email": u.email} for u in spare],
        "backups": {"policy": policy.id, "main": backups},
        "idp_managed_member": {"id": idp.id, "email": idp.email},
        "postgres": postgres,
        "read_only_regions": {DATABASE: [read_only.region.slug]},
        **seed_upkeep(world, org, {"mysql": DATABASE, "postgresql": PG_DATABASE}),
    }


def _seed_postgres(world: World, org, admin, now) -> dict:
    """The PostgreSQL database pgapp: a ready production branch main and its default role (after everything
    else, so that the ids drawn before stay what they were)."""
    db = world.add_database(org, PG_DATABASE, org.regions["us-east"], created=now - timedelta(days=200))
    db.model.kind = "postgresql"
    main = world.add_branch(org, db, BRANCH, db.model.region, admin, production=True, cluster="PS_20_AWS_X86",
                            created=now - timedelta(days=200), ready=True)
    main.model.major_version = DEFAULT_MAJOR_VERSION
    role = world.add_role(main, admin, RoleCreate(inherited_roles=["postgres"]), default=True)
    return {"database": PG_DATABASE, "branch": BRANCH, "major_version": DEFAULT_MAJOR_VERSION,
            "default_role": {"id": role.id, "username": role.username, "password": role.password,
                             "access_host_url": role.access_host_url, "database_name": role.database_name}}


# ---------------------------------------------------------------- bulk fixtures

Count = Field(ge=1, le=20000)


class Fixture(BaseModel):
    model_config = ConfigDict(extra="forbid")


class TeamsFixture(Fixture):
    count: int = Count
    prefix: str = "team"


class PasswordsFixture(Fixture):
    database: str = DATABASE
    branch: str = BRANCH
    count: int = Count
    prefix: str = "password"
    role: Literal["reader", "writer", "admin", "readwriter"] = "reader"


class RolesFixture(Fixture):
    database: str = PG_DATABASE
    branch: str = BRANCH
    count: int = Count
    prefix: str = "role"


class MembersFixture(Fixture):
    team: str
    count: int = Count


class ReportsFixture(Fixture):
    database: str = DATABASE
    branch: str = BRANCH
    count: int = Count


class BranchesFixture(Fixture):
    database: str = DATABASE
    parent: str = BRANCH
    count: int = Count
    prefix: str = "branch"


class DatabasesFixture(Fixture):
    count: int = Field(ge=1, le=2000)
    prefix: str = "db"
    branches: int = Field(3, ge=1, le=50)  # main (production) and development branches dev-1, dev-2...


class SeedRequest(Fixture):
    """Bulk fixtures; seeded teams, databases, branches and reports are ready/completed at once."""

    databases: DatabasesFixture | None = None

    teams: TeamsFixture | None = None
    passwords: PasswordsFixture | None = None
    team_members: MembersFixture | None = None
    reports: ReportsFixture | None = None
    branches: BranchesFixture | None = None
    service_tokens: ServiceTokensFixture | None = None
    members: OrgMembersFixture | None = None
    webhooks: WebhooksFixture | None = None  # after databases, over every database of the organization
    roles: RolesFixture | None = None


def _free_names(prefix: str, count: int, taken) -> list[str]:
    names, n = [], 0
    while len(names) < count:
        n += 1
        if f"{prefix}-{n}" not in taken:
            names.append(f"{prefix}-{n}")
    return names


def seed_fixtures(world: World, request: SeedRequest) -> dict:
    """Create the requested fixtures in the seeded organization; answer their names or ids."""
    created: dict[str, list[str]] = {}
    with world.lock:
        org = world.orgs[ORGANIZATION]
        actor = world.default_user
        if request.teams:
            taken = {t.model.name for t in org.teams.values()} | set(org.teams)
            names = _free_names(request.teams.prefix, request.teams.count, taken)
            created["teams"] = [world.add_team(org, name, "", actor).model.slug for name in names]
        if request.databases:
            created["databases"] = _seed_databases(world, org, request.databases)
        if request.branches:
            spec = request.branches
            db = world.find_database(org, spec.database)
            parent = world.find_branch(org, spec.database, spec.parent)
            names = _free_names(spec.prefix, spec.count, db.branches)
            created["branches"] = [
                world.add_branch(org, db, name, parent.model.region, actor, parent, ready=True).model.name
                for name in names
            ]
        if request.passwords:
            spec = request.passwords
            branch = world.find_branch(org, spec.database, spec.branch)
            created["passwords"] = [
                world.add_password(branch, actor, PasswordCreate(name=f"{spec.prefix}-{n}", role=spec.role)).id
                for n in range(1, spec.count + 1)
            ]
        if request.roles:
            spec = request.roles
            branch = world.find_branch(org, spec.database, spec.branch)
            if branch.model.kind != "postgresql":
                raise unprocessable(f"Branch {spec.branch!r} of database {spec.database!r} is not a PostgreSQL branch")
            created["roles"] = [world.add_role(branch, actor, RoleCreate(name=f"{spec.prefix}-{n}")).id
                                for n in range(1, spec.count + 1)]
        if request.team_members:
            team = world.find_team(org, request.team_members.team)
            if team.model.managed:
                raise unprocessable("Cannot seed members into a team managed by single sign-on")
            first = len(world.users) + 1
            created["team_members"] = [
                world.add_team_member(team, world.add_user(f"Person {n}", f"person{n}@acme.test", org), actor).user.id
                for n in range(first, first + request.team_members.count)
            ]
        if request.reports:
            spec = request.reports
            branch = world.find_branch(org, spec.database, spec.branch)
            created["reports"] = [world.add_report(branch, actor, done=True).id for _ in range(spec.count)]
        if request.service_tokens:
            created["service_tokens"] = seed_service_tokens(world, org, request.service_tokens)
        if request.members:
            created["members"] = seed_members(world, org, request.members)
        if request.webhooks:
            created["webhooks"] = seed_webhooks(world, org, request.webhooks)
    return created


def _seed_databases(world: World, org, spec: DatabasesFixture) -> list[str]:
    """Ready databases <prefix>-<n> in turn in each enabled region, every fifth one PostgreSQL, each with a main
    production branch and development branches dev-1, dev-2..."""
    regions = [region for region in org.regions.values() if region.enabled]
    actor = world.default_user
    names = _free_names(spec.prefix, spec.count, org.databases)
    for n, name in enumerate(names):
        region = regions[n % len(regions)]
        db = world.add_database(org, name, region, world.now())
        db.model.kind = "postgresql" if n % 5 == 4 else "mysql"
        main = world.add_branch(org, db, BRANCH, region, actor, production=True, ready=True)
        for b in range(1, spec.branches):
            world.add_branch(org, db, f"dev-{b}", region, actor, main, ready=True)
        world.add_required_policies(db)
    return names
