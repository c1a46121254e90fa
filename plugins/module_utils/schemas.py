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
    """One lint error in a sentence: the subject (table ...), the code and description, the docs link."""
    subject = error.get("subject_type") or "table"
    name = error.get("table_name") or error.get("keyspace_name")
    where = "%s %r" % (subject, name) if name else subject
    if error.get("column_name"):
        where += " column %r" % error["column_name"]
    what = ": ".join(part for part in (error.get("lint_error"), error.get("error_description")) if part)
    docs = " (%s)" % error["docs_url"] if error.get("docs_url") else ""
    return "%s: %s%s" % (where, what or "a lint error", docs)


def lint_sentence(errors):
    """The lint errors as a list in a sentence: "table 'logs': NO_UNIQUE_KEY: ... (docs); ..."."""
    return "; ".join(describe_lint_error(error) for error in errors)
