"""Service tokens of an organization with their accesses and grants, and the organization's members
(roles, identity-provider-managed users, the last administrator). World methods, mixed into state.World.

Accesses are recorded, not enforced: a token may call every endpoint of its organization.
"""

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr

from .models import OrganizationMember, Record, ResourceRef, User
from .records import (
    OrgRecord,
    Paging,
    Principal,
    ServiceToken,
    Window,
    invalid_params,
    locked,
    not_found,
    stamp,
    unprocessable,
    window,
)

# The platform's service-token accesses (its API reference lists, per endpoint, the accesses that allow it).
ORGANIZATION_ACCESSES = {
    "create_databases": "Create databases (and get full access to the databases it creates)",
    "read_databases": "List the databases of the organization",
    "delete_databases": "Delete any database of the organization",
    "read_organization": "Read the organization",
    "write_organization": "Change the organization's settings",
    "read_members": "List the organization's members",
    "write_members": "Change the organization's members",
    "read_invoices": "Read the organization's invoices",
    "read_audit_logs": "Read the organization's audit log",
    "read_service_tokens": "List service tokens and their accesses",
    "write_service_tokens": "Create service tokens and change their accesses",
    "delete_service_tokens": "Delete service tokens",
    "read_oauth_applications": "Read OAuth applications",
    "write_oauth_applications": "Change OAuth applications",
    "delete_oauth_applications": "Delete OAuth applications",
    "read_oauth_tokens": "Read the tokens of OAuth applications",
    "delete_oauth_tokens": "Revoke the tokens of OAuth applications",
}
DATABASE_ACCESSES = {
    "read_database": "Read the database",
    "write_database": "Change the database's settings",
    "delete_database": "Delete the database",
    "read_branch": "Read branches",
    "create_branch": "Create branches",
    "delete_branch": "Delete development branches",
    "delete_production_branch": "Delete production branches",
    "promote_branches": "Promote branches to production",
    "demote_branches": "Demote production branches",
    "connect_branch": "Create passwords for development branches",
    "connect_production_branch": "Create passwords for production branches",
    "connect_production_read_only_branch": "Create read-only passwords for production branches",
    "manage_passwords": "Manage passwords",
    "delete_branch_password": "Delete passwords of development branches",
    "delete_production_branch_password": "Delete passwords of production branches",
    "delete_production_read_only_branch_password": "Delete read-only passwords of production branches",
    "read_deploy_request": "Read deploy requests",
    "create_deploy_request": "Create deploy requests",
    "approve_deploy_request": "Approve deploy requests",
    "deploy_deploy_request": "Deploy deploy requests",
    "read_comment": "Read deploy request comments",
    "create_comment": "Comment on deploy requests",
    "create_backup": "Create backups",
    "read_backups": "Read backups",
    "write_backups": "Change backups and backup policies",
    "delete_backups": "Delete backups of development branches",
    "delete_production_branch_backups": "Delete backups of production branches",
    "restore_backup": "Restore backups into development branches",
    "restore_production_branch_backup": "Restore backups of production branches",
    "write_branch_vschema": "Change the VSchema of development branches",
    "write_production_branch_vschema": "Change the VSchema of production branches",
    "read_schema_recommendations": "Read schema recommendations",
    "close_schema_recommendations": "Close schema recommendations",
    "read_webhooks": "Read webhooks",
    "write_webhooks": "Create and change webhooks",
    "delete_webhooks": "Delete webhooks",
}
ACCESSES = {**ORGANIZATION_ACCESSES, **DATABASE_ACCESSES}
TOKEN_AVATAR = "https://app.planetscale.localhost/images/service-token.png"


# ---------------------------------------------------------------- shapes


class AccessResource(ResourceRef):
    type: str  # Organization or Database (the Go client's ServiceTokenResource)


class ServiceTokenAccessRecord(Record):
    """A ServiceTokenAccess of the OpenAPI, with the ``type`` keys of the Go client's access shape."""

    record_type: ClassVar[str] = "ServiceTokenAccess"

    id: str
    access: str
    description: str
    resource_name: str
    resource_id: str
    resource_type: Literal["Organization", "Database"]
    resource: AccessResource


class ServiceTokenRecord(Record):
    record_type: ClassVar[str] = "ServiceToken"

    id: str
    name: str | None
    display_name: str
    token: str | None = Field(default=None, exclude_if=lambda value: value is None)  # the create answer only
    avatar_url: str
    created_at: str
    updated_at: str
    expires_at: str | None
    last_used_at: str | None
    actor_id: str | None
    actor_display_name: str | None
    actor_type: str | None
    service_token_accesses: list[ServiceTokenAccessRecord]


class GrantAccess(BaseModel):
    access: str
    description: str


