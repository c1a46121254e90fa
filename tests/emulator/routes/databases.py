"""The /v1 routes of databases, cluster sizes, backups and backup policies (world/databases.py, world/backups.py)."""

from typing import Annotated, Literal

from fastapi import APIRouter, Body, Query

from .api import DB, ORG, OrgCall, Pages, no_content
from ..world.backups import BackupCreate, BackupPolicyCreate, BackupPolicyFields, BackupUpdate
from ..world.databases import DatabaseCreate, DatabaseUpdate

router = APIRouter(prefix="/v1")

BACKUPS = DB + "/branches/{branch}/backups"
BACKUP = BACKUPS + "/{backup_id}"
POLICIES = DB + "/backup-policies"
POLICY = POLICIES + "/{policy_id}"


# ---------------------------------------------------------------- databases and cluster sizes


@router.get(ORG + "/databases")
async def list_databases(call: OrgCall, pages: Pages, q: str | None = None):
    return call.page(pages, call.world.databases(call.org, pages, q))


@router.post(ORG + "/databases")
async def create_database(body: DatabaseCreate, call: OrgCall):
    return call.reply(call.world.create_database(call.org, body, call.who), 201)


@router.patch(DB)
async def update_database_settings(database: str, call: OrgCall,
                                   body: Annotated[DatabaseUpdate | None, Body()] = None):
    return call.reply(call.world.update_database(call.org, database, body or DatabaseUpdate()))


@router.delete(DB)
async def delete_database(database: str, call: OrgCall):
    """204, or (the organization requires several administrators) 202 with the pending deletion request."""
    request = call.world.delete_database(call.org, database, call.who)
    return no_content() if request is None else call.reply(request, 202)


@router.get(ORG + "/cluster-size-skus")
async def list_cluster_size_skus(
    call: OrgCall,
    engine: Literal["mysql", "postgresql"] = "mysql",
    rates: bool = False,
    region: str | None = None,
    database: str | None = None,
):
    return call.reply(call.world.cluster_sizes(call.org, engine, rates, region, database))


# ---------------------------------------------------------------- backups


@router.get(BACKUPS)
async def list_backups(  # pylint: disable=too-many-arguments
    database: str,
    branch: str,
    call: OrgCall,
    pages: Pages,
    all: bool = False,  # noqa: A002 (the API's name)
    state: Literal["pending", "running", "success", "failed", "canceled", "ignored"] | None = None,
    policy: str | None = None,
    since: Annotated[str | None, Query(alias="from")] = None,
    to: str | None = None,
    running_at: str | None = None,
    production: bool | None = None,
):
    found = call.world.backups(call.org, database, branch, pages, include_deleted=all, state=state, policy=policy,
                               since=since, until=to, running_at=running_at, production=production)
    return call.page(pages, found)


@router.post(BACKUPS)
async def create_backup(database: str, branch: str, call: OrgCall,
                        body: Annotated[BackupCreate | None, Body()] = None):
    return call.reply(call.world.create_backup(call.org, database, branch, body or BackupCreate(), call.who), 201)


@router.get(BACKUP)
async def get_backup(database: str, branch: str, backup_id: str, call: OrgCall):
    return call.reply(call.world.backup(call.org, database, branch, backup_id))


@router.patch(BACKUP)
async def update_backup(database: str, branch: str, backup_id: str, call: OrgCall,
                        body: Annotated[BackupUpdate | None, Body()] = None):
    return call.reply(call.world.update_backup(call.org, database, branch, backup_id, body or BackupUpdate()))


@router.delete(BACKUP)
async def delete_backup(database: str, branch: str, backup_id: str, call: OrgCall):
    call.world.delete_backup(call.org, database, branch, backup_id)
    return no_content()


# ---------------------------------------------------------------- backup policies


@router.get(POLICIES)
async def list_backup_policies(database: str, call: OrgCall, pages: Pages):
    return call.page(pages, call.world.backup_policies(call.org, database, pages))


@router.post(POLICIES)
async def create_backup_policy(database: str, body: BackupPolicyCreate, call: OrgCall):
    return call.reply(call.world.create_backup_policy(call.org, database, body), 201)


@router.get(POLICY)
async def get_backup_policy(database: str, policy_id: str, call: OrgCall):
    return call.reply(call.world.backup_policy(call.org, database, policy_id))


@router.patch(POLICY)
async def update_backup_policy(database: str, policy_id: str, call: OrgCall,
                               body: Annotated[BackupPolicyFields | None, Body()] = None):
    return call.reply(call.world.update_backup_policy(call.org, database, policy_id, body or BackupPolicyFields()))


@router.delete(POLICY)
async def delete_backup_policy(database: str, policy_id: str, call: OrgCall):
    call.world.delete_backup_policy(call.org, database, policy_id)
    return no_content()
