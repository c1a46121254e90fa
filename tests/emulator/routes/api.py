"""The resource API under /v1.

Handlers are ``async``: each runs on the event loop from the world call to the serialized
body without yielding, so what it answers is a consistent snapshot of the world.
"""

import json
import math
from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import APIRouter, Body, Depends, Query, Request
from fastapi.responses import Response
from pydantic import BaseModel

from ..world.models import (
    AppTokenRequest,
    BranchCreate,
    BranchUpdate,
    CursorPage,
    DeployBody,
    DeployRequestCreate,
    DeployRequestUpdate,
    EnableBody,
    MemberAdd,
    Page,
    PasswordCreate,
    PasswordUpdate,
    ReviewCreate,
    SafeMigrationsUpdate,
    SchemaList,
    TeamCreate,
    TeamUpdate,
    ThrottlerUpdate,
)
from ..world.oauth import recorded_application, recorded_token
from ..world.records import ApiError, OAuthError, OrgRecord, Paging, Principal, Window, unauthorized, unprocessable
from ..world.state import World

router = APIRouter(prefix="/v1")

ORG = "/organizations/{organization}"
DB = ORG + "/databases/{database}"
BRANCH = DB + "/branches/{branch}"
PASSWORD = BRANCH + "/passwords/{password_id}"
REPORT = BRANCH + "/query-patterns/{report_id}"
TEAM = ORG + "/teams/{team}"
DEPLOY_REQUESTS = DB + "/deploy-requests"
DEPLOY_REQUEST = DEPLOY_REQUESTS + "/{number}"
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


# What the platform's recorded answers to a deploy request's close, deploy, cancel, complete-deploy and force-cutover
# carry (lean_write_answers): these keys, and of the deployment its type and state (a force cutover's also
# force_cutover_requested_at).
LEAN_WRITE_KEYS = ("type", "id", "number")


def write_answer(request: Request, model: BaseModel, *deployment_keys: str) -> Response:
    """A deploy request's answer to a write: whole, or only what the recorded answers carry (lean_write_answers):
    of the deployment its type, state and the deployment_keys."""
    settings = world_of(request).settings
    if not settings.lean_write_answers:
        return reply(request, model)
    context = {"base": base_url(request), **settings.serialization()}
    body = model.model_dump(mode="json", context=context)
    lean = {key: body[key] for key in LEAN_WRITE_KEYS if key in body}
    lean["deployment"] = {key: body["deployment"][key] for key in ("type", "state", *deployment_keys)
                          if key in body["deployment"]}
    return Response(json.dumps(lean), 200, media_type="application/json")


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


def paging(request: Request, page: int = Query(1, ge=1), per_page: int = Query(25, ge=1, le=100)) -> Paging:
    """The page asked for, no larger than the max_per_page setting (the platform's largest page is 100)."""
    return Paging(page, min(per_page, world_of(request).settings.max_per_page))


OrgCall = Annotated[Call, Depends(org_call)]
Pages = Annotated[Paging, Depends(paging)]


@router.get("/user")
async def current_user(request: Request, who: Annotated[Principal, Depends(principal)]):
    return reply(request, who.user)


@router.get("/regions")
async def public_regions(request: Request, pages: Pages):
    """The platform's public regions: no credentials needed (the traffic layer lets this path through without any).
    The published shape by default; the recorded one (recorded_regions_reports): with current_default, without
    public_ip_addresses."""
    world = world_of(request)
    found = world.public_regions(pages)
    recorded = world.settings.recorded_regions_reports
    left_out = {"public_ip_addresses"} if recorded else {"current_default", "mysql_supported", "postgresql_supported"}
    context = {"base": base_url(request), **world.settings.serialization()}
    items = [{key: value for key, value in region.model_dump(mode="json", context=context).items()
              if key not in left_out} for region in found.items]
    return Call(request, world, None, None).page(pages, Window(items, found.total))


@router.get(ORG + "/regions")
async def organization_regions(call: OrgCall, pages: Pages):
    return call.page(pages, call.world.regions(call.org, pages))


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
    call.world.delete_branch(call.org, database, branch, call.who)
    return no_content()


@router.patch(BRANCH)
async def update_branch(database: str, branch: str, body: BranchUpdate, call: OrgCall):
    return call.reply(call.world.update_branch(call.org, database, branch, body))


@router.post(BRANCH + "/promote")
async def promote_branch(database: str, branch: str, call: OrgCall):
    return call.reply(call.world.promote_branch(call.org, database, branch))


