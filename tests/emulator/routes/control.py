"""The control API under /_emulator/: world, the shell line of its variables, reset, request log, faults, settings, clock,
consent stand-in, bulk fixtures, DDL on a branch, database settings, the approval of a database's deletion
request, and the signed download URLs of
query-pattern reports."""

import shlex
from typing import Annotated

from fastapi import APIRouter, Body, Request
from fastapi.responses import PlainTextResponse, Response
from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..world.oauth import CODE_LIFETIME
from ..world.records import Settings, expand_lean, not_found, stamp
from ..world.seed import SeedRequest, build_world, seed_fixtures
from .api import base_url, world_of
from .traffic import FaultRules, Traffic

router = APIRouter(prefix="/_emulator")


class ClockAdvance(BaseModel):
    model_config = ConfigDict(extra="forbid")

    advance_seconds: float = Field(ge=0)


class DdlRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    statements: list[str] = Field(min_length=1)
    keyspace: str | None = None  # a keyspace of the branch (its own schema); none: the default keyspace


class DatabaseSettings(BaseModel):
    """Database settings the tests need before the database PATCH of the resource API exists."""

    model_config = ConfigDict(extra="forbid")

    require_approval_for_deploy: bool | None = None


class CodeRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    client_id: str
    redirect_uri: str
    scope: str | None = None
    user_id: str | None = None


def traffic_of(request: Request) -> Traffic:
    return request.app.state.traffic


def reset(app) -> None:
    """Back to the seeded world, the start-up settings, an empty log and no fault rules."""
    previous = getattr(app.state, "world", None)
    if previous is not None:
        previous.close()  # its webhook ticker and deliveries stop
    app.state.world = build_world(app.state.initial_settings.model_copy())
    app.state.traffic = Traffic()


@router.get("/health")
async def health():
    return {"status": "ok"}


@router.get("/world")
async def world(request: Request):
    base = base_url(request)
    world = world_of(request)
    world.serve_credentials()  # the seeded credentials it shows log in to the data plane from now on
    return {**world.description, **world.data_describe(), "api_url": f"{base}/v1", "auth_url": base}


@router.get("/env", response_class=PlainTextResponse)
async def env(request: Request):
    """One shell line that exports every PLANETSCALE_* variable a user sets for this emulator, its seeded service
    token's and OAuth application's credentials: eval "$(curl -s .../_emulator/env)"."""
    base = base_url(request)
    world = world_of(request).description
    app = world["oauth_application"]
    variables = dict(PLANETSCALE_API_URL=f"{base}/v1", PLANETSCALE_AUTH_URL=base, PLANETSCALE_ORG=world["organization"],
                     PLANETSCALE_SERVICE_TOKEN_ID=world["service_token"]["id"],
                     PLANETSCALE_SERVICE_TOKEN=world["service_token"]["token"],
                     PLANETSCALE_CLIENT_ID=app["client_id"], PLANETSCALE_CLIENT_SECRET=app["client_secret"])
    return "export %s\n" % " ".join("%s=%s" % (name, shlex.quote(value)) for name, value in variables.items())


@router.post("/reset")
async def reset_world(request: Request):
    reset(request.app)
    return {"status": "reset"}


@router.get("/requests")
async def requests(request: Request):
    return traffic_of(request).requests()


@router.delete("/requests", status_code=204)
async def clear_requests(request: Request):
    traffic_of(request).clear_requests()


@router.get("/connections")
async def connections(request: Request):
    return traffic_of(request).connections()


@router.get("/faults")
async def faults(request: Request):
    return {"rules": traffic_of(request).describe_rules()}


@router.post("/faults")
async def add_faults(request: Request, body: FaultRules):
    traffic_of(request).add_rules(body.rules)
    return {"rules": traffic_of(request).describe_rules()}


@router.delete("/faults", status_code=204)
async def clear_faults(request: Request):
    traffic_of(request).clear_rules()


@router.get("/settings")
async def settings(request: Request):
    return world_of(request).settings


@router.post("/settings")
async def change_settings(request: Request, changes: Annotated[dict, Body()]):
    world = world_of(request)
    try:
        updated = Settings.model_validate({**world.settings.model_dump(), **expand_lean(changes)})
    except ValidationError as exc:
        raise RequestValidationError(exc.errors()) from None
    with world.lock:
        world.settings = updated
    return updated


@router.get("/clock")
async def clock(request: Request):
    world = world_of(request)
    return {"now": stamp(world.now()), "offset_seconds": world.clock.offset.total_seconds()}


@router.post("/clock")
async def advance_clock(request: Request, body: ClockAdvance):
    world = world_of(request)
    with world.lock:
        world.clock.advance(body.advance_seconds)
        world.data_expire()  # expired credentials stop logging in
    return await clock(request)


@router.post("/oauth/authorization-codes")
async def authorization_code(request: Request, body: CodeRequest):
    code = world_of(request).auth.issue_code(body.client_id, body.redirect_uri, body.scope, body.user_id)
    return {"code": code, "expires_in": int(CODE_LIFETIME.total_seconds())}


@router.post("/seed")
async def seed(request: Request, body: SeedRequest):
    return seed_fixtures(world_of(request), body)


@router.post("/branches/{organization}/{database}/{branch}/ddl")
async def branch_ddl(request: Request, organization: str, database: str, branch: str, body: DdlRequest):
    """DDL on a branch, run on the server in its schema as a MySQL connection runs it: 422 for a statement the
    server refuses (its message)."""
    return world_of(request).apply_branch_ddl(organization, database, branch, body.statements, body.keyspace)


@router.post("/databases/{organization}/{database}")
async def database_settings(request: Request, organization: str, database: str, body: DatabaseSettings):
    world = world_of(request)
    with world.lock:
        org = world.orgs.get(organization)
        if org is None:
            raise not_found("Organization")
        model = world.find_database(org, database).model
        for key, value in body.model_dump(exclude_none=True).items():
            setattr(model, key, value)
        return {key: getattr(model, key) for key in DatabaseSettings.model_fields}


@router.post("/databases/{organization}/{database}/deletion-approval")
async def approve_deletion(request: Request, organization: str, database: str):
    """Another administrator requests the deletion too: the database with a pending deletion request goes."""
    return world_of(request).approve_deletion(organization, database)


@router.get("/signed/{report_id}")
async def signed_download(request: Request, report_id: str, expires: int, signature: str):
    """Stands for the storage host the platform redirects downloads to: the report as a gzip CSV, for the signature
    alone; a request that also carries an Authorization header is refused, as presigned storage refuses two ways of
    authenticating (S3's 400 InvalidArgument)."""
    if "authorization" in request.headers:
        return PlainTextResponse("Only one auth mechanism allowed; only the X-Amz-Algorithm query parameter, "
                                 "Signature query string parameter or the Authorization header should be specified",
                                 400)
    content = world_of(request).signed_report(report_id, expires, signature)
    return Response(content, media_type="application/gzip",
                    headers={"content-disposition": f'attachment; filename="query-patterns-{report_id}.csv.gz"'})
