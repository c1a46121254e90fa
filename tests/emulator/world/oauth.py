"""The OAuth 2.0 side: the authority that issues and checks credentials (its authorization server's routes,
the token endpoint and token info, are routes/oauth.py).

Service tokens are presented as "<id>:<token>"; access tokens as "Bearer <token>".
Authorization codes are single-use; refresh tokens rotate, and a refresh revokes the previous access token
at once.

The organization's OAuth applications are listed and read without their client secrets, each with the number of
tokens it holds; their tokens are listed, read and revoked. Under the ``recorded_billing_oauth`` setting both take
the shapes of the platform's recorded answers (recorded_application, recorded_token): the token records then still
carry the plain-text access and refresh tokens, as the platform's do.
"""

import hmac
import re
from datetime import datetime, timedelta
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from pydantic import BaseModel

from .models import (
    AccessName,
    BranchAccesses,
    BranchItem,
    DatabaseAccesses,
    DatabaseItem,
    OAuthAccessesByResource,
    OAuthToken,
    OrganizationAccesses,
    OrganizationItem,
    ResourceRef,
    ServiceTokenAccess,
    TokenInfo,
    User,
    UserAccesses,
    UserItem,
)
from .records import (
    AuthCode,
    Grant,
    OAuthApp,
    OAuthError,
    OrgRecord,
    Paging,
    Principal,
    ServiceToken,
    Window,
    invalid_params,
    locked,
    not_found,
    stamp,
    window,
)

if TYPE_CHECKING:
    from .state import World

USER_SCOPES = frozenset({"read_user", "write_user", "email", "profile", "openid"})
CODE_LIFETIME = timedelta(minutes=10)
# What the platform's recorded token records hold null (recorded_billing_oauth), beside their secrets.
RECORDED_TOKEN_NULLS = ("name", "expires_at", "actor_id", "service_token_accesses")
MILLISECONDS = re.compile(r"\.\d{3}Z$")


class OAuthApplication(BaseModel):
    """An OAuth application as GET .../oauth-applications answers it: never its client secret."""

    id: str
    name: str
    redirect_uri: str
    domain: str
    created_at: str
    updated_at: str
    scopes: str
    avatar: str
    client_id: str
    tokens: int
    dcr: bool = False
    single_org_authorization: bool = False
    requires_org_scope: bool = True
    scopes_by_resource: dict[str, list[dict]]
    all_scopes_by_resource: dict[str, list[dict]]


def _scope_kind(scope: str) -> tuple[str, str]:
    kind, _, access = scope.rpartition(":")
    return kind or ("user" if access in USER_SCOPES else "organization"), access


def _without_milliseconds(record: dict) -> dict:
    return {key: MILLISECONDS.sub("Z", value) if key.endswith("_at") and isinstance(value, str) else value
            for key, value in record.items()}


def recorded_application(record: dict) -> dict:
    """An application record as the platform's recorded answers have it: mcp_tool_groups, whole seconds."""
    return {**_without_milliseconds(record), "mcp_tool_groups": None}


def recorded_token(record: dict) -> dict:
    """A token record as the platform's recorded answers have it: null fields, only database accesses, whole
    seconds; the record keeps whatever secrets it was given."""
    return {**_without_milliseconds(record), **dict.fromkeys(RECORDED_TOKEN_NULLS),
            "oauth_accesses_by_resource": {"database": {}}}


