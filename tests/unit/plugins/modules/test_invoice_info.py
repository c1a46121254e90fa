# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

import pytest

from ansible_collections.planetscale.cloud.plugins.module_utils.base import ModuleFailure
from ansible_collections.planetscale.cloud.plugins.modules.invoice_info import InvoiceInfo

URL = "/v1/organizations/acme/invoices"

MODULE = InvoiceInfo  # run by the `run` fixture (tests/unit/conftest.py) with ARGS
ARGS = dict(organization="acme", service_token_id="svc", service_token="s3cret")


def invoice(month, total="99.00", paid=True, dates=True):
    """An invoice of a month of 2026: billing periods as the platform's recorded dates, or as the published times."""
    start, end = ("2026-%02d-01" % month, "2026-%02d-28" % month) if dates else (
        "2026-%02d-01T00:00:00.000Z" % month, "2026-%02d-01T00:00:00.000Z" % (month + 1))
    return dict(id="inv%d" % month, total=total, billing_period_start=start, billing_period_end=end, paid=paid,
                overdue=False)


def recorded(*items, next_page=None):
    """A page as the platform's recorded invoice lists have it: {type, next_page, data}."""
    return (200, dict(type="list", next_page=next_page, data=list(items)))


def item(number, subtotal):
    return dict(id="li%d" % number, subtotal=subtotal, description="PS-40 cluster", metric_name="PS_40",
                database_name="app")


def test_every_page_newest_first_and_the_totals_added_up_exactly(server, run):
    server.script = [recorded(invoice(1, "0.10"), invoice(3, "0.10"), next_page=2), recorded(invoice(2, "0.10"))]
    result = run()
    assert [found["id"] for found in result["invoices"]] == ["inv3", "inv2", "inv1"]
    assert result["total"] == "0.30"  # not 0.30000000000000004: the strings are added as decimals
    assert [r["query"]["page"] for r in server.requests] == [["1"], ["2"]]
    assert all("line_items" not in found for found in result["invoices"])  # a list reads none unless asked


def test_one_by_id_comes_with_its_line_items(server, run):
    server.script = [(200, invoice(5, "125.00")), recorded(item(1, 99.0), item(2, 26.0))]
    result = run(id="inv5")
    assert result["invoices"][0]["line_items"] == [item(1, 99.0), item(2, 26.0)]
    assert result["total"] == "125.00"
    assert [r["path"] for r in server.requests] == [URL + "/inv5", URL + "/inv5/line-items"]

    server.requests.clear()
    server.script = [(200, invoice(5))]
    assert "line_items" not in run(id="inv5", line_items=False)["invoices"][0]
    assert len(server.requests) == 1


def test_an_invoice_that_does_not_exist_is_an_empty_list_in_an_organization_that_does(server, run):
    server.script = [(404, dict(code="not_found")), recorded()]
    assert run(id="nope") == dict(changed=False, invoices=[], total="0")
    assert server.requests[1]["path"] == URL and server.requests[1]["query"]["per_page"] == ["1"]
    server.script = [(404, dict(code="not_found")), (404, dict(code="not_found"))]
    with pytest.raises(ModuleFailure) as caught:
        run(id="nope")
    assert "Check that organization 'acme' exists" in caught.value.msg


def test_every_listed_invoice_with_its_line_items_when_asked(server, run):
    server.script = [recorded(invoice(2), invoice(1)), recorded(item(1, 1.5)), recorded(item(2, 2.5))]
    result = run(line_items=True)
    assert [found["line_items"][0]["subtotal"] for found in result["invoices"]] == [1.5, 2.5]
    assert [r["path"] for r in server.requests[1:]] == [URL + "/inv2/line-items", URL + "/inv1/line-items"]


@pytest.mark.parametrize("dates", [True, False], ids=["recorded dates", "published times"])
def test_since_and_paid_choose_the_invoices_in_either_shape_of_the_period(server, run, dates):
    months = [invoice(month, paid=month < 4, dates=dates) for month in (4, 3, 2, 1)]
    server.script = [recorded(*months)]
    assert [found["id"] for found in run(since="2026-02-01")["invoices"]] == ["inv4", "inv3", "inv2"]
    server.script = [recorded(*months)]
    result = run(since="2026-02-01", paid=True)
    assert [found["id"] for found in result["invoices"]] == ["inv3", "inv2"] and result["total"] == "198.00"
    server.script = [recorded(*months)]
    assert [found["id"] for found in run(paid=False)["invoices"]] == ["inv4"]


@pytest.mark.parametrize("since", ["2026-13-01", "2026-02-30", "yesterday", "2026-1-1", ""])
def test_a_since_that_is_no_date_is_a_sentence_before_any_request(server, run, since):
    with pytest.raises(ModuleFailure) as caught:
        run(since=since)
    assert caught.value.msg == "since must be a date such as 2026-01-01 (year, month, day), not %r." % since
    assert server.requests == []


def test_a_total_written_as_a_number_is_kept_and_one_that_is_no_number_fails_naming_the_invoice(server, run):
    server.script = [recorded(invoice(1, 12.5), invoice(2, 7))]
    result = run()
    assert [found["total"] for found in result["invoices"]] == ["7", "12.5"] and result["total"] == "19.5"
    for total in ("twelve", None, True, "NaN"):
        server.script = [recorded(invoice(1, total))]
        with pytest.raises(ModuleFailure) as caught:
            run()
        assert caught.value.msg == ("Invoice inv1 has the total %r, which is not a decimal number; the collection "
                                    "cannot add it up." % (total,))
