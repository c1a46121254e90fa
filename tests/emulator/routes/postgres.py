"""The /v1 routes of the roles of PostgreSQL branches (world/postgres.py)."""

from typing import Annotated

from fastapi import APIRouter, Body

from .api import BRANCH, OrgCall, Pages, no_content
from ..world.postgres import RoleCreate, RoleReassign, RoleUpdate

router = APIRouter(prefix="/v1")

ROLES = BRANCH + "/roles"
ROLE = ROLES + "/{role_id}"


@router.get(ROLES)
async def list_roles(database: str, branch: str, call: OrgCall, pages: Pages, q: str | None = None,
                     status: str | None = None):
    return call.page(pages, call.world.roles(call.org, database, branch, pages, q, status))


@router.post(ROLES)
async def create_role(database: str, branch: str, call: OrgCall, body: Annotated[RoleCreate | None, Body()] = None):
    """200 (not 201), the new role with its secret."""
    return call.reply(call.world.create_role(call.org, database, branch, body or RoleCreate(), call.who))


@router.get(ROLES + "/default")
async def get_default_role(database: str, branch: str, call: OrgCall):
    return call.reply(call.world.default_role(call.org, database, branch))


@router.post(ROLES + "/reset-default")
async def reset_default_role(database: str, branch: str, call: OrgCall):
    return call.reply(call.world.reset_default_role(call.org, database, branch))


@router.get(ROLE)
async def get_role(database: str, branch: str, role_id: str, call: OrgCall):
    return call.reply(call.world.role(call.org, database, branch, role_id))


@router.patch(ROLE)
async def update_role(database: str, branch: str, role_id: str, call: OrgCall,
                      body: Annotated[RoleUpdate | None, Body()] = None):
    return call.reply(call.world.update_role(call.org, database, branch, role_id, body or RoleUpdate()))


@router.delete(ROLE)
async def delete_role(database: str, branch: str, role_id: str, call: OrgCall, successor: str | None = None):
    call.world.delete_role(call.org, database, branch, role_id, successor)
    return no_content()


@router.post(ROLE + "/reassign")
async def reassign_role_objects(database: str, branch: str, role_id: str, body: RoleReassign, call: OrgCall):
    call.world.reassign_role(call.org, database, branch, role_id, body)
    return no_content()


@router.post(ROLE + "/renew")
async def renew_role(database: str, branch: str, role_id: str, call: OrgCall):
    return call.reply(call.world.renew_role(call.org, database, branch, role_id))


@router.post(ROLE + "/reset")
async def reset_role(database: str, branch: str, role_id: str, call: OrgCall):
    return call.reply(call.world.reset_role(call.org, database, branch, role_id))
