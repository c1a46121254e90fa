"""The /v1 routes of a branch's metrics (world/metrics.py): series over a range (the branch, its tablets, its
queries, its query tags), instant values (the branch, its tablets) and the tables' sizes.

By default the answers take the published description's types: ``series`` and instant ``metrics`` are arrays of
strings (each a JSON object as a string), ``.../metrics/tables`` is keyed by table name. Under ``recorded_metrics``
they are as the platform answers (planetscale/cli): series and metrics as objects, points ``[unix seconds, value]``,
both table maps keyspace -> table -> bytes, the tablets' instant ``branch`` with only its name."""

import json

from fastapi import APIRouter
from fastapi.responses import Response

from .api import BRANCH, OrgCall
from ..world import metrics as derived

router = APIRouter(prefix="/v1")

METRICS = BRANCH + "/metrics"


def _answer(call, body: dict, listed: str | None = None) -> Response:
    """The answer: the objects of ``listed`` as JSON strings (the published types), or as they are (recorded)."""
    if listed is not None and not call.world.settings.recorded_metrics:
        body = {**body, listed: [json.dumps(item, separators=(",", ":")) for item in body[listed]]}
    return Response(json.dumps(body), 200, media_type="application/json")


def _branch(call, database: str, branch: str):
    return call.world.find_branch(call.org, database, branch)


def _series(call, database: str, branch: str, kind: str, query: dict) -> Response:
    with call.world.lock:
        body = derived.series_answer(call.world, _branch(call, database, branch), kind, query)
    return _answer(call, body, "series")


def _instant(call, database: str, branch: str, tablets: bool, query: dict) -> Response:
    with call.world.lock:
        body = derived.instant_answer(call.world, _branch(call, database, branch), tablets, query)
    if tablets and call.world.settings.recorded_metrics:
        body["branch"] = {"name": body["branch"]["name"]}
    return _answer(call, body, "metrics")


@router.get(METRICS)
async def get_branch_metrics(database: str, branch: str, call: OrgCall, metrics: str | None = None,
                             period: str | None = None, steps: int | None = None, tablet_type: str | None = None,
                             keyspace: str | None = None, shard: str | None = None, role: str | None = None,
                             container: str | None = None, pod: str | None = None, pods: str | None = None,
                             query_ids: str | None = None, fingerprint: str | None = None,
                             budget_id: str | None = None, rule_id: str | None = None, q: str | None = None,
                             to: str | None = None):
    return _series(call, database, branch, "branch", _query(call, dict(locals())))


@router.get(METRICS + "/instant")
async def get_instant_branch_metrics(database: str, branch: str, call: OrgCall, metrics: str | None = None,
                                     role: str | None = None, shard: str | None = None, container: str | None = None,
                                     pod: str | None = None):
    return _instant(call, database, branch, False, _query(call, dict(locals())))


@router.get(METRICS + "/tablets")
async def get_tablet_metrics(database: str, branch: str, call: OrgCall, metrics: str | None = None,
                             period: str | None = None, steps: int | None = None, keyspace: str | None = None,
                             shard: str | None = None, pod: str | None = None, workflow: str | None = None,
                             to: str | None = None):
    return _series(call, database, branch, "tablets", _query(call, dict(locals())))


@router.get(METRICS + "/tablets-instant")
async def get_instant_tablet_metrics(database: str, branch: str, call: OrgCall, metrics: str | None = None,
                                     keyspace: str | None = None, shard: str | None = None):
    return _instant(call, database, branch, True, _query(call, dict(locals())))


@router.get(METRICS + "/tables")
async def get_branch_table_metrics(database: str, branch: str, call: OrgCall):
    with call.world.lock:
        body = derived.tables_answer(call.world, _branch(call, database, branch), False,
                                     call.world.settings.recorded_metrics)
    return _answer(call, body)


@router.get(METRICS + "/keyspace-tables")
async def get_branch_keyspace_table_metrics(database: str, branch: str, call: OrgCall):
    with call.world.lock:
        body = derived.tables_answer(call.world, _branch(call, database, branch), True, True)
    return _answer(call, body)


@router.get(METRICS + "/query")
async def get_branch_query_metrics(database: str, branch: str, call: OrgCall, metrics: str | None = None,
                                   query_ids: str | None = None, fingerprint: str | None = None,
                                   keyspace: str | None = None, period: str | None = None, steps: int | None = None,
                                   tablet_type: str | None = None, budget_id: str | None = None,
                                   rule_id: str | None = None, q: str | None = None, to: str | None = None):
    return _series(call, database, branch, "query", _query(call, dict(locals())))


@router.get(METRICS + "/tag")
async def get_branch_tag_metrics(database: str, branch: str, call: OrgCall, metrics: str | None = None,
                                 tag_sets: str | None = None, period: str | None = None, steps: int | None = None,
                                 tablet_type: str | None = None, budget_id: str | None = None,
                                 rule_id: str | None = None, q: str | None = None, to: str | None = None):
    return _series(call, database, branch, "tag", _query(call, dict(locals())))


def _query(call, given: dict) -> dict:
    """The query parameters of a handler's arguments, and ``from`` (a Python keyword) read from the request."""
    query = {name: value for name, value in given.items() if name not in ("database", "branch", "call")}
    query["from"] = call.request.query_params.get("from")
    return query
