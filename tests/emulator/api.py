"""The resource API under /v1.

Handlers are ``async``: each runs on the event loop from the world call to the serialized
body without yielding, so what it answers is a consistent snapshot of the world.
"""

import math
from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import APIRouter, Body, Depends, Query, Request
from fastapi.responses import Response
from pydantic import BaseModel

from .models import (
    AppTokenRequest,
    BranchCreate,
    CursorPage,
    MemberAdd,
    Page,
    PasswordCreate,
    PasswordUpdate,
    TeamCreate,
    TeamUpdate,
)
from .records import ApiError, OAuthError, OrgRecord, Paging, Principal, Window, unauthorized, unprocessable
from .state import World

router = APIRouter(prefix="/v1")

ORG = "/organizations/{organization}"
DB = ORG + "/databases/{database}"
BRANCH = DB + "/branches/{branch}"
PASSWORD = BRANCH + "/passwords/{password_id}"
REPORT = BRANCH + "/query-patterns/{report_id}"
TEAM = ORG + "/teams/{team}"
APP = ORG + "/oauth-applications/{application_id}"


def base_url(request: Request) -> str:
    return str(request.base_url).rstrip("/")


# what each list_envelope setting keeps of a list (None: everything)
ENVELOPES = {
    "full": {Page: None, CursorPage: None},
    "no_totals": {Page: {"type", "per_page", "next_page", "next_page_url", "prev_page", "prev_page_url", "data"},
                  CursorPage: None},
    "bare": {Page: {"data"}, CursorPage: {"data"}},
}


def reply(request: Request, model: BaseModel, status: int = 200, headers: dict | None = None) -> Response:
    """The JSON answer of a model, in the shapes the emulator's settings ask for."""
    settings = world_of(request).settings
    keep = next((keep for kind, keep in ENVELOPES[settings.list_envelope].items() if isinstance(model, kind)), None)
    context = {"base": base_url(request), **settings.serialization()}
    body = model.model_dump_json(context=context, include=keep)
    return Response(body, status, headers=headers, media_type="application/json")


def no_content() -> Response:
    return Response(status_code=204)


def world_of(request: Request) -> World:
    return request.app.state.world


async def principal(request: Request) -> Principal:
    who = world_of(request).auth.authenticate(request.headers.get("authorization"))
    if who is None:
        raise unauthorized()
    return who


@dataclass
class Call:
    """An authenticated request inside an organization the credential may use."""

    request: Request
    world: World
    org: OrgRecord
    who: Principal

    def reply(self, model: BaseModel, status: int = 200, headers: dict | None = None) -> Response:
        return reply(self.request, model, status, headers)

    def page(self, paging: Paging, found: Window) -> Response:
        def url(page: int | None) -> str | None:
            return str(self.request.url.include_query_params(page=page)) if page else None

        next_page = paging.page + 1 if paging.page * paging.per_page < found.total else None
        prev_page = paging.page - 1 if paging.page > 1 else None
        envelope = Page[Any](
            current_page=paging.page,
            per_page=paging.per_page,
            next_page=next_page,
            next_page_url=url(next_page),
            prev_page=prev_page,
            prev_page_url=url(prev_page),
            total_count=found.total,
            total_pages=math.ceil(found.total / paging.per_page),
            data=found.items,
        )
        return self.reply(envelope)


async def org_call(organization: str, request: Request, who: Annotated[Principal, Depends(principal)]) -> Call:
    world = world_of(request)
    return Call(request, world, world.organization(organization, who), who)


def paging(page: int = Query(1, ge=1), per_page: int = Query(25, ge=1, le=100)) -> Paging:
    return Paging(page, per_page)


OrgCall = Annotated[Call, Depends(org_call)]
Pages = Annotated[Paging, Depends(paging)]


@router.get("/user")
async def current_user(request: Request, who: Annotated[Principal, Depends(principal)]):
    return reply(request, who.user)


@router.get(ORG + "/regions")
async def organization_regions(call: OrgCall, pages: Pages):
    return call.page(pages, call.world.regions(call.org, pages))


@router.get(ORG + "/members")
async def organization_members(call: OrgCall, pages: Pages):
    return call.page(pages, call.world.org_members(call.org, pages))


@router.get(DB)
async def get_database(database: str, call: OrgCall):
    return call.reply(call.world.database(call.org, database))


@router.get(DB + "/regions")
async def database_regions(database: str, call: OrgCall, pages: Pages):
    return call.page(pages, call.world.regions(call.org, pages, database))


# ---------------------------------------------------------------- branches


@router.get(DB + "/branches")
async def list_branches(
    database: str, call: OrgCall, pages: Pages, q: str | None = None, production: bool | None = None
):
    return call.page(pages, call.world.branches(call.org, database, pages, q, production))


@router.post(DB + "/branches")
async def create_branch(database: str, body: BranchCreate, call: OrgCall):
    return call.reply(call.world.create_branch(call.org, database, body, call.who), 201)


@router.get(BRANCH)
async def get_branch(database: str, branch: str, call: OrgCall):
    return call.reply(call.world.branch(call.org, database, branch))


@router.delete(BRANCH)
async def delete_branch(database: str, branch: str, call: OrgCall):
    call.world.delete_branch(call.org, database, branch)
    return no_content()


# ---------------------------------------------------------------- passwords


@router.get(BRANCH + "/passwords")
async def list_passwords(database: str, branch: str, call: OrgCall, pages: Pages, q: str | None = None):
    return call.page(pages, call.world.passwords(call.org, database, branch, pages, q))


