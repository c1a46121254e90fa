"""The /v1 routes of invoices (world/billing.py): the organization's invoices, one, and its line items."""

import json

from fastapi import APIRouter
from fastapi.responses import Response

from .api import ORG, OrgCall, Pages
from ..world.billing import Billing
from ..world.records import Paging, Window

router = APIRouter(prefix="/v1")

INVOICES = ORG + "/invoices"


def recorded_page(paging: Paging, found: Window) -> Response:
    """A page as the platform's recorded lists of invoices have it: {type, next_page, data}."""
    more = paging.page * paging.per_page < found.total
    body = {"type": "list", "next_page": paging.page + 1 if more else None,
            "data": [item.model_dump(mode="json") for item in found.items]}
    return Response(json.dumps(body), 200, media_type="application/json")


def page(call, paging: Paging, found: Window) -> Response:
    return recorded_page(paging, found) if call.world.settings.recorded_billing_oauth else call.page(paging, found)


@router.get(INVOICES)
async def list_invoices(call: OrgCall, pages: Pages):
    return page(call, pages, Billing(call.world).invoices(call.org, pages))


@router.get(INVOICES + "/{invoice_id}")
async def get_invoice(invoice_id: str, call: OrgCall):
    return call.reply(Billing(call.world).invoice(call.org, invoice_id))


@router.get(INVOICES + "/{invoice_id}/line-items")
async def list_invoice_line_items(invoice_id: str, call: OrgCall, pages: Pages):
    return page(call, pages, Billing(call.world).line_items(call.org, invoice_id, pages))