class TokenGrant(BaseModel):
    id: str
    resource_name: str
    resource_type: str
    resource_id: str
    accesses: list[GrantAccess]


class DataList(BaseModel):
    """{"data": [...]}: the answers of the access and grants endpoints."""

    data: list


class ServiceTokenCreate(BaseModel):
    model_config = ConfigDict(extra="ignore")

    name: StrictStr | None = Field(None, max_length=255)
    ttl: StrictInt | None = Field(None, ge=0, description="seconds; 0 or absent: never expires")


class AccessChange(BaseModel):
    model_config = ConfigDict(extra="ignore")

    database: StrictStr | None = None
    access: list[StrictStr] = Field(min_length=1)


class MemberUpdate(BaseModel):
    model_config = ConfigDict(extra="ignore")

    role: Literal["member", "admin"]


@dataclass
class AccessRecord:
    id: str
    access: str
    resource_type: str  # Organization or Database
    resource: ResourceRef

    def render(self) -> ServiceTokenAccessRecord:
        ref = self.resource
        return ServiceTokenAccessRecord(
            id=self.id, access=self.access, description=ACCESSES[self.access], resource_name=ref.name,
            resource_id=ref.id, resource_type=self.resource_type,
            resource=AccessResource(**ref.model_dump(), type=self.resource_type))


def render_token(token: ServiceToken, secret: bool = False) -> ServiceTokenRecord:
    created = stamp(token.created) if token.created else token.user.created_at
    return ServiceTokenRecord(
        id=token.id,
        name=token.name,
        display_name=token.name or token.id,
        token=token.secret if secret else None,
        avatar_url=TOKEN_AVATAR,
        created_at=created,
        updated_at=created,
        expires_at=stamp(token.expires) if token.expires else None,
        last_used_at=stamp(token.last_used) if token.last_used else None,
        actor_id=token.user.id,
        actor_display_name=token.user.display_name,
        actor_type="User",
        service_token_accesses=[access.render() for access in token.accesses],
    )


