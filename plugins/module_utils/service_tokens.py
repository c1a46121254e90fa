# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The accesses of service tokens, read in the form the service_token module declares them.

An access is a name (read_branch, create_databases, ...) on a database, or on the organization.
The API lists them one record each (GET service-tokens/{id}/access) and adds or removes several
on one database in one request (POST or DELETE service-tokens/{id}/access with
{"database": NAME, "access": [...]}, no database for the organization). Here they are a list
of {database, access} entries, one per database, sorted; the organization's entry has no database.
A token's secret, shown only by its create, is shown_once's.
"""

from __future__ import annotations

ORGANIZATION = None  # the key of organization-wide accesses


def as_entries(grouped):
    """The list form of {database or None: names}: one entry per database, the organization's first."""
    entries = []
    for database in sorted(grouped, key=lambda name: (name is not None, name or "")):
        entry = dict(access=sorted(grouped[database]))
        if database is not None:
            entry = dict(database=database, **entry)
        entries.append(entry)
    return entries


def read_accesses(client, url):
    """The accesses of a token, in the list form, from GET service-tokens/{id}/access (url)."""
    answer = client.get(url)
    data = answer.get("data")
    if not isinstance(data, list):
        raise client.wrong_answer("the answer has no data list of accesses")
    grouped = {}
    for access in data:
        resource = access.get("resource") or {}
        kind = (resource.get("type") or access.get("resource_type") or "").lower()
        database = (resource.get("name") or access.get("resource_name")) if kind == "database" else ORGANIZATION
        grouped.setdefault(database, set()).add(access.get("access"))
    return as_entries(grouped)
