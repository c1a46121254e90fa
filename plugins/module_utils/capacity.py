# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The capacity and configuration of a branch: its change and resize requests (their states, the one still running,
the wait for one), the PostgreSQL parameters and extensions of a branch (each a bare JSON array on the platform), and
the refusal of a branch that is not a PostgreSQL branch.

A change request (PATCH .../changes, PATCH .../cluster) or a VTGate resize request (PUT .../resizes) goes
queued or pending, then resizing, then completed, or canceled. Lists of them are newest first.
"""

from __future__ import annotations

from ansible_collections.planetscale.cloud.plugins.module_utils.base import ModuleFailure
from ansible_collections.planetscale.cloud.plugins.module_utils.errors import ApiError, json_kind

# The states of a change request and of a VTGate resize request, running ones first.
REQUEST_STATES = ("queued", "pending", "resizing", "canceled", "completed")

# Answers of a catalogue endpoint after which the branch's kind is worth reading: an endpoint that a MySQL branch
# does not have.
NOT_FOR_THIS_BRANCH = (400, 404, 409, 422)


def branch_path(module, *segments):
    """The path of the module's branch (options database and branch), and below it."""
    return module.org_path("databases", module.params["database"], "branches", module.params["branch"], *segments)


def json_array(module, url_path, what):
    """A list the API answers as a bare JSON array of objects; a {"data": [...]} envelope is taken too."""
    answer = module.client.request("GET", url_path, any_json=True)
    found = answer.get("data") if isinstance(answer, dict) else answer
    if not isinstance(found, list) or not all(isinstance(item, dict) for item in found):
        kind = "a list of other things than objects" if isinstance(found, list) else json_kind(answer)
        raise module.client.wrong_answer("the answer is %s where a list of %s was expected" % (kind, what))
    return found


def postgres_catalogue(module, segment, what):
    """The records of a PostgreSQL branch's catalogue (segment parameters or extensions).

    A branch of another kind (MySQL) has none: when the API refuses the list or answers it empty, the branch is
    read, and a branch that says it is not a PostgreSQL branch is a sentence; otherwise the API's answer stands.
    """
    try:
        found = json_array(module, branch_path(module, segment), what)
    except ApiError as error:
        if error.status in NOT_FOR_THIS_BRANCH:
            refuse_other_kinds(module, what, error)
        raise
    if not found:
        refuse_other_kinds(module, what)
    return found


def branch_kind(module):
    """mysql or postgresql, as the branch (or else its database) says; None when neither says or they are gone."""
    try:
        branch = module.client.get(branch_path(module), missing_ok=True)
        kind = branch.get("kind") if isinstance(branch, dict) else None
        if branch is not None and not kind:
            database = module.client.get(module.org_path("databases", module.params["database"]), missing_ok=True)
            kind = database.get("kind") if isinstance(database, dict) else None
    except ApiError:
        return None
    return kind if isinstance(kind, str) else None


def refuse_other_kinds(module, what, error=None):
    """Raise the sentence for a branch that is not a PostgreSQL branch; return when it is one, or cannot be told."""
    kind = branch_kind(module)
    if kind and kind != "postgresql":
        extra = dict(status=error.status, error=error.as_dict()) if error is not None else {}
        raise ModuleFailure("Branch %r of database %r is a %s branch: only PostgreSQL branches have %s." % (
            module.params["branch"], module.params["database"], "MySQL (Vitess)" if kind == "mysql" else kind, what),
            **extra)


def blank_names(option, names):
    """Refuse a list of names that holds a blank one (None: not given)."""
    if names is not None and any(not (name or "").strip() for name in names):
        raise ModuleFailure("%s must not hold an empty name; leave it out to return every one." % option)


def selected(records, names=None, **equal):
    """The records whose name is one of names (None: any) and whose fields equal those given (None: any)."""
    return [record for record in records if (names is None or record.get("name") in names) and all(
        value is None or record.get(field) == value for field, value in equal.items())]


# kind -> (the request in sentences, the path segment of the branch's list of them)
REQUESTS = dict(change=("change request", "changes"), resize=("VTGate resize request", "resizes"))


def request_path(kind):
    """The path segment below a branch of its change (kind change) or resize (kind resize) requests."""
    return REQUESTS[kind][1]
