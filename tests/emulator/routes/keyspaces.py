"""The /v1 routes of keyspaces (world/keyspaces.py): keyspaces of a branch, their resize requests, rollout status and
VSchema; and the control route that starts a keyspace resize as another tool would."""

import json
from typing import Annotated, Literal

from fastapi import APIRouter, Body, Request
from fastapi.responses import Response
from pydantic import BaseModel, ConfigDict

from .api import BRANCH, OrgCall, Pages, no_content, world_of
from ..world.keyspaces import KeyspaceCreate, KeyspaceResizeBody, KeyspaceUpdate, VSchemaUpdate
from ..world.records import not_found

router = APIRouter(prefix="/v1")
control = APIRouter(prefix="/_emulator")

KEYSPACES = BRANCH + "/keyspaces"
KEYSPACE = KEYSPACES + "/{keyspace}"
RECORDED_ENVELOPE_WITHOUT = ("per_page", "total_count", "total_pages")


def _page(call, pages, found) -> Response:
    """A page of a keyspace list; under recorded_vitess without per_page (and totals), as the platform's."""
    answer = call.page(pages, found)
    if not call.world.settings.recorded_vitess:
        return answer
    body = json.loads(answer.body)
    return Response(json.dumps({key: value for key, value in body.items() if key not in RECORDED_ENVELOPE_WITHOUT}),
                    answer.status_code, media_type="application/json")


@router.get(KEYSPACES)
async def list_keyspaces(database: str, branch: str, call: OrgCall, pages: Pages):
    return _page(call, pages, call.world.list_keyspaces(call.org, database, branch, pages))


@router.post(KEYSPACES)
async def create_keyspace(database: str, branch: str, body: KeyspaceCreate, call: OrgCall):
    """200, as the OpenAPI declares (planetscale-go's test records 201)."""
    return call.reply(call.world.create_keyspace(call.org, database, branch, body))


@router.get(KEYSPACE)
async def get_keyspace(database: str, branch: str, keyspace: str, call: OrgCall):
    return call.reply(call.world.get_keyspace(call.org, database, branch, keyspace))


@router.patch(KEYSPACE)
async def update_keyspace(database: str, branch: str, keyspace: str, call: OrgCall,
                          body: Annotated[KeyspaceUpdate | None, Body()] = None):
    return call.reply(call.world.update_keyspace(call.org, database, branch, keyspace, body or KeyspaceUpdate()))


@router.delete(KEYSPACE)
async def delete_keyspace(database: str, branch: str, keyspace: str, call: OrgCall):
    call.world.delete_keyspace(call.org, database, branch, keyspace)
    return no_content()


@router.get(KEYSPACE + "/resizes")
async def list_keyspace_resize_requests(database: str, branch: str, keyspace: str, call: OrgCall, pages: Pages,
                                        completed_at: str | None = None):
    return call.page(pages, call.world.keyspace_resizes(call.org, database, branch, keyspace, pages, completed_at))


@router.put(KEYSPACE + "/resizes")
async def update_keyspace_resize_request(database: str, branch: str, keyspace: str, call: OrgCall,
                                         body: Annotated[KeyspaceResizeBody | None, Body()] = None):
    """200 with the request (new, or the pending one updated); 422 when nothing would change (no 204 declared)."""
    return call.reply(call.world.request_keyspace_resize(call.org, database, branch, keyspace,
                                                         body or KeyspaceResizeBody(), call.who.user))


@router.delete(KEYSPACE + "/resizes")
async def cancel_keyspace_resize_request(database: str, branch: str, keyspace: str, call: OrgCall):
    call.world.cancel_keyspace_resize(call.org, database, branch, keyspace)
    return no_content()


@router.get(KEYSPACE + "/resizes/{resize_id}")
async def get_keyspace_resize_request(database: str, branch: str, keyspace: str, resize_id: str, call: OrgCall):
    return call.reply(call.world.keyspace_resize(call.org, database, branch, keyspace, resize_id))


@router.get(KEYSPACE + "/rollout-status")
async def get_keyspace_rollout_status(database: str, branch: str, keyspace: str, call: OrgCall):
    return call.reply(call.world.keyspace_rollout(call.org, database, branch, keyspace))


@router.get(KEYSPACE + "/vschema")
async def get_keyspace_vschema(database: str, branch: str, keyspace: str, call: OrgCall):
    return call.reply(call.world.keyspace_vschema(call.org, database, branch, keyspace))


@router.patch(KEYSPACE + "/vschema")
async def update_keyspace_vschema(database: str, branch: str, keyspace: str, body: VSchemaUpdate, call: OrgCall):
    return call.reply(call.world.update_keyspace_vschema(call.org, database, branch, keyspace, body.vschema))


# ---------------------------------------------------------------- control


class ElsewhereResize(BaseModel):
    """A keyspace resize asked elsewhere (the web console, another tool), by the seeded user."""

    model_config = ConfigDict(extra="forbid")

    cluster_size: str | None = None
    extra_replicas: int | None = None
    vector_pool_allocation: int | None = None
    end_state: Literal["completed", "canceled"] | None = None


@control.post("/branches/{organization}/{database}/{branch}/keyspaces/{keyspace}/resizes")
async def keyspace_resize_elsewhere(request: Request, organization: str, database: str, branch: str, keyspace: str,
                                    body: ElsewhereResize):
    """Start (or update, while pending) a keyspace's resize request as another tool would; its record."""
    world = world_of(request)
    with world.lock:
        org = world.orgs.get(organization)
        if org is None:
            raise not_found("Organization")
        asked = KeyspaceResizeBody.model_validate(body.model_dump(exclude={"end_state"}, exclude_none=True))
        found = world.request_keyspace_resize(org, database, branch, keyspace, asked, world.default_user,
                                              body.end_state)
        return found.model_dump(mode="json")
