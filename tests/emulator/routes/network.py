"""The /v1 routes of IP restrictions of PostgreSQL databases and of a database's throttler (world/network.py)."""

from typing import Annotated

from fastapi import APIRouter, Body

from .api import DB, OrgCall, Pages, no_content
from ..world.models import ThrottlerUpdate
from ..world.network import IpRestrictionBody

router = APIRouter(prefix="/v1")

CIDRS = DB + "/cidrs"
CIDR = CIDRS + "/{restriction_id}"


@router.get(CIDRS)
async def list_database_postgres_cidrs(database: str, call: OrgCall, pages: Pages):
    return call.page(pages, call.world.ip_restrictions(call.org, database, pages))


@router.post(CIDRS)
async def create_database_postgres_cidr(database: str, body: IpRestrictionBody, call: OrgCall):
    return call.reply(call.world.create_ip_restriction(call.org, database, body, call.who.user), 201)


@router.get(CIDR)
async def get_database_postgres_cidr(database: str, restriction_id: str, call: OrgCall):
    return call.reply(call.world.ip_restriction(call.org, database, restriction_id))


@router.patch(CIDR)
async def update_database_postgres_cidr(database: str, restriction_id: str, call: OrgCall,
                                        body: Annotated[IpRestrictionBody | None, Body()] = None):
    return call.reply(call.world.update_ip_restriction(call.org, database, restriction_id,
                                                       body or IpRestrictionBody()))


@router.delete(CIDR)
async def delete_database_postgres_cidr(database: str, restriction_id: str, call: OrgCall):
    call.world.delete_ip_restriction(call.org, database, restriction_id)
    return no_content()


@router.get(DB + "/throttler")
async def get_database_throttler(database: str, call: OrgCall):
    return call.reply(call.world.database_throttler(call.org, database))


@router.patch(DB + "/throttler")
async def update_database_throttler(database: str, call: OrgCall,
                                    body: Annotated[ThrottlerUpdate | None, Body()] = None):
    return call.reply(call.world.update_database_throttler(call.org, database, body or ThrottlerUpdate()))