@router.post(BRANCH + "/demote")
async def demote_branch(database: str, branch: str, call: OrgCall):
    return call.reply(call.world.demote_branch(call.org, database, branch))


@router.post(BRANCH + "/safe-migrations")
async def enable_safe_migrations(database: str, branch: str, call: OrgCall):
    return call.reply(call.world.set_safe_migrations(call.org, database, branch, True))


@router.put(BRANCH + "/safe-migrations")
async def update_safe_migrations(database: str, branch: str, body: SafeMigrationsUpdate, call: OrgCall):
    return call.reply(call.world.set_safe_migrations(call.org, database, branch, body.safe_migrations))


@router.delete(BRANCH + "/safe-migrations")
async def disable_safe_migrations(database: str, branch: str, call: OrgCall):
    return call.reply(call.world.set_safe_migrations(call.org, database, branch, False))


@router.get(BRANCH + "/schema")
async def branch_schema(
    database: str, branch: str, call: OrgCall, keyspace: str | None = None, namespace: str | None = None
):
    return call.reply(SchemaList(data=call.world.branch_schema(call.org, database, branch, keyspace)))


@router.get(BRANCH + "/schema/lint")
async def branch_schema_lint(database: str, branch: str, call: OrgCall, pages: Pages):
    return call.page(pages, call.world.branch_lint(call.org, database, branch, pages))


# ---------------------------------------------------------------- deploy requests


@router.get(DEPLOY_REQUESTS)
async def list_deploy_requests(
    database: str,
    call: OrgCall,
    pages: Pages,
    state: str | None = None,
    branch: str | None = None,
    into_branch: str | None = None,
    deployed_at: str | None = None,
    running_at: str | None = None,
):
    found = call.world.deploy_requests(call.org, database, pages, state, branch, into_branch)
    return call.page(pages, found)


@router.post(DEPLOY_REQUESTS)
async def create_deploy_request(database: str, body: DeployRequestCreate, call: OrgCall):
    return call.reply(call.world.create_deploy_request(call.org, database, body, call.who), 201)


@router.get(DB + "/deploy-queue")
async def deploy_queue(database: str, call: OrgCall, pages: Pages):
    return call.page(pages, call.world.deploy_queue(call.org, database, pages))


@router.get(DEPLOY_REQUEST)
async def get_deploy_request(database: str, number: int, call: OrgCall):
    return call.reply(call.world.deploy_request(call.org, database, number))


@router.patch(DEPLOY_REQUEST)
async def close_deploy_request(database: str, number: int, body: DeployRequestUpdate, call: OrgCall):
    return write_answer(call.request, call.world.close_deploy_request(call.org, database, number, body, call.who))


@router.get(DEPLOY_REQUEST + "/deployment")
async def get_deployment(database: str, number: int, call: OrgCall):
    return call.reply(call.world.deployment(call.org, database, number))


@router.get(DEPLOY_REQUEST + "/operations")
async def list_deploy_operations(database: str, number: int, call: OrgCall, pages: Pages):
    return call.page(pages, call.world.deploy_operations(call.org, database, number, pages))


@router.post(DEPLOY_REQUEST + "/deploy")
async def queue_deploy_request(
    database: str, number: int, call: OrgCall, body: Annotated[DeployBody | None, Body()] = None
):
    return write_answer(call.request, call.world.deploy(call.org, database, number, body or DeployBody(), call.who))


@router.post(DEPLOY_REQUEST + "/apply-deploy")
async def apply_deploy(database: str, number: int, call: OrgCall):
    return call.reply(call.world.apply_deploy(call.org, database, number, call.who))


@router.post(DEPLOY_REQUEST + "/cancel")
async def cancel_deploy_request(database: str, number: int, call: OrgCall):
    return write_answer(call.request, call.world.cancel_deploy(call.org, database, number, call.who))


@router.post(DEPLOY_REQUEST + "/skip-revert")
async def skip_revert_period(database: str, number: int, call: OrgCall):
    return call.reply(call.world.skip_revert(call.org, database, number))


@router.post(DEPLOY_REQUEST + "/revert")
async def revert_deploy(database: str, number: int, call: OrgCall):
    return call.reply(call.world.revert(call.org, database, number, call.who))


@router.post(DEPLOY_REQUEST + "/complete-deploy")
async def complete_errored_deploy(database: str, number: int, call: OrgCall):
    return write_answer(call.request, call.world.complete_errored_deploy(call.org, database, number))


