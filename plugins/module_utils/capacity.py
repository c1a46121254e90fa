# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The capacity and configuration of a branch: its change and resize requests (their states, the one still running,
the wait for one), the PostgreSQL parameters and extensions of a branch (each a bare JSON array on the platform), and
the refusal of a branch that is not a PostgreSQL branch. Parameters, of a branch or of a bouncer: their shape, the
values the platform would refuse, and the consent a change that restarts the server needs (allow_restart).

A change request (PATCH .../changes, PATCH .../cluster) or a VTGate resize request (PUT .../resizes) goes
queued or pending, then resizing, then completed, or canceled. Lists of them are newest first.
"""

from __future__ import annotations

from ansible_collections.planetscale.cloud.plugins.module_utils.base import ModuleFailure
from ansible_collections.planetscale.cloud.plugins.module_utils.errors import ApiError, json_kind
from ansible_collections.planetscale.cloud.plugins.module_utils.resource import capital

# The states of a change request and of a VTGate resize request, running ones first (a bouncer's resize requests take
# pending, resizing, completed and canceled).
REQUEST_STATES = ("queued", "pending", "resizing", "canceled", "completed")
RUNNING = REQUEST_STATES[:3]  # queued, pending, resizing

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


def running(requests):
    """The newest request of a list (newest first) that is still queued, pending or resizing, or None."""
    return next((request for request in requests if request.get("state") in RUNNING), None)


def flat_parameters(parameters):
    """{namespace: {name: value}}, the form a change request takes, as {"namespace.name": value}; ModuleFailure for
    another shape."""
    flat = {}
    for namespace, values in (parameters or {}).items():
        if not isinstance(values, dict) or not values or any(
                isinstance(value, (dict, list)) or value is None for value in values.values()):
            raise ModuleFailure("parameters must map a namespace to parameter names and their values, for example "
                                "{pgconf: {work_mem: 8192}}; %r is not such a mapping." % namespace)
        flat.update(("%s.%s" % (namespace, name), value) for name, value in values.items())
    return flat


def request_path(kind):
    """The path segment below a branch of its change (kind change) or resize (kind resize) requests."""
    return REQUESTS[kind][1]


def parameter_text(value):
    """A parameter's value as the platform stores it (a string): booleans true and false, others as written."""
    return ("true" if value else "false") if isinstance(value, bool) else str(value).strip()


def _number(value):
    return str(int(value)) if float(value).is_integer() else str(value)


def parameter_problem(record, value):
    """Why the platform would refuse value for a parameter record (its type, range or options), or None."""
    kind, value = record.get("parameter_type"), parameter_text(value)
    if record.get("immutable"):
        return "is immutable: the platform sets it"
    if kind == "boolean" and value.lower() not in ("true", "false", "on", "off"):
        return "takes true or false, not %r" % value
    if kind == "select" and record.get("options") and value not in record["options"]:
        return "takes one of %s, not %r" % (", ".join(record["options"]), value)
    if kind in ("integer", "float"):
        try:
            number = int(value) if kind == "integer" else float(value)
        except ValueError:
            return "takes %s, not %r" % ("an integer" if kind == "integer" else "a number", value)
        low, high = record.get("min"), record.get("max")
        if (low or high) and not low <= number <= high:
            return "takes %s to %s, not %s" % (_number(low), _number(high), value)
    return None


def restarting(records, names):
    """The names, sorted, whose parameter record (records: name -> the platform's record, which the branch's
    parameters and a bouncer's carry) says that a change restarts the server (restart: true)."""
    return sorted(name for name in names if (records.get(name) or {}).get("restart") is True)


def consent_to_restart(module, names, server):
    """Parameters whose change restarts server (names, from restarting()): in check mode a warning names them;
    otherwise the task fails, before any write, unless it sets allow_restart. Returns names."""
    if not names:
        return names
    changing = "changing %s" % " and ".join(names)
    if module.ctx.check_mode:
        module.ctx.warn("%s: %s would restart %s, which drops its connections%s." % (
            capital(module.label()), changing, server,
            "" if module.params["allow_restart"] else "; the task needs allow_restart: true to do it"))
    elif not module.params["allow_restart"]:
        raise ModuleFailure("%s: %s restarts %s, which drops its connections; set allow_restart: true to accept the "
                            "restart, or leave %s out of parameters." % (
                                capital(module.label()), changing, server, "it" if len(names) == 1 else "them"))
    return names
