# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A branch's schema and its lint errors, as the platform's schema and schema/lint endpoints give them."""

from __future__ import annotations

from ansible_collections.planetscale.cloud.plugins.module_utils.client import path


def schema_path(branch_path):
    return branch_path + path("schema")


def lint_path(branch_path):
    return branch_path + path("schema", "lint")


def read_schema(client, branch_path, keyspace=None):
    """The tables of a branch's schema (name, raw DDL, html); the endpoint answers one list, not pages."""
    answer = client.get(schema_path(branch_path), params=dict(keyspace=keyspace) if keyspace else None)
    tables = answer.get("data")
    if not isinstance(tables, list) or not all(isinstance(table, dict) for table in tables):
        raise client.wrong_answer("the answer has no data list of tables")
    return tables


def read_lint_errors(client, branch_path, keyspace=None):
    """Every lint error of a branch's schema (every page), or those of one keyspace."""
    found = list(client.paginate(lint_path(branch_path)))
    if keyspace:
        return [error for error in found if error.get("keyspace_name") in (None, keyspace)]
    return found


def describe_lint_error(error):
    """One lint error as a sentence part: the table (or what else it is about), the error, the docs link."""
    subject = ("table %r" % error["table_name"] if error.get("table_name")
               else error.get("subject_type") or "the schema")
    if error.get("keyspace_name"):
        subject += " of keyspace %r" % error["keyspace_name"]
    text = ": ".join(str(part).rstrip(".") for part in (error.get("lint_error"), error.get("error_description"))
                     if part)
    link = " (see %s)" % error["docs_url"] if error.get("docs_url") else ""
    return "%s: %s%s" % (subject, text or "lint error", link)


def lint_sentence(errors):
    """The lint errors, each named: "table 'a' of keyspace 'k': CODE: description (see URL); table 'b': ..."."""
    return "; ".join(describe_lint_error(error) for error in errors)