class Access:
    """World methods of service tokens and organization members (self.lock, self.auth, self.new_id()...)."""

    # ------------------------------------------------------------ service tokens

    def _org_tokens(self, org: OrgRecord) -> list[ServiceToken]:
        return [t for t in self.auth.service_tokens.values() if t.organization == org.ref.name]

    def find_token(self, org: OrgRecord, token_id: str) -> ServiceToken:
        token = self.auth.service_tokens.get(token_id)
        if token is None or token.organization != org.ref.name:
            raise not_found("Service token")
        return token

    @locked
    def service_tokens(self, org: OrgRecord, paging: Paging) -> Window[ServiceTokenRecord]:
        page = window(self._org_tokens(org), paging)
        return Window([render_token(t) for t in page.items], page.total)

    @locked
    def service_token(self, org: OrgRecord, token_id: str) -> ServiceTokenRecord:
        return render_token(self.find_token(org, token_id))

    @locked
    def add_org_token(self, org: OrgRecord, user: User, name: str | None, ttl: int | None,
                      created: datetime | None = None) -> ServiceToken:
        token = self.auth.add_service_token(user)
        token.organization, token.name = org.ref.name, name
        token.created = created or self.now()
        token.expires = token.created + timedelta(seconds=ttl) if ttl else None
        return token

    @locked
    def create_service_token(self, org: OrgRecord, body: ServiceTokenCreate, who: Principal) -> ServiceTokenRecord:
        """The new token, with its secret: the only answer that carries it."""
        return render_token(self.add_org_token(org, who.user, body.name, body.ttl), secret=True)

    @locked
    def delete_service_token(self, org: OrgRecord, token_id: str) -> None:
        self.find_token(org, token_id)
        del self.auth.service_tokens[token_id]

    def _access_target(self, org: OrgRecord, body: AccessChange) -> tuple[str, ResourceRef]:
        unknown = sorted({a for a in body.access if a not in ACCESSES})
        if unknown:
            raise unprocessable(f"Unknown access {', '.join(unknown)}: valid accesses are "
                                f"{', '.join(sorted(ACCESSES))}")
        if body.database is None:
            return "Organization", org.ref
        org_level = sorted({a for a in body.access if a in ORGANIZATION_ACCESSES})
        if org_level:
            raise unprocessable(f"{', '.join(org_level)} can only be granted on the organization: leave out "
                                "database")
        db = org.databases.get(body.database)
        if db is None:
            raise unprocessable(f"Database {body.database!r} does not exist in organization {org.ref.name!r}")
        m = db.model
        return "Database", ResourceRef(id=m.id, name=m.name, created_at=m.created_at, updated_at=m.updated_at)

    @locked
    def token_accesses(self, org: OrgRecord, token_id: str) -> DataList:
        return DataList(data=[a.render() for a in self.find_token(org, token_id).accesses])

    @locked
    def add_token_accesses(self, org: OrgRecord, token_id: str, body: AccessChange) -> DataList:
        """Grant accesses on a database or the organization; granting one the token has changes nothing. Answers
        the token's accesses on that resource."""
        token = self.find_token(org, token_id)
        kind, ref = self._access_target(org, body)
        return DataList(data=[a.render() for a in self.grant(token, kind, ref, body.access)])

    def grant(self, token: ServiceToken, kind: str, ref: ResourceRef, names) -> list[AccessRecord]:
        for name in dict.fromkeys(names):
            if not any(a.access == name and a.resource.id == ref.id for a in token.accesses):
                token.accesses.append(AccessRecord(self.new_id(), name, kind, ref))
        return [a for a in token.accesses if a.resource.id == ref.id]

    @locked
    def remove_token_accesses(self, org: OrgRecord, token_id: str, body: AccessChange) -> None:
        """Revoke accesses on a database or the organization; revoking one the token lacks changes nothing."""
        token = self.find_token(org, token_id)
        _, ref = self._access_target(org, body)
        names = set(body.access)
        token.accesses = [a for a in token.accesses if not (a.resource.id == ref.id and a.access in names)]

    @locked
    def token_grants(self, org: OrgRecord, token_id: str) -> DataList:
        """The token's accesses grouped by resource, organization first."""
        grants: dict[str, TokenGrant] = {}
        for access in self.find_token(org, token_id).accesses:
            ref = access.resource
            grant = grants.setdefault(ref.id, TokenGrant(id=ref.id, resource_name=ref.name,
                                                         resource_type=access.resource_type, resource_id=ref.id,
                                                         accesses=[]))
            grant.accesses.append(GrantAccess(access=access.access, description=ACCESSES[access.access]))
        return DataList(data=sorted(grants.values(), key=lambda g: (g.resource_type != "Organization",
                                                                    g.resource_name)))

    # ------------------------------------------------------------ members

    @locked
    def members(self, org: OrgRecord, paging: Paging, q: str | None = None) -> Window[OrganizationMember]:
        found = list(org.members.values())
        if q:
            needle = q.lower()
            found = [m for m in found if needle in m.user.name.lower() or needle in m.user.email.lower()]
        return window(found, paging)

    def find_member(self, org: OrgRecord, member_id: str) -> OrganizationMember:
        """Member paths take the user id (as the OpenAPI says) or the membership id."""
        member = org.members.get(member_id)
        if member is None:
            member = next((m for m in org.members.values() if m.id == member_id), None)
        if member is None:
            raise not_found("Organization member")
        return member

    @locked
    def member(self, org: OrgRecord, member_id: str) -> OrganizationMember:
        return self.find_member(org, member_id)

    def _last_admin(self, org: OrgRecord, member: OrganizationMember) -> bool:
        return member.role == "admin" and sum(m.role == "admin" for m in org.members.values()) == 1

    @locked
    def update_member(self, org: OrgRecord, member_id: str, body: MemberUpdate, who: Principal) -> OrganizationMember:
        member = self.find_member(org, member_id)
        if member.role == body.role:
            return member
        if member.user.id == who.user.id:
            raise unprocessable("You cannot change your own role: ask another administrator")
        if member.user.managed or member.user.directory_managed:
            raise unprocessable(f"The role of {member.user.email} is managed by the organization's identity "
                                "provider: change it there")
        if self._last_admin(org, member):
            raise unprocessable(f"{member.user.email} is the last administrator of the organization: make another "
                                "member an administrator first")
        member.role = body.role
        member.updated_at = stamp(self.now())
        return member

    @locked
    def remove_member(self, org: OrgRecord, member_id: str, who: Principal, delete_passwords: bool,
                      delete_service_tokens: bool) -> None:
        member = self.find_member(org, member_id)
        user = member.user
        if self._last_admin(org, member):
            raise unprocessable(f"{user.email} is the last administrator of the organization and cannot be removed")
        if user.directory_managed:
            raise unprocessable(f"{user.email} is managed by the organization's identity provider: remove them "
                                "there")
        if user.id == who.user.id and (delete_passwords or delete_service_tokens):
            raise invalid_params("delete_passwords and delete_service_tokens are only available when removing "
                                 "another member")
        del org.members[user.id]
        for team in org.teams.values():
            membership = team.by_user.pop(user.id, None)
            if membership is not None:
                team.members.pop(membership, None)
        if delete_passwords:
            for db in org.databases.values():
                for branch in db.branches.values():
                    for pid in [p for p, r in branch.passwords.items() if r.model.actor.id == user.id]:
                        del branch.passwords[pid]
        if delete_service_tokens:
            for token in self._org_tokens(org):
                if token.user.id == user.id:
                    del self.auth.service_tokens[token.id]

