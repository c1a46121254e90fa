"""The /v1 routes of PgBouncers and their resize requests (world/bouncers.py), and their control route under
/_emulator."""

from typing import Annotated, Literal

from fastapi import APIRouter, Body, Request
from pydantic import BaseModel, ConfigDict

from .api import BRANCH, OrgCall, Pages, no_content, world_of
from ..world.bouncers import BouncerCreate, BouncerResizeBody
from ..world.records import not_found

router = APIRouter(prefix="/v1")
control = APIRouter(prefix="/_emulator")

BOUNCERS = BRANCH + "/bouncers"
BOUNCER = BOUNCERS + "/{bouncer}"


@router.get(BOUNCERS)
async def list_bouncers(database: str, branch: str, call: OrgCall, pages: Pages):
    return call.page(pages, call.world.bouncers(call.org, database, branch, pages))


@router.post(BOUNCERS)
async def create_bouncer(database: str, branch: str, body: BouncerCreate, call: OrgCall):
    return call.reply(call.world.create_bouncer(call.org, database, branch, body, call.who.user))


@router.get(BOUNCER)
async def get_bouncer(database: str, branch: str, bouncer: str, call: OrgCall):
    return call.reply(call.world.bouncer(call.org, database, branch, bouncer))


@router.delete(BOUNCER)
async def delete_bouncer(database: str, branch: str, bouncer: str, call: OrgCall):
    call.world.delete_bouncer(call.org, database, branch, bouncer)
    return no_content()


@router.get(BOUNCER + "/resizes")
async def list_bouncer_resize_requests(database: str, branch: str, bouncer: str, call: OrgCall, pages: Pages):
    return call.page(pages, call.world.bouncer_resizes(call.org, database, branch, pages, bouncer))


@router.patch(BOUNCER + "/resizes")
async def update_bouncer_resize_request(database: str, branch: str, bouncer: str, call: OrgCall,
                                        body: Annotated[BouncerResizeBody | None, Body()] = None):
    """200 with the resize request: a new one, or the pending one updated (422 when nothing differs)."""
    return call.reply(call.world.resize_bouncer(call.org, database, branch, bouncer, body or BouncerResizeBody(),
                                                call.who.user))


@router.delete(BOUNCER + "/resizes")
async def cancel_bouncer_resize_request(database: str, branch: str, bouncer: str, call: OrgCall):
    call.world.cancel_bouncer_resize(call.org, database, branch, bouncer)
    return no_content()


@router.get(BRANCH + "/bouncer-resizes")
async def list_branch_bouncer_resize_requests(database: str, branch: str, call: OrgCall, pages: Pages):
    return call.page(pages, call.world.bouncer_resizes(call.org, database, branch, pages))


# ---------------------------------------------------------------- control


@control.get("/bouncers")
async def bouncer_addresses(request: Request):
    """Where each bouncer's real PgBouncer listens on the data plane: {"org/database/branch/bouncer": "host:port"}."""
    return world_of(request).data_bouncer_addresses()


class ElsewhereResize(BaseModel):
    """A bouncer resize asked elsewhere (the web console), by the seeded user, that may end canceled."""

    model_config = ConfigDict(extra="forbid")

    resize: dict
    end_state: Literal["completed", "canceled"] | None = None


@control.post("/branches/{organization}/{database}/{branch}/bouncers/{bouncer}/resizes")
async def resize_bouncer_elsewhere(request: Request, organization: str, database: str, branch: str, bouncer: str,
                                   body: ElsewhereResize):
    world = world_of(request)
    with world.lock:
        org = world.orgs.get(organization)
        if org is None:
            raise not_found("Organization")
        return world.resize_bouncer(org, database, branch, bouncer, BouncerResizeBody.model_validate(body.resize),
                                    world.default_user, body.end_state).model_dump(mode="json")
