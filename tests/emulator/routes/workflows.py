"""The /v1 routes of MoveTables workflows (world/workflows.py): the list (``between``, pages), create, get, cancel
(``DELETE``) and the actions (``PATCH .../workflows/{number}/<action>``, no body)."""

import json

from fastapi import APIRouter
from fastapi.responses import Response

from .api import DB, OrgCall, Pages
from .keyspaces import RECORDED_ENVELOPE_WITHOUT
from ..world.workflows import WorkflowCreate

router = APIRouter(prefix="/v1")

WORKFLOWS = DB + "/workflows"
WORKFLOW = WORKFLOWS + "/{number}"


def _action(call: OrgCall, database: str, number: int, action: str) -> Response:
    """200 with the workflow; under lean_write_answers the workflow as it was before with only its state changed
    (complete: "complete"), as the platform's recorded answers."""
    before, after = call.world.workflow_action(call.org, database, number, action, call.who.user)
    if not call.world.settings.lean_write_answers:
        return call.reply(after)
    return call.reply(before.model_copy(update={"state": "complete" if action == "complete" else after.state}))


@router.get(WORKFLOWS)
async def list_workflows(database: str, call: OrgCall, pages: Pages, between: str | None = None):
    answer = call.page(pages, call.world.list_workflows(call.org, database, pages, between))
    if not call.world.settings.recorded_vitess:
        return answer
    body = json.loads(answer.body)  # the platform's recorded list has no per_page
    return Response(json.dumps({key: value for key, value in body.items() if key not in RECORDED_ENVELOPE_WITHOUT}),
                    answer.status_code, media_type="application/json")


@router.post(WORKFLOWS)
async def create_workflow(database: str, body: WorkflowCreate, call: OrgCall):
    """201, as the OpenAPI declares (planetscale-go's test records 200)."""
    return call.reply(call.world.create_workflow(call.org, database, body, call.who.user), 201)


@router.get(WORKFLOW)
async def get_workflow(database: str, number: int, call: OrgCall):
    return call.reply(call.world.get_workflow(call.org, database, number))


@router.delete(WORKFLOW)
async def workflow_cancel(database: str, number: int, call: OrgCall):
    return _action(call, database, number, "cancel")


@router.patch(WORKFLOW + "/verify-data")
async def verify_workflow(database: str, number: int, call: OrgCall):
    return _action(call, database, number, "verify-data")


@router.patch(WORKFLOW + "/switch-replicas")
async def workflow_switch_replicas(database: str, number: int, call: OrgCall):
    return _action(call, database, number, "switch-replicas")


@router.patch(WORKFLOW + "/switch-primaries")
async def workflow_switch_primaries(database: str, number: int, call: OrgCall):
    return _action(call, database, number, "switch-primaries")


@router.patch(WORKFLOW + "/reverse-traffic")
async def workflow_reverse_traffic(database: str, number: int, call: OrgCall):
    return _action(call, database, number, "reverse-traffic")


@router.patch(WORKFLOW + "/cutover")
async def workflow_cutover(database: str, number: int, call: OrgCall):
    return _action(call, database, number, "cutover")


@router.patch(WORKFLOW + "/reverse-cutover")
async def workflow_reverse_cutover(database: str, number: int, call: OrgCall):
    return _action(call, database, number, "reverse-cutover")


@router.patch(WORKFLOW + "/complete")
async def workflow_complete(database: str, number: int, call: OrgCall):
    return _action(call, database, number, "complete")


@router.patch(WORKFLOW + "/retry")
async def workflow_retry(database: str, number: int, call: OrgCall):
    return _action(call, database, number, "retry")