class Authority:
    """Service tokens, OAuth applications, authorization codes and grants of one world."""

    def __init__(self, world: "World"):
        self.world = world
        self.lock = world.lock
        self.apps: dict[str, OAuthApp] = {}
        self.app_created: dict[str, datetime] = {}  # application id -> when it was registered
        self.service_tokens: dict[str, ServiceToken] = {}
        self.codes: dict[str, AuthCode] = {}
        self.grants: dict[str, Grant] = {}
        self._by_access: dict[str, Grant] = {}
        self._by_refresh: dict[str, Grant] = {}

    @locked
    def add_service_token(self, user: User) -> ServiceToken:
        token = ServiceToken(id=self.world.new_id(), secret=self.world.new_secret("pscale_tkn_"), user=user)
        self.service_tokens[token.id] = token
        return token

    @locked
    def add_app(self, org: OrgRecord, name: str, redirect_uri: str, scopes: str) -> OAuthApp:
        app = OAuthApp(
            id=self.world.new_id(),
            name=name,
            organization=org.ref.name,
            client_id=self.world.new_secret("pscale_app_", 24),
            client_secret=self.world.new_secret("pscale_app_secret_"),
            redirect_uri=redirect_uri,
            scopes=scopes,
        )
        self.apps[app.id] = app
        self.app_created[app.id] = self.world.now()
        return app

    @locked
    def authenticate(self, header: str | None) -> Principal | None:
        """The principal of an Authorization header value, or None if it is not valid."""
        if not header:
            return None
        scheme, _, value = header.partition(" ")
        if scheme.lower() == "bearer":
            grant = self._active_grant(value.strip())
            if grant is None:
                return None
            grant.last_used = self.world.now()
            return Principal("bearer", grant.user)
        token_id, _, secret = header.partition(":")
        token = self.service_tokens.get(token_id.strip())
        if token is None or not hmac.compare_digest(token.secret.encode(), secret.strip().encode()):
            return None
        now = self.world.now()
        if token.expires is not None and now >= token.expires:
            return None
        token.last_used = now
        return Principal("service_token", token.user)

    def _client(self, client_id: str, client_secret: str) -> OAuthApp:
        for app in self.apps.values():
            if app.client_id == client_id and hmac.compare_digest(app.client_secret.encode(), client_secret.encode()):
                return app
        raise OAuthError(401, "invalid_client", "Client authentication failed: unknown client or wrong secret")

    def _active_grant(self, access_token: str) -> Grant | None:
        grant = self._by_access.get(access_token)
        return grant if grant is not None and self.world.now() < grant.expires else None

    @locked
    def issue_code(self, client_id: str, redirect_uri: str, scope: str | None, user_id: str | None) -> str:
        """Stand-in for the consent screen: the user authorizes the application."""
        app = next((a for a in self.apps.values() if a.client_id == client_id), None)
        if app is None:
            raise invalid_params(f"client_id: unknown OAuth application {client_id!r}")
        if redirect_uri != app.redirect_uri:
            raise invalid_params("redirect_uri: not the redirect URI registered for the application")
        user = self.world.users.get(user_id) if user_id else self.world.default_user
        if user is None:
            raise invalid_params(f"user_id: unknown user {user_id!r}")
        code = self.world.new_secret("", 40)
        self.codes[code] = AuthCode(app, redirect_uri, scope or app.scopes, user, self.world.now() + CODE_LIFETIME)
        return code

    @locked
    def exchange(
        self,
        client_id: str,
        client_secret: str,
        grant_type: str,
        *,
        code: str | None = None,
        redirect_uri: str | None = None,
        refresh_token: str | None = None,
        app_id: str | None = None,
    ) -> Grant:
        """Run an authorization_code or refresh_token grant. app_id, when given, must be the client's."""
        app = self._client(client_id, client_secret)
        if app_id is not None and app.id != app_id:
            raise OAuthError(401, "invalid_client", "The client is not this OAuth application")
        if grant_type == "authorization_code":
            return self._redeem_code(app, code or "", redirect_uri or "")
        return self._refresh(app, refresh_token or "")

    def _redeem_code(self, app: OAuthApp, code: str, redirect_uri: str) -> Grant:
        auth = self.codes.get(code)
        if auth is None or auth.app is not app or self.world.now() >= auth.expires:
            raise OAuthError(400, "invalid_grant", "The authorization code is invalid, expired or already used")
        if auth.redirect_uri != redirect_uri:
            raise OAuthError(400, "invalid_grant", "redirect_uri does not match the authorization request")
        del self.codes[code]
        now = self.world.now()
        accesses, by_resource = self._accesses(app, auth.user, auth.scope)
        grant = Grant(
            id=self.world.new_id(),
            app=app,
            user=auth.user,
            scope=auth.scope,
            created=now,
            issued=now,
            expires=now,
            access_token="",
            refresh_token="",
            accesses=accesses,
            by_resource=by_resource,
        )
        self.grants[grant.id] = grant
        return self._issue_tokens(grant)

    def _refresh(self, app: OAuthApp, refresh_token: str) -> Grant:
        grant = self._by_refresh.get(refresh_token)
        if grant is None or grant.app is not app:
            raise OAuthError(400, "invalid_grant", "The refresh token is invalid, revoked or already used")
        return self._issue_tokens(grant)

    def _issue_tokens(self, grant: Grant) -> Grant:
        self._by_access.pop(grant.access_token, None)
        self._by_refresh.pop(grant.refresh_token, None)
        grant.issued = self.world.now()
        grant.expires = grant.issued + timedelta(seconds=self.world.settings.token_ttl)
        grant.access_token = self.world.new_secret("pscale_oauth_", 40)
        grant.refresh_token = self.world.new_secret("pscale_ref_", 40)
        self._by_access[grant.access_token] = grant
        self._by_refresh[grant.refresh_token] = grant
        return grant

    def _accesses(
        self, app: OAuthApp, user: User, scope: str
    ) -> tuple[list[ServiceTokenAccess], OAuthAccessesByResource]:
        """What a scope string grants: organization, database:*, branch:* and user scopes."""
        org = self.world.orgs[app.organization]
        org_name = org.ref.name
        by_resource = OAuthAccessesByResource(
            organization=OrganizationAccesses(
                organizations=[OrganizationItem(name=org_name, id=org.ref.id, url=f"/v1/organizations/{org_name}")]
            ),
            database=DatabaseAccesses(
                databases=[
                    DatabaseItem(name=d.model.name, id=d.model.id, organization=org_name, url=d.model.url)
                    for d in org.databases.values()
                ]
            ),
            branch=BranchAccesses(
                branches=[
                    BranchItem(
                        name=b.model.name, id=b.model.id, database=d.model.name, organization=org_name, url=b.model.url
                    )
                    for d in org.databases.values()
                    for b in d.branches.values()
                    if b.model.production
                ]
            ),
            user=UserAccesses(users=[UserItem(name=user.name, id=user.id)]),
        )
        resources = {
            "organization": ("Organization", org.ref),
            "user": (
                "User",
                ResourceRef(id=user.id, name=user.name, created_at=user.created_at, updated_at=user.updated_at),
            ),
        }
        accesses = []
        for item in scope.split():
            kind, access = _scope_kind(item)
            description = access.replace("_", " ").capitalize()
            getattr(by_resource, kind).accesses.append(AccessName(name=access, description=description))
            resource_type, resource = resources.get(kind, resources["organization"])
            accesses.append(
                ServiceTokenAccess(
                    id=self.world.new_id(),
                    access=access,
                    description=description,
                    resource_name=resource.name,
                    resource_id=resource.id,
                    resource_type=resource_type,
                    resource=resource,
                )
            )
        return accesses, by_resource

    @locked
    def token_info(self, access_token: str) -> TokenInfo | None:
        grant = self._active_grant(access_token)
        if grant is None:
            return None
        return TokenInfo(
            active=True,
            scope=grant.scope,
            client_id=grant.app.client_id,
            exp=int(grant.expires.timestamp()),
            iat=int(grant.issued.timestamp()),
            sub=grant.user.id,
        )

    @locked
    def token_record(self, grant: Grant, *, reveal: bool = False) -> OAuthToken:
        """The OAuth token record; the plain-text tokens only when ``reveal`` (right after a grant)."""
        return OAuthToken(
            id=grant.id,
            name=grant.app.name,
            display_name=f"{grant.app.name} ({grant.user.display_name})",
            token=grant.access_token if reveal else None,
            plain_text_refresh_token=grant.refresh_token if reveal else None,
            avatar_url=grant.user.avatar_url,
            created_at=stamp(grant.created),
            updated_at=stamp(grant.issued),
            expires_at=stamp(grant.expires),
            last_used_at=stamp(grant.last_used) if grant.last_used else None,
            actor_id=grant.user.id,
            actor_display_name=grant.user.display_name,
            actor_type="User",
            service_token_accesses=grant.accesses,
            oauth_accesses_by_resource=grant.by_resource,
        )

    def _app(self, org: OrgRecord, app_id: str) -> OAuthApp:
        app = self.apps.get(app_id)
        if app is None or app.organization != org.ref.name:
            raise not_found("OAuth application")
        return app

    def _grant(self, org: OrgRecord, app_id: str, token_id: str) -> Grant:
        grant = self.grants.get(token_id)
        if grant is None or grant.app is not self._app(org, app_id):
            raise not_found("OAuth token")
        return grant

    def _application_record(self, app: OAuthApp) -> OAuthApplication:
        created = stamp(self.app_created[app.id])
        by_resource: dict[str, list[dict]] = {}
        for scope in app.scopes.split():
            kind, access = _scope_kind(scope)
            by_resource.setdefault(kind, []).append(
                {"scope": access, "description": access.replace("_", " ").capitalize(), "admin": False})
        return OAuthApplication(
            id=app.id,
            name=app.name,
            redirect_uri=app.redirect_uri,
            domain=urlsplit(app.redirect_uri).hostname or "",
            created_at=created,
            updated_at=created,
            scopes=app.scopes,
            avatar=f"https://avatars.example.test/oauth-applications/{app.id}.png",
            client_id=app.client_id,
            tokens=sum(1 for grant in self.grants.values() if grant.app is app),
            scopes_by_resource=by_resource,
            all_scopes_by_resource={kind: [dict(entry, selected=True) for entry in entries]
                                    for kind, entries in by_resource.items()},
        )

    @locked
    def applications(self, org: OrgRecord, paging: Paging) -> Window[OAuthApplication]:
        page = window([app for app in self.apps.values() if app.organization == org.ref.name], paging)
        return Window([self._application_record(app) for app in page.items], page.total)

    @locked
    def application(self, org: OrgRecord, app_id: str) -> OAuthApplication:
        return self._application_record(self._app(org, app_id))

    @locked
    def app_tokens(self, org: OrgRecord, app_id: str, paging: Paging, *, reveal: bool = False) -> Window[OAuthToken]:
        """The application's tokens; with ``reveal`` their plain-text tokens too, as the platform's recorded reads."""
        app = self._app(org, app_id)
        page = window([g for g in self.grants.values() if g.app is app], paging)
        return Window([self.token_record(g, reveal=reveal) for g in page.items], page.total)

    @locked
    def app_token(self, org: OrgRecord, app_id: str, token_id: str, *, reveal: bool = False) -> OAuthToken:
        return self.token_record(self._grant(org, app_id, token_id), reveal=reveal)

    @locked
    def revoke_token(self, org: OrgRecord, app_id: str, token_id: str) -> None:
        grant = self._grant(org, app_id, token_id)
        del self.grants[grant.id], self._by_access[grant.access_token], self._by_refresh[grant.refresh_token]

    @locked
    def check_app(self, org: OrgRecord, app_id: str) -> None:
        self._app(org, app_id)
