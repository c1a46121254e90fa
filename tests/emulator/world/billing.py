"""Invoices and their line items, derived from the world rather than kept: an organization gets one invoice for each
calendar month it has lived through to the end (on the emulator clock), newest first, and each invoice one line item
for each branch that existed in that month: its cluster size's monthly rate (world/databases.py), for the share of
the month's days it existed. The newest invoice is unpaid, and overdue once OVERDUE_AFTER has passed since its month
ended; the others are paid. The ids are digests of what they bill, so they stay the same from read to read and draw
nothing from the world's random generator (every other id stays what it was).

Under the ``recorded_billing_oauth`` setting the billing period is two dates (its first and last day), as the
platform's recorded invoices have it; otherwise the two instants that bound it. The total is a decimal string in both,
a line item's subtotal a number.
"""

import hashlib
from datetime import UTC, date, datetime, timedelta
from typing import TYPE_CHECKING

from pydantic import BaseModel

from .databases import SKUS
from .models import ResourceRef
from .records import ID_ALPHABET, OrgRecord, Paging, Window, locked, not_found, stamp, window

if TYPE_CHECKING:
    from .state import World

OVERDUE_AFTER = timedelta(days=15)


class Invoice(BaseModel):
    id: str
    total: str
    billing_period_start: str
    billing_period_end: str
    paid: bool
    overdue: bool


class LineItem(BaseModel):
    id: str
    subtotal: float
    description: str
    metric_name: str
    cloudflare_billed: bool = False
    database_id: str
    database_name: str
    resource: ResourceRef


def digest_id(*parts: str) -> str:
    """A stable id of 12 characters of the ids' alphabet for what the parts name."""
    digest = hashlib.sha256("/".join(parts).encode()).digest()
    return "".join(ID_ALPHABET[byte % len(ID_ALPHABET)] for byte in digest[:12])


def _month_after(first: date) -> date:
    return date(first.year + first.month // 12, first.month % 12 + 1, 1)


def _day(text: str) -> date:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(UTC).date()


def billing_periods(org: OrgRecord, now: datetime) -> list[tuple[date, date]]:
    """(first day, first day of the next month) of every month from the organization's first to the last one that
    has ended, newest first."""
    start = _day(org.ref.created_at).replace(day=1)
    periods = []
    while _month_after(start) <= now.date():
        periods.append((start, _month_after(start)))
        start = _month_after(start)
    return periods[::-1]


def _line_items(org: OrgRecord, invoice_id: str, start: date, end: date) -> list[LineItem]:
    days = (end - start).days
    items = []
    for db in org.databases.values():
        rates = {sku.name: sku.rate or 0.0 for sku in SKUS.get(db.model.kind, SKUS["mysql"])}
        for record in db.branches.values():
            branch = record.model
            lived = (end - max(start, _day(branch.created_at))).days
            if lived <= 0:
                continue
            size = branch.cluster_name
            items.append(LineItem(
                id=digest_id(invoice_id, branch.id),
                subtotal=round(rates.get(size, 0.0) * lived / days, 2),
                description=f"{size.replace('_', '-')} cluster of branch {branch.name} of {db.model.name}, "
                            f"{lived} of {days} days",
                metric_name=size,
                database_id=db.model.id,
                database_name=db.model.name,
                resource=ResourceRef(id=branch.id, name=branch.name, created_at=branch.created_at,
                                     updated_at=branch.updated_at),
            ))
    return items


def _moment(day: date) -> str:
    return stamp(datetime(day.year, day.month, day.day, tzinfo=UTC))


class Billing:
    """The invoices of a world's organizations, read under its lock."""

    def __init__(self, world: "World"):
        self.world = world
        self.lock = world.lock

    def _all(self, org: OrgRecord) -> list[tuple[Invoice, list[LineItem]]]:
        now = self.world.now()
        dates = self.world.settings.recorded_billing_oauth
        found = []
        for number, (start, end) in enumerate(billing_periods(org, now)):
            invoice_id = digest_id(org.ref.id, start.isoformat())
            items = _line_items(org, invoice_id, start, end)
            newest = number == 0
            found.append((Invoice(
                id=invoice_id,
                total=f"{sum(item.subtotal for item in items):.2f}",
                billing_period_start=start.isoformat() if dates else _moment(start),
                billing_period_end=(end - timedelta(days=1)).isoformat() if dates else _moment(end),
                paid=not newest,
                overdue=newest and now.date() >= end + OVERDUE_AFTER,
            ), items))
        return found

    def _one(self, org: OrgRecord, invoice_id: str) -> tuple[Invoice, list[LineItem]]:
        found = next((pair for pair in self._all(org) if pair[0].id == invoice_id), None)
        if found is None:
            raise not_found("Invoice")
        return found

    @locked
    def invoices(self, org: OrgRecord, paging: Paging) -> Window[Invoice]:
        return window([invoice for invoice, dummy in self._all(org)], paging)

    @locked
    def invoice(self, org: OrgRecord, invoice_id: str) -> Invoice:
        return self._one(org, invoice_id)[0]

    @locked
    def line_items(self, org: OrgRecord, invoice_id: str, paging: Paging) -> Window[LineItem]:
        return window(self._one(org, invoice_id)[1], paging)
