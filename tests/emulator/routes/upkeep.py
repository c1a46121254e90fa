"""The /v1 routes of a database's upkeep (world/upkeep.py): schema recommendations (list, one, dismiss) and maintenance
schedules with their windows; and their control routes under /_emulator."""

from typing import Annotated, Literal

from fastapi import APIRouter, Body, Request

from .api import DB, Pages, OrgCall, world_of
from ..world.records import not_found
from ..world.upkeep import DismissBody, RecommendationAdd, ScheduleAdd

router = APIRouter(prefix="/v1")
control = APIRouter(prefix="/_emulator")

RECOMMENDATIONS = DB + "/schema-recommendations"
SCHEDULES = DB + "/maintenance-schedules"


@router.get(RECOMMENDATIONS)
async def list_schema_recommendations(database: str, call: OrgCall, pages: Pages,
                                      state: Literal["open", "closed"] | None = None):
    return call.page(pages, call.world.schema_recommendations(call.org, database, pages, state))


@router.get(RECOMMENDATIONS + "/{number}")
async def get_schema_recommendation(database: str, number: int, call: OrgCall):
    return call.reply(call.world.schema_recommendation(call.org, database, number))


@router.post(RECOMMENDATIONS + "/{number}/dismiss")
async def dismiss_schema_recommendation(database: str, number: int, call: OrgCall,
                                        body: Annotated[DismissBody | None, Body()] = None):
    """200 with the dismissed recommendation; 422 when it is not open, or the reason is over 500 characters."""
    return call.reply(call.world.dismiss_recommendation(call.org, database, number, body or DismissBody(), call.who))


@router.get(SCHEDULES)
async def list_maintenance_schedules(database: str, call: OrgCall, pages: Pages):
    return call.page(pages, call.world.maintenance_schedules(call.org, database, pages))


@router.get(SCHEDULES + "/{schedule_id}")
async def get_maintenance_schedule(database: str, schedule_id: str, call: OrgCall):
    return call.reply(call.world.maintenance_schedule(call.org, database, schedule_id))


@router.get(SCHEDULES + "/{schedule_id}/windows")
async def list_maintenance_windows(database: str, schedule_id: str, call: OrgCall, pages: Pages):
    return call.page(pages, call.world.maintenance_windows(call.org, database, schedule_id, pages))


# ---------------------------------------------------------------- control


def _database(request: Request, organization: str, database: str):
    world = world_of(request)
    org = world.orgs.get(organization)
    if org is None:
        raise not_found("Organization")
    return world, org, world.find_database(org, database)


@control.post("/schema-recommendations/{organization}/{database}")
async def add_schema_recommendation(request: Request, organization: str, database: str,
                                    body: Annotated[RecommendationAdd | None, Body()] = None):
    """A recommendation, as the platform's analysis would make one (open unless the body says otherwise)."""
    world, org, db = _database(request, organization, database)
    with world.lock:
        return world.add_recommendation(org, db, body or RecommendationAdd()).model_dump(mode="json")


@control.get("/schema-recommendations/{organization}/{database}/{number}/dismissal")
async def schema_recommendation_dismissal(request: Request, organization: str, database: str, number: int):
    """The reason a dismissal gave and who gave it (null: not dismissed through the API)."""
    return world_of(request).dismissal(organization, database, number)


@control.post("/maintenance-schedules/{organization}/{database}")
async def add_maintenance_schedule(request: Request, organization: str, database: str, body: ScheduleAdd):
    world, _, db = _database(request, organization, database)
    with world.lock:
        record = world.add_schedule(db, body)
        return world.maintenance_schedule(world.orgs[organization], database, record.model.id).model_dump(mode="json")
