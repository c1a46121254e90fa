"""The /v1 routes of query insights (world/insights.py): a branch's queries, errors, anomalies and tags as the data
plane's servers measured them. ``fields`` (the keys an answer keeps) is taken and ignored: answers carry every key."""

from typing import Literal

from fastapi import APIRouter, Query
from fastapi.responses import JSONResponse

from .api import BRANCH, OrgCall, Pages
from ..world.insights import ERROR_SORT, Measured, ordered, shaped, window
from ..world.records import window as page_of

router = APIRouter(prefix="/v1")

INSIGHTS = BRANCH + "/insights"
Period = Literal["15m", "1h", "3h", "6h", "12h", "1d", "2d", "7d", "8d"]
Tablet = Literal["primary", "replica", "rdonly"]
Statement = Literal["SELECT", "INSERT", "UPDATE", "DELETE"]
Direction = Literal["asc", "desc"]
ErrorSort = Literal["error", "lastRun", "count", "totalTime", "timePerQuery"]
QUERY_SORTS = Literal[
    "keyspace", "query", "lastRun", "count", "errorCount", "rowsRead", "rowsAffected", "rowsReturned",
    "rowsReadPerReturned", "rowsReadPerQuery", "rowsReturnedPerQuery", "rowsAffectedPerQuery", "totalTime", "cpuTime",
    "ioTime", "sumShardQueries", "maxShardQueries", "avgShardQueries", "avgParallelWorkers", "table", "qualifiedTable",
    "tableKeyspace", "indexes", "routingIndexes", "p50Latency", "p99Latency", "maxLatency", "percentTime",
    "percentCpuTime", "percentIoTime", "egressBytes", "egressBytesPerQuery", "maxEgressBytes", "ingressBytes",
    "ingressBytesPerQuery", "maxIngressBytes", "blocksRead", "blocksHit", "blockCacheHitRatio", "blocksDirtied",
    "blocksWritten", "trafficControlWarnings", "trafficControlThrottled", "trafficControlChecked",
    "trafficControlBudgetsUsed", "dimensions"]


def measured(call: OrgCall, database: str, branch: str, start: str | None, end: str | None, period: str | None,
             tablet_type: str | None = None) -> Measured:
    since, until = window(call.world, start, end, period)
    with call.world.lock:
        return Measured(call.world, call.org, database, branch, since, until, tablet_type)


def recorded(call: OrgCall) -> bool:
    return call.world.settings.recorded_insights


def listing(call: OrgCall, pages: Pages, items: list[dict], kind: str | None, short: bool = False):
    """A page of items: the published envelope, or the recorded one ({type, current_page, data}; short: {type,
    data})."""
    lean = recorded(call)
    found = page_of([shaped(item, lean, kind) for item in items], pages)
    if not lean:
        return call.page(pages, found)
    body = {"type": "list", "data": found.items} if short else {
        "type": "list", "current_page": pages.page, "data": found.items}
    return JSONResponse(body)


def one(call: OrgCall, item: dict, kind: str | None = None):
    return JSONResponse(shaped(item, recorded(call), kind))


@router.get(INSIGHTS)
async def list_branch_queries(database: str, branch: str, call: OrgCall, pages: Pages, q: str | None = None,
                              start: str | None = Query(None, alias="from"), to: str | None = None,
                              period: Period | None = None, sort: QUERY_SORTS | None = None,
                              direction: Direction | None = Query(None, alias="dir"),
                              tablet_type: Tablet | None = None, kind: Statement | None = Query(None, alias="type"),
                              fields: list[str] | None = Query(None)):
    del fields
    found = measured(call, database, branch, start, to, period, tablet_type).queries(q, kind)
    return listing(call, pages, ordered(found, sort, direction, {}, "totalTime"), "HourlyBranchQuery")


@router.get(INSIGHTS + "/anomalies")
async def list_branch_anomalies(database: str, branch: str, call: OrgCall, pages: Pages,
                                start: str | None = Query(None, alias="from"), to: str | None = None,
                                period: Period | None = None):
    return listing(call, pages, measured(call, database, branch, start, to, period).anomalies(), None)


@router.get(INSIGHTS + "/anomalies/{anomaly_id}")
async def get_branch_anomaly(database: str, branch: str, anomaly_id: str, call: OrgCall):
    return one(call, measured(call, database, branch, None, None, "8d").anomaly(anomaly_id))


