"""The /v1 routes of capacity (world/capacity.py): change requests, a MySQL branch's cluster, VTGate resizes, the
PostgreSQL parameter and extension catalogue, read-only regions; and their control routes under /_emulator."""

from typing import Annotated, Literal

from fastapi import APIRouter, Body, Request
from pydantic import BaseModel, ConfigDict, Field

from .api import BRANCH, DB, OrgCall, Pages, no_content, world_of
from ..world.capacity import CATALOGUE, STORAGE_DEFAULTS, VTGATE_KEYS, ChangeBody, ClusterBody, Config, ResizeBody
from ..world.capacity import check_value
from ..world.records import invalid_params, not_found

router = APIRouter(prefix="/v1")
control = APIRouter(prefix="/_emulator")

CHANGES = BRANCH + "/changes"
RESIZES = BRANCH + "/resizes"


@router.get(CHANGES)
async def list_branch_change_requests(database: str, branch: str, call: OrgCall, pages: Pages):
    return call.page(pages, call.world.change_requests(call.org, database, branch, pages))


@router.patch(CHANGES)
async def update_branch_change_request(database: str, branch: str, call: OrgCall,
                                       body: Annotated[ChangeBody | None, Body()] = None):
    """200 with the change request (a new one, or the pending one updated), 204 when nothing differs."""
    found = call.world.request_change(call.org, database, branch, body or ChangeBody(), call.who.user)
    return no_content() if found is None else call.reply(found)


@router.get(CHANGES + "/{change_id}")
async def get_branch_change_request(database: str, branch: str, change_id: str, call: OrgCall):
    return call.reply(call.world.change_request(call.org, database, branch, change_id))


@router.patch(BRANCH + "/cluster")
async def update_branch_cluster_config(database: str, branch: str, body: ClusterBody, call: OrgCall):
    """204 (the OpenAPI declares no body): the change request it makes is in GET .../changes."""
    call.world.change_cluster(call.org, database, branch, body, call.who.user)
    return no_content()


@router.get(RESIZES)
async def list_branch_resize_requests(database: str, branch: str, call: OrgCall, pages: Pages):
    return call.page(pages, call.world.change_requests(call.org, database, branch, pages, kind="resize"))


@router.put(RESIZES)
async def update_branch_resize_request(database: str, branch: str, call: OrgCall,
                                       body: Annotated[ResizeBody | None, Body()] = None):
    found = call.world.request_resize(call.org, database, branch, body or ResizeBody(), call.who.user)
    return no_content() if found is None else call.reply(found)


@router.delete(RESIZES)
async def cancel_branch_change_request(database: str, branch: str, call: OrgCall):
    """Cancels the branch's pending resize and change requests (422 when none is pending)."""
    call.world.cancel_requests(call.org, database, branch)
    return no_content()


@router.get(RESIZES + "/{resize}")
async def get_branch_resize_request(database: str, branch: str, resize: str, call: OrgCall):
    return call.reply(call.world.change_request(call.org, database, branch, resize, kind="resize"))


@router.get(BRANCH + "/parameters")
async def list_parameters(database: str, branch: str, call: OrgCall):
    return call.reply(call.world.parameters(call.org, database, branch))


@router.get(BRANCH + "/extensions")
async def list_extensions(database: str, branch: str, call: OrgCall):
    return call.reply(call.world.extensions(call.org, database, branch))


@router.get(DB + "/read-only-regions")
async def list_read_only_regions(database: str, call: OrgCall, pages: Pages):
    return call.page(pages, call.world.read_only_regions(call.org, database, pages))


# ---------------------------------------------------------------- control


class ElsewhereChange(BaseModel):
    """A request made elsewhere (the web console, another tool): exactly one of change, cluster_size, resize."""

    model_config = ConfigDict(extra="forbid")

    change: dict | None = None
    cluster_size: str | None = None
    resize: dict | None = None
    end_state: Literal["completed", "canceled"] | None = None


class CancelBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    force: bool = True


class CapacitySet(BaseModel):
    """What a branch has, set at once (no request, no clock)."""

    model_config = ConfigDict(extra="forbid")

    cluster_size: str | None = None
    replicas: int | None = Field(None, ge=0)
    parameters: dict[str, dict[str, str | int | float | bool]] | None = None
    storage: dict[str, int | bool] | None = None
    vtgate_size: str | None = None
    vtgate_count: int | None = Field(None, ge=1)
    vtgate_max_count: int | None = Field(None, ge=1)
    vtgate_autoscaling: bool | None = None
    vtgate_target_cpu_utilization: int | None = Field(None, ge=0, le=100)


