"""Invoices and their line items: one invoice a month the organization has lived through, a line item per branch,
the month that ends on the clock, and the recorded shapes (recorded_billing_oauth)."""

import json
from datetime import UTC, date, datetime, timedelta

from .conftest import DB, MAIN
from .openapi_check import Exchange

INVOICES = "/v1/organizations/acme/invoices"
FULL_PAGE = {"type", "current_page", "per_page", "next_page", "next_page_url", "prev_page", "prev_page_url",
             "total_count", "total_pages", "data"}


def every(api, path):
    """Every item of a list, page by page (per_page 5)."""
    found, page = [], 1
    while page:
        body = api.get(path, params={"page": page, "per_page": 5}).json()
        found += body["data"]
        page = body["next_page"]
    return found


def months_since(created: str, today: date) -> int:
    first = datetime.fromisoformat(created.replace("Z", "+00:00")).date()
    return (today.year - first.year) * 12 + today.month - first.month


def test_one_invoice_a_month_newest_first_each_with_a_line_item_a_branch(api):
    organization = api.get("/v1/organizations/acme").json()
    invoices = every(api, INVOICES)
    assert len(invoices) == months_since(organization["created_at"], datetime.now(UTC).date())
    assert len({invoice["id"] for invoice in invoices}) == len(invoices)
    starts = [invoice["billing_period_start"] for invoice in invoices]
    assert starts == sorted(starts, reverse=True) and all(start[8:10] == "01" for start in starts)
    assert [invoice["paid"] for invoice in invoices] == [False] + [True] * (len(invoices) - 1)
    assert not any(invoice["overdue"] for invoice in invoices[1:])

    # the month before last: app's main (PS_40, 99.00 a month) and pgapp's main (PS_20_AWS_X86, 26.00), both whole
    billed = invoices[1]
    assert api.get(f"{INVOICES}/{billed['id']}").json() == billed
    items = api.get(f"{INVOICES}/{billed['id']}/line-items").json()
    assert items.keys() == FULL_PAGE
    assert sorted((item["database_name"], item["metric_name"], item["subtotal"]) for item in items["data"]) == [
        ("app", "PS_40", 99.0), ("pgapp", "PS_20_AWS_X86", 26.0)]
    assert billed["total"] == "125.00"
    app_item = next(item for item in items["data"] if item["database_name"] == "app")
    assert app_item["resource"]["name"] == "main" and app_item["database_id"] == api.get(DB).json()["id"]

    # the first month, before any database: nothing billed
    first = invoices[-1]
    assert first["total"] == "0.00"
    assert api.get(f"{INVOICES}/{first['id']}/line-items").json()["data"] == []


def test_a_month_that_ends_brings_its_invoice_with_the_branches_it_had(api):
    before = every(api, INVOICES)
    created = api.post(f"{DB}/branches", json={"name": "billed", "parent_branch": "main"})
    assert created.status_code == 201, created.text
    now = datetime.now(UTC)
    next_month = date(now.year + now.month // 12, now.month % 12 + 1, 1)
    api.advance((datetime(next_month.year, next_month.month, 1, tzinfo=UTC) - now + timedelta(hours=1)).total_seconds())
    after = every(api, INVOICES)
    assert len(after) == len(before) + 1 and after[1:] == [dict(before[0], paid=True, overdue=False)] + before[1:]
    items = api.get(f"{INVOICES}/{after[0]['id']}/line-items").json()["data"]
    assert sorted(item["resource"]["name"] for item in items if item["database_name"] == "app") == ["billed", "main"]
    assert after[0]["paid"] is False and after[0]["overdue"] is False
    api.advance(15 * 86400)
    assert api.get(f"{INVOICES}/{after[0]['id']}").json()["overdue"] is True


def test_an_unknown_invoice_is_not_found(api):
    for path in (f"{INVOICES}/nope", f"{INVOICES}/nope/line-items"):
        response = api.get(path)
        assert response.status_code == 404 and response.json()["code"] == "not_found"
    assert api.get("/v1/organizations/nowhere/invoices").status_code in (403, 404)


def test_recorded_shapes_list_without_pages_and_bill_dates(api):
    full = every(api, INVOICES)
    assert api.control("POST", "/settings", json={"recorded_billing_oauth": True}).status_code == 200
    first = api.get(INVOICES, params={"per_page": 5}).json()
    assert first.keys() == {"type", "next_page", "data"} and (first["type"], first["next_page"]) == ("list", 2)
    recorded = every(api, INVOICES)
    assert [invoice["id"] for invoice in recorded] == [invoice["id"] for invoice in full]
    billed = recorded[1]
    assert billed["total"] == "125.00"
    start, end = date.fromisoformat(billed["billing_period_start"]), date.fromisoformat(billed["billing_period_end"])
    assert start.day == 1 and (end + timedelta(days=1)).day == 1 and end.month == start.month
    assert api.get(f"{INVOICES}/{billed['id']}").json() == billed
    items = api.get(f"{INVOICES}/{billed['id']}/line-items").json()
    assert items.keys() == {"type", "next_page", "data"} and items["next_page"] is None
    assert all(isinstance(item["subtotal"], float) for item in items["data"])


def test_recorded_billing_oauth_excuses_only_the_answers_about_invoices_and_oauth_applications(published):
    envelope = json.dumps({"type": "list", "next_page": None, "data": []}).encode()
    token = json.dumps({"id": "t", "name": None, "display_name": "CLI", "avatar_url": "", "expires_at": None,
                        "created_at": "2026-01-01T00:00:00Z", "updated_at": "2026-01-01T00:00:00Z",
                        "last_used_at": None, "actor_id": None, "actor_display_name": None, "actor_type": None,
                        "oauth_accesses_by_resource": {"database": {}}}).encode()
    tokens = "/v1/organizations/acme/oauth-applications/a/tokens/t"

    def kind(settings, where, body):
        return published.check(Exchange("GET", where, 200, "application/json", body, settings=settings)).kind

    recorded = {"recorded_billing_oauth": True}
    assert kind(recorded, INVOICES, envelope) == kind(recorded, tokens, token) == "expected"
    assert kind({}, INVOICES, envelope) == kind({}, tokens, token) == "violation"
    assert kind(recorded, f"{MAIN}/backups", envelope) == "violation"  # a list of backups is not excused
