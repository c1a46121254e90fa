"""The OAuth 2.0 authorization server at the root: the token endpoint and token info, over the authority that
issues and checks credentials (world/oauth.py). Client credentials travel in the form body; errors follow RFC 6749.
"""

from urllib.parse import parse_qsl

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from ..world.models import TokenGrant
from ..world.records import OAuthError

router = APIRouter(prefix="/oauth")

NO_STORE = {"Cache-Control": "no-store", "Pragma": "no-cache"}
REQUIRED = {
    "authorization_code": ("code", "redirect_uri", "client_id", "client_secret"),
    "refresh_token": ("refresh_token", "client_id", "client_secret"),
}


def oauth_error_response(exc: OAuthError) -> JSONResponse:
    bearer_required = exc.status == 401 and exc.error != "invalid_client"
    headers = {**NO_STORE, "WWW-Authenticate": "Bearer"} if bearer_required else NO_STORE
    return JSONResponse({"error": exc.error, "error_description": exc.description}, exc.status, headers=headers)


def parse_form(request: Request, body: bytes) -> dict[str, str]:
    if request.headers.get("content-type", "").split(";")[0].strip() != "application/x-www-form-urlencoded":
        raise OAuthError(400, "invalid_request", "The token endpoint takes an application/x-www-form-urlencoded body")
    form: dict[str, str] = {}
    for key, value in parse_qsl(body.decode("utf-8", "replace"), keep_blank_values=True):
        if key in form:
            raise OAuthError(400, "invalid_request", f"Parameter {key} is repeated")
        form[key] = value
    return form


@router.post("/token")
async def token(request: Request):
    form = parse_form(request, await request.body())
    grant_type = form.get("grant_type")
    if not grant_type:
        raise OAuthError(400, "invalid_request", "Missing required parameter: grant_type")
    if grant_type not in REQUIRED:
        raise OAuthError(400, "unsupported_grant_type", f"grant_type {grant_type!r} is not supported")
    missing = [name for name in REQUIRED[grant_type] if not form.get(name)]
    if missing:
        raise OAuthError(400, "invalid_request", f"Missing required parameter(s): {', '.join(missing)}")
    grant = request.app.state.world.auth.exchange(
        form["client_id"],
        form["client_secret"],
        grant_type,
        code=form.get("code"),
        redirect_uri=form.get("redirect_uri"),
        refresh_token=form.get("refresh_token"),
    )
    body = TokenGrant(
        access_token=grant.access_token,
        expires_in=round((grant.expires - grant.issued).total_seconds()),
        refresh_token=grant.refresh_token,
        scope=grant.scope,
    )
    return JSONResponse(body.model_dump(), headers=NO_STORE)


@router.get("/token/info")
async def token_info(request: Request):
    scheme, _, access_token = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not access_token.strip():
        raise OAuthError(401, "invalid_request", "An Authorization: Bearer <access token> header is required")
    info = request.app.state.world.auth.token_info(access_token.strip())
    return JSONResponse(info.model_dump() if info else {"active": False}, headers=NO_STORE)