@router.get(INSIGHTS + "/errors")
async def list_branch_query_errors(database: str, branch: str, call: OrgCall, pages: Pages, q: str | None = None,
                                   start: str | None = Query(None, alias="from"), to: str | None = None,
                                   period: Period | None = None,
                                   sort: ErrorSort | None = None,
                                   direction: Direction | None = Query(None, alias="dir"),
                                   tablet_type: Tablet | None = None):
    found = measured(call, database, branch, start, to, period, tablet_type).errors(q)
    return listing(call, pages, ordered(found, sort, direction, ERROR_SORT, "count"), "BranchQuery")


@router.get(INSIGHTS + "/errors/{fingerprint}")
async def get_branch_query_error(database: str, branch: str, fingerprint: str, call: OrgCall, pages: Pages,
                                 start: str | None = Query(None, alias="from"), to: str | None = None,
                                 period: Period | None = None):
    found = measured(call, database, branch, start, to, period).error_samples(fingerprint)
    return listing(call, pages, found, "sample")


@router.get(INSIGHTS + "/queries/{query_id}")
async def get_branch_query(database: str, branch: str, query_id: str, call: OrgCall):
    return one(call, measured(call, database, branch, None, None, "8d").sample(query_id), "sample")


@router.get(INSIGHTS + "/tags")
async def list_branch_query_tags(database: str, branch: str, call: OrgCall, pages: Pages, q: str | None = None,
                                 start: str | None = Query(None, alias="from"), to: str | None = None,
                                 period: Period | None = None, fingerprint: str | None = None,
                                 keyspace: str | None = None, tablet_type: Tablet | None = None,
                                 values_limit: int | None = None, literal_values_only: bool = False):
    found = measured(call, database, branch, start, to, period, tablet_type).tags(
        q, fingerprint, keyspace, values_limit, literal_values_only)
    return listing(call, pages, found, None, short=True)


@router.get(INSIGHTS + "/tags/summaries")
async def list_branch_query_tag_summaries(database: str, branch: str, call: OrgCall, pages: Pages,
                                          tags: list[str] | None = Query(None), q: str | None = None,
                                          start: str | None = Query(None, alias="from"), to: str | None = None,
                                          period: Period | None = None, sort: QUERY_SORTS | None = None,
                                          direction: Direction | None = Query(None, alias="dir"),
                                          tablet_type: Tablet | None = None,
                                          kind: Statement | None = Query(None, alias="type"),
                                          fields: list[str] | None = Query(None)):
    del fields
    found = measured(call, database, branch, start, to, period, tablet_type).tag_summaries(tags, q, kind)
    return listing(call, pages, ordered(found, sort, direction, {}, "totalTime"), None, short=True)


@router.get(INSIGHTS + "/tags/{tag}")
async def get_branch_query_tag(database: str, branch: str, tag: str, call: OrgCall,
                               start: str | None = Query(None, alias="from"), to: str | None = None,
                               period: Period | None = None, fingerprint: str | None = None,
                               keyspace: str | None = None, tablet_type: Tablet | None = None,
                               values_limit: int | None = None, literal_values_only: bool = False):
    found = measured(call, database, branch, start, to, period, tablet_type).tag(
        tag, fingerprint=fingerprint, keyspace=keyspace, values_limit=values_limit, literal_only=literal_values_only)
    return one(call, found)


@router.get(INSIGHTS + "/{fingerprint}")
async def get_query_statistics(database: str, branch: str, fingerprint: str, keyspace: str, call: OrgCall,
                               pages: Pages, start: str | None = Query(None, alias="from"), to: str | None = None,
                               period: Period | None = None):
    found = measured(call, database, branch, start, to, period).statistics(fingerprint, keyspace)
    return listing(call, pages, found, "sample", short=True)


@router.get(INSIGHTS + "/{fingerprint}/summary")
async def get_query_summary(database: str, branch: str, fingerprint: str, keyspace: str, call: OrgCall,
                            start: str | None = Query(None, alias="from"), to: str | None = None,
                            period: Period | None = None):
    found = measured(call, database, branch, start, to, period).summary(fingerprint, keyspace)
    return one(call, found, "HourlyBranchQuery")
