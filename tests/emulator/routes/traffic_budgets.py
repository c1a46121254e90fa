"""The /v1 routes of Database Traffic Control (world/traffic_budgets.py): a branch's budgets, their rules, and the
budgets of a query pattern (query insights)."""

from typing import Annotated

from fastapi import APIRouter, Body

from .api import BRANCH, OrgCall, Pages, no_content
from ..world.traffic_budgets import BudgetBody, RuleBody

router = APIRouter(prefix="/v1")

BUDGETS = BRANCH + "/traffic/budgets"


@router.get(BUDGETS)
async def list_traffic_budgets(database: str, branch: str, call: OrgCall, pages: Pages,
                               fingerprint: str | None = None, period: str | None = None,
                               created_at: str | None = None):
    """period and created_at choose the window of the budgets' statistics, which the emulator does not keep."""
    del period, created_at
    return call.page(pages, call.world.traffic_budgets(call.org, database, branch, pages, fingerprint))


@router.post(BUDGETS)
async def create_traffic_budget(database: str, branch: str, body: BudgetBody, call: OrgCall):
    return call.reply(call.world.create_traffic_budget(call.org, database, branch, body, call.who.user), 201)


@router.get(BUDGETS + "/{budget_id}")
async def get_traffic_budget(database: str, branch: str, budget_id: str, call: OrgCall):
    return call.reply(call.world.traffic_budget(call.org, database, branch, budget_id))


@router.patch(BUDGETS + "/{budget_id}")
async def update_traffic_budget(database: str, branch: str, budget_id: str, call: OrgCall,
                                body: Annotated[BudgetBody | None, Body()] = None):
    return call.reply(call.world.update_traffic_budget(call.org, database, branch, budget_id, body or BudgetBody()))


@router.delete(BUDGETS + "/{budget_id}")
async def delete_traffic_budget(database: str, branch: str, budget_id: str, call: OrgCall):
    call.world.delete_traffic_budget(call.org, database, branch, budget_id)
    return no_content()


@router.post(BUDGETS + "/{budget_id}/rules")
async def create_traffic_rule(database: str, branch: str, budget_id: str, body: RuleBody, call: OrgCall):
    return call.reply(call.world.create_traffic_rule(call.org, database, branch, budget_id, body, call.who.user), 201)


@router.delete(BUDGETS + "/{budget_id}/rules/{rule_id}")
async def delete_traffic_rule(database: str, branch: str, budget_id: str, rule_id: str, call: OrgCall):
    call.world.delete_traffic_rule(call.org, database, branch, budget_id, rule_id)
    return no_content()


@router.get(BRANCH + "/insights/{fingerprint}/traffic/budgets")
async def list_traffic_budgets_for_query(database: str, branch: str, fingerprint: str, call: OrgCall, pages: Pages,
                                         keyspace: str | None = None):
    return call.page(pages, call.world.traffic_budgets(call.org, database, branch, pages, fingerprint, keyspace))
