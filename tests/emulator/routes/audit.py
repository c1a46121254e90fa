"""The /v1 routes of the organization's audit log and settings (world/audit.py), and the control route that adds events
to an organization's log (POST /_emulator/audit-log/{organization})."""

from typing import Annotated

from fastapi import APIRouter, Depends, Query, Request

from .api import ORG, Call, OrgCall, Pages, principal, world_of
from ..world.audit import AuditEventsSeed, OrganizationSettingsUpdate
from ..world.records import Principal

router = APIRouter(prefix="/v1")
control = APIRouter(prefix="/_emulator")


@router.get("/organizations")
async def list_organizations(request: Request, pages: Pages, who: Annotated[Principal, Depends(principal)]):
    """The organizations the credential's user is a member of (the page envelope of Call.page)."""
    world = world_of(request)
    return Call(request, world, None, who).page(pages, world.organizations(who, pages))


@router.get(ORG)
async def get_organization(call: OrgCall):
    return call.reply(call.world.organization_record(call.org))


@router.patch(ORG)
async def update_organization(body: OrganizationSettingsUpdate, call: OrgCall):
    return call.reply(call.world.update_organization(call.org, body))


@router.get(ORG + "/audit-log")
async def list_audit_logs(call: OrgCall, limit: int = Query(25, ge=1, le=100), starting_after: str | None = None,
                          ending_before: str | None = None,
                          filters: list[str] = Query([], alias="filters[]")):
    """filters[]=audit_action:<action> (repeatable) keeps the events of those actions, as the platform does."""
    return call.reply(call.world.audit_log(call.org, limit, starting_after, ending_before, filters))


@control.post("/audit-log/{organization}")
async def seed_audit_events(organization: str, body: AuditEventsSeed, request: Request):
    """Add body.count events (body.audit_action), body.hours_ago back, in the log's order of time; answer its length."""
    return {"events": world_of(request).seed_audit_events(organization, body)}