class RegionAdd(BaseModel):
    model_config = ConfigDict(extra="forbid")

    region: str
    ready: bool = True


def _org(world, organization: str):
    org = world.orgs.get(organization)
    if org is None:
        raise not_found("Organization")
    return org


def _describe(config: Config) -> dict:
    nested = {}
    for (namespace, name), value in sorted(config.parameters.items()):
        nested.setdefault(namespace, {})[name] = value
    return {"cluster_size": config.cluster, "replicas": config.replicas, "parameters": nested,
            "storage": dict(config.storage), **{key: config.vtgate.get(key) for key in VTGATE_KEYS}}


@control.post("/branches/{organization}/{database}/{branch}/changes")
async def change_elsewhere(request: Request, organization: str, database: str, branch: str,
                           body: ElsewhereChange):
    """Start a change or resize request as another tool would (by the seeded user); its record, or 204."""
    world = world_of(request)
    given = [key for key in ("change", "cluster_size", "resize") if getattr(body, key) is not None]
    if len(given) != 1:
        raise invalid_params("exactly one of change, cluster_size, resize")
    with world.lock:
        org, user = _org(world, organization), world.default_user
        if body.change is not None:
            found = world.request_change(org, database, branch, ChangeBody.model_validate(body.change), user,
                                         body.end_state)
        elif body.resize is not None:
            found = world.request_resize(org, database, branch, ResizeBody.model_validate(body.resize), user,
                                         body.end_state)
        else:
            made = world.change_cluster(org, database, branch, ClusterBody(cluster_size=body.cluster_size), user,
                                        body.end_state)
            found = None if made is None else world.change_request(org, database, branch, made.id)
        return no_content() if found is None else found.model_dump(mode="json")


@control.post("/branches/{organization}/{database}/{branch}/changes/cancel")
async def cancel_elsewhere(request: Request, organization: str, database: str, branch: str,
                           body: Annotated[CancelBody | None, Body()] = None):
    """Cancel the branch's running change and resize requests (force, the default: resizing ones too)."""
    world = world_of(request)
    with world.lock:
        ids = world.cancel_requests(_org(world, organization), database, branch, force=(body or CancelBody()).force)
    return {"canceled": ids}


@control.get("/branches/{organization}/{database}/{branch}/capacity")
async def capacity_of(request: Request, organization: str, database: str, branch: str):
    world = world_of(request)
    with world.lock:
        found = world.find_branch(_org(world, organization), database, branch)
        return _describe(world.branch_config(found))


@control.post("/branches/{organization}/{database}/{branch}/capacity")
async def set_capacity(request: Request, organization: str, database: str, branch: str, body: CapacitySet):
    """Set what a branch has at once (replicas, cluster size, parameters, storage, VTGates): no request."""
    world = world_of(request)
    with world.lock:
        found = world.find_branch(_org(world, organization), database, branch)
        config = world.branch_config(found)
        m = found.model
        if body.cluster_size is not None:
            size = world._check_size(m.kind, body.cluster_size)  # pylint: disable=protected-access
            config.cluster = m.cluster_name = size
        if body.replicas is not None:
            config.replicas = m.replica_count = body.replicas
            m.has_replicas = body.replicas > 0
        asked = {}
        for namespace, values in (body.parameters or {}).items():
            for name, value in values.items():
                spec = CATALOGUE.get((namespace, name))
                if spec is None:
                    raise invalid_params(f"parameters.{namespace}.{name}: no such parameter")
                asked[(namespace, name)] = check_value(spec, value)
        config.parameters.update(asked)
        world.data_parameters_changed(found, asked)
        config.storage.update({k: v for k, v in (body.storage or {}).items() if k in STORAGE_DEFAULTS})
        m.cluster_iops = config.storage["storage_iops"]
        vtgate = body.model_dump(include=set(VTGATE_KEYS), exclude_none=True)
        for key, value in vtgate.items():
            setattr(m, key, value)
        if "vtgate_size" in vtgate:
            m.vtgate_name = vtgate["vtgate_size"]
        return _describe(world.branch_config(found))


@control.post("/databases/{organization}/{database}/read-only-regions")
async def add_read_only_region(request: Request, organization: str, database: str, body: RegionAdd):
    world = world_of(request)
    with world.lock:
        org = _org(world, organization)
        db = world.find_database(org, database)
        return world.add_read_only_region(org, db, body.region, world.default_user, body.ready).model_dump(
            mode="json")
