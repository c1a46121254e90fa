#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: invoice_info
short_description: List the invoices of an organization, with their line items
version_added: 0.3.0
description:
  - Returns the invoices of an organization, newest billing period first, walking all pages of the list, or the one
    named by O(id); with each, where asked, its line items (every page).
  - RV(total) adds up the totals of the invoices returned, exactly (the platform writes an invoice's total as a
    decimal string).
  - An invoice that does not exist is not an error; RV(invoices) is then empty. An organization that does not exist is
    an error.
author:
  - planetscale.cloud contributors (@planetscale-ansible)
options:
  id:
    description: The ID of one invoice to read. RV(invoices) then holds that invoice, or nothing.
    type: str
  line_items:
    description:
      - Read each invoice's line items into RV(invoices[].line_items); one more request an invoice.
      - By default, they are read with O(id) and not for a list.
    type: bool
  since:
    description:
      - Only the invoices whose billing period begins on this day or later, a date such as V(2026-01-01).
      - An invoice whose period the platform does not state as a date or time is kept.
    type: str
  paid:
    description: Only the invoices that are paid (V(true)) or not paid yet (V(false)).
    type: bool
extends_documentation_fragment:
  - planetscale.cloud.api
  - planetscale.cloud.api.connection
  - planetscale.cloud.api.organization
  - planetscale.cloud.attributes.info
notes:
  - The platform's invoice records may give the billing period as two dates (V(2026-10-01), V(2026-10-31)) or as the
    two times that bound it; the module returns them as the platform answers, and compares O(since) with the date the
    period begins.
"""

EXAMPLES = r"""
- name: The invoices of this year, with what they add up to
  planetscale.cloud.invoice_info:
    organization: acme
    since: "{{ now(utc=true).strftime('%Y') }}-01-01"
  register: this_year

- name: Say what this year cost so far
  ansible.builtin.debug:
    msg: "{{ this_year.invoices | length }} invoices, {{ this_year.total }} in all"

- name: The invoices not paid yet
  planetscale.cloud.invoice_info:
    organization: acme
    paid: false
  register: unpaid

- name: The newest invoice, with its line items
  planetscale.cloud.invoice_info:
    organization: acme
    id: "{{ unpaid.invoices[0].id }}"
  register: newest
  when: unpaid.invoices | length > 0

- name: What each database cost in it
  ansible.builtin.debug:
    msg: "{{ item.database_name }}: {{ item.description }}: {{ item.subtotal }}"
  loop: "{{ newest.invoices[0].line_items | default([]) }}"
  loop_control:
    label: "{{ item.id }}"
  when: newest is not skipped
"""

RETURN = r"""
invoices:
  description:
    - The invoices, newest billing period first, as the platform answers them. With O(id), a list of the one invoice,
      or an empty list.
  returned: success
  type: list
  elements: dict
  contains:
    id:
      description: The ID of the invoice.
      type: str
    total:
      description: The total of the invoice, a decimal number written as a string, such as V(125.00).
      type: str
    billing_period_start:
      description: The first day of the billing period (a date, or the time it begins).
      type: str
    billing_period_end:
      description: The end of the billing period (its last day, or the time it ends).
      type: str
    paid:
      description: Whether the invoice is paid.
      type: bool
    overdue:
      description: Whether the invoice is past due and not paid.
      type: bool
    line_items:
      description:
        - The invoice's line items, each with its C(id), C(subtotal) (a number), C(description), C(metric_name) (the
          billed item), C(database_id), C(database_name), C(cloudflare_billed) and C(resource) (the billed resource's
          C(id) and C(name)).
      returned: when O(line_items=true), or with O(id) unless O(line_items=false)
      type: list
      elements: dict
      sample: [{id: li1, subtotal: 99.0, description: PS-40 cluster, metric_name: PS_40, database_name: app}]
total:
  description: The sum of the totals of RV(invoices), as a decimal string; V(0) when there are none.
  returned: success
  type: str
  sample: "1500.00"
"""

import re
from datetime import date
from decimal import Decimal, InvalidOperation

from ansible_collections.planetscale.cloud.plugins.module_utils.adapter import run_module
from ansible_collections.planetscale.cloud.plugins.module_utils.base import InfoModule, ModuleFailure
from ansible_collections.planetscale.cloud.plugins.module_utils.options import CONNECTION, CREDENTIALS, ORGANIZATION

DAY = re.compile(r"\d{4}-\d{2}-\d{2}")


def day_of(value):
    """The date an ISO 8601 date or time begins with, as text (YYYY-MM-DD); None for anything else."""
    found = DAY.match(value) if isinstance(value, str) else None
    return found.group(0) if found else None


class InvoiceInfo(InfoModule):
    """An invoice named that is absent is an empty list; the organization being absent is a failure."""

    option_sets = (CREDENTIALS, CONNECTION, ORGANIZATION)
    argument_spec = dict(
        id=dict(type="str"),
        line_items=dict(type="bool"),
        since=dict(type="str"),
        paid=dict(type="bool"),
    )
    path_options = ("id",)
    must_exist = ()  # a 404 names the organization only: the list that answers it is the organization's

    def validate(self):
        super().validate()
        since = self.params["since"]
        if since is not None:
            try:
                date.fromisoformat(since if DAY.fullmatch(since) else "")
            except ValueError:
                raise ModuleFailure("since must be a date such as 2026-01-01 (year, month, day), not %r." % since)

    def run(self):
        invoices_url = self.org_path("invoices")
        if self.params["id"] is not None:
            found = self.client.get("%s/%s" % (invoices_url, self.params["id"]), missing_ok=True)
            if found is None:
                self.client.get(invoices_url, params=dict(per_page=1))  # a missing organization fails
            invoices = [found] if found is not None else []
        else:
            invoices = self.items(invoices_url)
        invoices = [invoice for invoice in invoices if self.wanted(invoice)]
        invoices.sort(key=lambda invoice: str(invoice.get("billing_period_start")), reverse=True)
        read_items = self.params["line_items"]
        if read_items is None:
            read_items = self.params["id"] is not None
        ids = [self.client.record_id(invoice, "an invoice") for invoice in invoices]
        for invoice, invoice_id in zip(invoices, ids):
            invoice["total"] = self.decimal(invoice)
            if read_items:
                invoice["line_items"] = self.items(self.org_path("invoices", invoice_id, "line-items"))
        return dict(invoices=invoices, total=str(sum((Decimal(invoice["total"]) for invoice in invoices), Decimal(0))))

    def wanted(self, invoice):
        if self.params["paid"] is not None and bool(invoice.get("paid")) != self.params["paid"]:
            return False
        begins = day_of(invoice.get("billing_period_start"))
        return self.params["since"] is None or begins is None or begins >= self.params["since"]

    def decimal(self, invoice):
        """The invoice's total as a decimal string: the platform's string, or a number written so; else a failure."""
        total = invoice.get("total")
        value = None
        if isinstance(total, (str, int, float)) and not isinstance(total, bool):
            try:
                value = Decimal(str(total).strip())
            except InvalidOperation:
                pass
        if value is None or not value.is_finite():
            raise ModuleFailure("Invoice %s has the total %r, which is not a decimal number; the collection cannot "
                                "add it up." % (invoice.get("id"), total))
        return str(total).strip()


def main():
    run_module(InvoiceInfo)


if __name__ == "__main__":
    main()
