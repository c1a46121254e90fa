"""Bulk fixtures of service tokens, organization members and webhooks (POST /_emulator/seed), for access reviews
of an organization with more than one page of each."""

from pydantic import BaseModel, ConfigDict, Field

from .records import OrgRecord, unprocessable
from .webhooks import EVENTS

# what seeded tokens get: the first one is organization-wide, the others work on one database
ORGANIZATION_WIDE = ["create_databases", "read_databases", "read_organization"]
DATABASE_ACCESSES = ["read_branch", "create_branch", "read_deploy_request", "create_deploy_request"]
PRODUCTION_ACCESSES = ["connect_production_branch", "deploy_deploy_request"]


class _Fixture(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ServiceTokensFixture(_Fixture):
    count: int = Field(ge=1, le=5000)
    prefix: str = "token"
    database: str = "app"  # where the database accesses are granted
    ttl: int = Field(30 * 86400, ge=1, description="seconds until the odd-numbered tokens expire")


class OrgMembersFixture(_Fixture):
    count: int = Field(ge=1, le=20000)
    prefix: str = "person"
    admins: int = Field(0, ge=0)  # the first ones are administrators
    directory_managed: int = Field(0, ge=0)  # the last ones are managed by the identity provider


class WebhooksFixture(_Fixture):
    count: int = Field(ge=1, le=10000)
    per_database: int = Field(3, ge=1, le=5)
    url: str = "https://hooks.example.invalid/{database}/{n}"  # {database} and {n} are filled in
    events: list[str] = ["deploy_request.opened", "deploy_request.schema_applied", "branch.ready"]


def seed_service_tokens(world, org: OrgRecord, spec: ServiceTokensFixture) -> list[str]:
    """Tokens <prefix>-<n> of the default user: token 1 has organization-wide accesses (create_databases...),
    the others database accesses on ``database`` (every third one production ones too); odd-numbered tokens expire
    after ``ttl`` seconds, even-numbered ones never."""
    db = world.find_database(org, spec.database)
    m = db.model
    ref = type(org.ref)(id=m.id, name=m.name, created_at=m.created_at, updated_at=m.updated_at)
    ids = []
    for n in range(1, spec.count + 1):
        token = world.add_org_token(org, world.default_user, f"{spec.prefix}-{n}", spec.ttl if n % 2 else None)
        if n == 1:
            world.grant(token, "Organization", org.ref, ORGANIZATION_WIDE)
        else:
            world.grant(token, "Database", ref, DATABASE_ACCESSES + (PRODUCTION_ACCESSES if n % 3 == 0 else []))
        ids.append(token.id)
    return ids


def seed_members(world, org: OrgRecord, spec: OrgMembersFixture) -> list[str]:
    """Organization members in no team: the first ``admins`` are administrators, the last ``directory_managed``
    are managed by the identity provider."""
    first = len(world.users) + 1
    ids = []
    for index, n in enumerate(range(first, first + spec.count)):
        role = "admin" if index < spec.admins else "member"
        user = world.add_user(f"{spec.prefix.title()} {n}", f"{spec.prefix}{n}@acme.test", org, role=role)
        if index >= spec.count - spec.directory_managed:
            user.directory_managed = user.managed = user.sso = True
        ids.append(user.id)
    return ids


def seed_webhooks(world, org: OrgRecord, spec: WebhooksFixture) -> list[str]:
    """Webhooks spread over the organization's databases in name order, at most ``per_database`` each (counting
    those they have)."""
    bad = [event for event in spec.events if event not in EVENTS]
    if bad:
        raise unprocessable(f"Unknown webhook events: {', '.join(bad)}")
    room = sum(max(0, spec.per_database - len(db.webhooks)) for db in org.databases.values())
    if room < spec.count:
        raise unprocessable(f"Only {room} of {spec.count} webhooks fit ({spec.per_database} per database): seed "
                            "more databases in the same call (\"databases\": {\"count\": N})")
    ids, n = [], 0
    for name in sorted(org.databases):
        db = org.databases[name]
        while len(db.webhooks) < spec.per_database and n < spec.count:
            n += 1
            ids.append(world.add_webhook(org, db, spec.url.format(database=name, n=n), spec.events).model.id)
    return ids
