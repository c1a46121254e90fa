# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A branch's schema lint errors, as the platform's schema/lint endpoint gives them, and the sentence that names
them."""

from __future__ import annotations

from ansible_collections.planetscale.cloud.plugins.module_utils.client import ApiError, path

NO_LINT = "The platform has no schema lint for %s (%s); lint is a MySQL feature of the platform."


def lint_path(branch_path):
    return branch_path + path("schema", "lint")


def read_lint(client, branch_path, label, keyspace=None, kind=None):
    """(errors, note): every lint error of a branch's schema (every page) or those of one keyspace, and None; or no
    errors and a sentence (about label, "branch 'dev' of database 'shop'") where the platform has no lint for the
    branch: a PostgreSQL branch (kind, where the caller has the branch's record: nothing is read), or one whose
    schema/lint answers 404 (the caller has read the branch or its schema, so the branch exists)."""
    if kind == "postgresql":
        return [], NO_LINT % (label, "it is a PostgreSQL branch")
    try:
        found = list(client.paginate(lint_path(branch_path)))
    except ApiError as error:
        if error.status != 404:
            raise
        return [], NO_LINT % (label, "its schema lint answered 404")
    if keyspace:
        return [error for error in found if error.get("keyspace_name") in (None, keyspace)], None
    return found, None


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