@router.post(BRANCH + "/passwords")
async def create_password(
    database: str, branch: str, call: OrgCall, body: Annotated[PasswordCreate | None, Body()] = None
):
    created = call.world.create_password(call.org, database, branch, body or PasswordCreate(), call.who)
    return call.reply(created, 201)


@router.get(PASSWORD)
async def get_password(database: str, branch: str, password_id: str, call: OrgCall):
    return call.reply(call.world.password(call.org, database, branch, password_id))


@router.patch(PASSWORD)
async def update_password(database: str, branch: str, password_id: str, body: PasswordUpdate, call: OrgCall):
    return call.reply(call.world.update_password(call.org, database, branch, password_id, body))


@router.delete(PASSWORD)
async def delete_password(database: str, branch: str, password_id: str, call: OrgCall):
    call.world.delete_password(call.org, database, branch, password_id)
    return no_content()


@router.post(PASSWORD + "/renew")
async def renew_password(database: str, branch: str, password_id: str, call: OrgCall):
    return call.reply(call.world.renew_password(call.org, database, branch, password_id))


# ---------------------------------------------------------------- query-pattern reports


@router.get(BRANCH + "/query-patterns")
async def list_reports(
    database: str,
    branch: str,
    call: OrgCall,
    limit: int = Query(25, ge=1, le=100),
    starting_after: str | None = None,
    ending_before: str | None = None,
):
    return call.reply(call.world.reports(call.org, database, branch, limit, starting_after, ending_before))


@router.post(BRANCH + "/query-patterns")
async def create_report(database: str, branch: str, call: OrgCall):
    return call.reply(call.world.create_report(call.org, database, branch, call.who), 201)


@router.get(REPORT)
async def get_report(database: str, branch: str, report_id: str, call: OrgCall):
    return call.reply(call.world.report(call.org, database, branch, report_id))


@router.delete(REPORT)
async def delete_report(database: str, branch: str, report_id: str, call: OrgCall):
    call.world.delete_report(call.org, database, branch, report_id)
    return no_content()


@router.get(REPORT + "/download")
async def download_report(database: str, branch: str, report_id: str, call: OrgCall):
    """302 to a signed URL on the other name of this machine (localhost <-> 127.0.0.1), with the
    report as its body (the published OpenAPI declares the report record for the 302)."""
    report, query = call.world.sign_download(call.org, database, branch, report_id)
    url = call.request.url
    other = "127.0.0.1" if url.hostname == "localhost" else "localhost"
    netloc = f"{other}:{url.port}" if url.port else other
    location = f"{url.scheme}://{netloc}/_emulator/signed/{report_id}?{query}"
    return call.reply(report, 302, headers={"location": location})


# ---------------------------------------------------------------- teams and members


@router.get(ORG + "/teams")
async def list_teams(call: OrgCall, pages: Pages, q: str | None = None):
    return call.page(pages, call.world.teams(call.org, pages, q))


@router.post(ORG + "/teams")
async def create_team(body: TeamCreate, call: OrgCall):
    return call.reply(call.world.create_team(call.org, body, call.who))


@router.get(TEAM)
async def get_team(team: str, call: OrgCall):
    return call.reply(call.world.team(call.org, team))


@router.patch(TEAM)
async def update_team(team: str, body: TeamUpdate, call: OrgCall):
    return call.reply(call.world.update_team(call.org, team, body))


@router.delete(TEAM)
async def delete_team(team: str, call: OrgCall):
    call.world.delete_team(call.org, team)
    return no_content()


@router.get(TEAM + "/members")
async def list_team_members(team: str, call: OrgCall, pages: Pages):
    return call.page(pages, call.world.team_members(call.org, team, pages))


@router.post(TEAM + "/members")
async def add_team_member(team: str, body: MemberAdd, call: OrgCall):
    return call.reply(call.world.add_to_team(call.org, team, body, call.who))


@router.get(TEAM + "/members/{member_id}")
async def get_team_member(team: str, member_id: str, call: OrgCall):
    return call.reply(call.world.team_member(call.org, team, member_id))


@router.delete(TEAM + "/members/{member_id}")
async def remove_team_member(team: str, member_id: str, call: OrgCall):
    call.world.remove_from_team(call.org, team, member_id)
    return no_content()


# ---------------------------------------------------------------- OAuth application tokens


@router.get(APP + "/tokens")
async def list_app_tokens(application_id: str, call: OrgCall, pages: Pages):
    return call.page(pages, call.world.auth.app_tokens(call.org, application_id, pages))


@router.get(APP + "/tokens/{token_id}")
async def get_app_token(application_id: str, token_id: str, call: OrgCall):
    return call.reply(call.world.auth.app_token(call.org, application_id, token_id))


@router.delete(APP + "/tokens/{token_id}")
async def delete_app_token(application_id: str, token_id: str, call: OrgCall):
    call.world.auth.revoke_token(call.org, application_id, token_id)
    return no_content()


@router.post(APP + "/token")
async def create_app_token(application_id: str, body: AppTokenRequest, call: OrgCall):
    """Deprecated (spec 4.3): the grants of POST /oauth/token with a JSON body; a client that is
    not this application answers 403, an invalid grant 422."""
    call.world.auth.check_app(call.org, application_id)
    try:
        grant = call.world.auth.exchange(
            body.client_id,
            body.client_secret,
            body.grant_type,
            code=body.code,
            redirect_uri=body.redirect_uri,
            refresh_token=body.refresh_token,
            app_id=application_id,
        )
    except OAuthError as exc:
        if exc.error == "invalid_client":
            raise ApiError(403, "forbidden", exc.description) from None
        raise unprocessable(exc.description) from None
    return call.reply(call.world.auth.token_record(grant, reveal=True))
