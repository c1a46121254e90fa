"""The /v1 routes of service tokens (with the access and grants endpoints the published OpenAPI lacks),
organization members and webhooks (world/access.py, world/webhooks.py); the control API's delivery log."""

from typing import Annotated

from fastapi import APIRouter, Body, Request
from fastapi.responses import JSONResponse

from ..world.access import AccessChange, MemberUpdate, ServiceTokenCreate
from .api import DB, ORG, OrgCall, Pages, no_content, world_of
from ..world.webhooks import TestTooSoon, WebhookCreate, WebhookUpdate

router = APIRouter(prefix="/v1")
control = APIRouter(prefix="/_emulator")

TOKENS = ORG + "/service-tokens"
TOKEN = TOKENS + "/{token_id}"
MEMBER = ORG + "/members/{member_id}"
WEBHOOKS = DB + "/webhooks"
WEBHOOK = WEBHOOKS + "/{webhook_id}"


# ---------------------------------------------------------------- service tokens


@router.get(TOKENS)
async def list_service_tokens(call: OrgCall, pages: Pages):
    return call.page(pages, call.world.service_tokens(call.org, pages))


@router.post(TOKENS)
async def create_service_token(call: OrgCall, body: Annotated[ServiceTokenCreate | None, Body()] = None):
    """200 (not 201), as the platform answers; the only answer with ``token``."""
    return call.reply(call.world.create_service_token(call.org, body or ServiceTokenCreate(), call.who))


@router.get(TOKEN)
async def get_service_token(token_id: str, call: OrgCall):
    return call.reply(call.world.service_token(call.org, token_id))


@router.delete(TOKEN)
async def delete_service_token(token_id: str, call: OrgCall):
    call.world.delete_service_token(call.org, token_id)
    return no_content()


@router.get(TOKEN + "/access")
async def get_service_token_accesses(token_id: str, call: OrgCall):
    return call.reply(call.world.token_accesses(call.org, token_id))


@router.post(TOKEN + "/access")
async def add_service_token_accesses(token_id: str, body: AccessChange, call: OrgCall):
    return call.reply(call.world.add_token_accesses(call.org, token_id, body))


@router.delete(TOKEN + "/access")
async def delete_service_token_accesses(token_id: str, body: AccessChange, call: OrgCall):
    call.world.remove_token_accesses(call.org, token_id, body)
    return no_content()


@router.get(TOKEN + "/grants")
async def list_service_token_grants(token_id: str, call: OrgCall):
    return call.reply(call.world.token_grants(call.org, token_id))


# ---------------------------------------------------------------- organization members


@router.get(ORG + "/members")
async def list_organization_members(call: OrgCall, pages: Pages, q: str | None = None):
    return call.page(pages, call.world.members(call.org, pages, q))


@router.get(MEMBER)
async def get_organization_member(member_id: str, call: OrgCall):
    return call.reply(call.world.member(call.org, member_id))


@router.patch(MEMBER)
async def update_organization_member(member_id: str, body: MemberUpdate, call: OrgCall):
    return call.reply(call.world.update_member(call.org, member_id, body, call.who))


@router.delete(MEMBER)
async def remove_organization_member(member_id: str, call: OrgCall, delete_passwords: bool = False,
                                     delete_service_tokens: bool = False):
    call.world.remove_member(call.org, member_id, call.who, delete_passwords, delete_service_tokens)
    return no_content()


# ---------------------------------------------------------------- webhooks


@router.get(WEBHOOKS)
async def list_webhooks(database: str, call: OrgCall, pages: Pages):
    return call.page(pages, call.world.webhooks(call.org, database, pages))


@router.post(WEBHOOKS)
async def create_webhook(database: str, body: WebhookCreate, call: OrgCall):
    return call.reply(call.world.create_webhook(call.org, database, body), 201)


@router.get(WEBHOOK)
async def get_webhook(database: str, webhook_id: str, call: OrgCall):
    return call.reply(call.world.webhook(call.org, database, webhook_id))


@router.patch(WEBHOOK)
async def update_webhook(database: str, webhook_id: str, call: OrgCall,
                         body: Annotated[WebhookUpdate | None, Body()] = None):
    return call.reply(call.world.update_webhook(call.org, database, webhook_id, body or WebhookUpdate()))


@router.delete(WEBHOOK)
async def delete_webhook(database: str, webhook_id: str, call: OrgCall):
    call.world.delete_webhook(call.org, database, webhook_id)
    return no_content()


@router.post(WEBHOOK + "/test")
async def test_webhook(database: str, webhook_id: str, call: OrgCall):
    """204; the delivery goes out in the background. A second test within 20 seconds: 429 with Retry-After."""
    try:
        call.world.test_webhook(call.org, database, webhook_id)
    except TestTooSoon as exc:
        return JSONResponse(exc.body(), exc.status, headers={"Retry-After": str(exc.retry_after)})
    return no_content()


# ---------------------------------------------------------------- control: the delivery log


@control.get("/webhook-deliveries")
async def webhook_deliveries(request: Request):
    """Every webhook delivery since the last reset, in order (success null while on its way)."""
    return world_of(request).deliveries()