@router.post(DEPLOY_REQUEST + "/force-cutover")
async def force_cutover(database: str, number: int, call: OrgCall):
    return write_answer(call.request, call.world.force_cutover(call.org, database, number),
                        "force_cutover_requested_at")


@router.put(DEPLOY_REQUEST + "/auto-apply")
async def update_auto_apply(database: str, number: int, body: EnableBody, call: OrgCall):
    return call.reply(call.world.auto_apply(call.org, database, number, body.enable, call.who))


@router.put(DEPLOY_REQUEST + "/auto-delete-branch")
async def update_auto_delete_branch(database: str, number: int, body: EnableBody, call: OrgCall):
    return call.reply(call.world.auto_delete_branch(call.org, database, number, body.enable))


@router.get(DEPLOY_REQUEST + "/reviews")
async def list_reviews(database: str, number: int, call: OrgCall, pages: Pages):
    return call.page(pages, call.world.reviews(call.org, database, number, pages))


@router.post(DEPLOY_REQUEST + "/reviews")
async def review_deploy_request(
    database: str, number: int, call: OrgCall, body: Annotated[ReviewCreate | None, Body()] = None
):
    return call.reply(call.world.review(call.org, database, number, body or ReviewCreate(), call.who), 201)


@router.get(DEPLOY_REQUEST + "/throttler")
async def get_throttler(database: str, number: int, call: OrgCall):
    return call.reply(call.world.throttler(call.org, database, number))


@router.patch(DEPLOY_REQUEST + "/throttler")
async def update_throttler(database: str, number: int, body: ThrottlerUpdate, call: OrgCall):
    return call.reply(call.world.update_throttler(call.org, database, number, body))


@router.get(DEPLOY_REQUEST + "/storage-check")
async def storage_check(database: str, number: int, call: OrgCall):
    return call.reply(call.world.storage_check(call.org, database, number))


# ---------------------------------------------------------------- passwords


@router.get(BRANCH + "/passwords")
async def list_passwords(database: str, branch: str, call: OrgCall, pages: Pages, q: str | None = None):
    return call.page(pages, call.world.passwords(call.org, database, branch, pages, q))


@router.post(BRANCH + "/passwords")
async def create_password(
    database: str, branch: str, call: OrgCall, body: Annotated[PasswordCreate | None, Body()] = None
):
    created = call.world.create_password(call.org, database, branch, body or PasswordCreate(), call.who)
    answer = call.reply(created, 201)
    if not call.world.settings.lean_write_answers:
        return answer
    lean = json.loads(answer.body)  # the platform's recorded create answer (a read-only region's) has no username
    lean.pop("username", None)
    return Response(json.dumps(lean), 201, media_type="application/json")


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


# ---------------------------------------------------------------- OAuth applications and their tokens


def recorded_oauth(call: Call, found: BaseModel | Window, shape) -> Response:
    """A record or a page of OAuth applications or tokens as the platform's recorded answers have them
    (recorded_billing_oauth): each record in shape(), a list as a bare {"data": [...]}."""
    context = {"base": base_url(call.request), **call.world.settings.serialization()}
    if isinstance(found, Window):
        body = {"data": [shape(item.model_dump(mode="json", context=context)) for item in found.items]}
    else:
        body = shape(found.model_dump(mode="json", context=context))
    return Response(json.dumps(body), 200, media_type="application/json")


@router.get(ORG + "/oauth-applications")
async def list_oauth_applications(call: OrgCall, pages: Pages):
    found = call.world.auth.applications(call.org, pages)
    if call.world.settings.recorded_billing_oauth:
        return recorded_oauth(call, found, recorded_application)
    return call.page(pages, found)


@router.get(APP)
async def get_oauth_application(application_id: str, call: OrgCall):
    found = call.world.auth.application(call.org, application_id)
    if call.world.settings.recorded_billing_oauth:
        return recorded_oauth(call, found, recorded_application)
    return call.reply(found)


@router.get(APP + "/tokens")
async def list_app_tokens(application_id: str, call: OrgCall, pages: Pages):
    recorded = call.world.settings.recorded_billing_oauth
    found = call.world.auth.app_tokens(call.org, application_id, pages, reveal=recorded)
    return recorded_oauth(call, found, recorded_token) if recorded else call.page(pages, found)


@router.get(APP + "/tokens/{token_id}")
async def get_app_token(application_id: str, token_id: str, call: OrgCall):
    recorded = call.world.settings.recorded_billing_oauth
    found = call.world.auth.app_token(call.org, application_id, token_id, reveal=recorded)
    return recorded_oauth(call, found, recorded_token) if recorded else call.reply(found)


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
