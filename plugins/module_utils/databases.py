# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the modules of databases know of the platform's database records, settings and deletion rules."""

from __future__ import annotations

import re

from ansible_collections.planetscale.cloud.plugins.module_utils.base import ModuleFailure
from ansible_collections.planetscale.cloud.plugins.module_utils.branches import cluster_size, is_ready, other_size
from ansible_collections.planetscale.cloud.plugins.module_utils.client import ApiError
from ansible_collections.planetscale.cloud.plugins.module_utils.resource import capital
from ansible_collections.planetscale.cloud.plugins.module_utils.settle import Waiter, write_and_settle

# The platform's rule for the name of a new database (as for a branch); it refuses any other name with 422.
NEW_NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,62}")
CLUSTER_SIZE = re.compile(r"[A-Za-z][A-Za-z0-9]*(_[A-Za-z0-9]+)*")
# The settings that PATCH takes, by the names the API's PATCH gives them; the record names two of them otherwise.
SETTINGS = ("default_branch", "require_approval_for_deploy", "allow_data_branching", "allow_foreign_key_constraints",
            "automatic_migrations", "migration_framework", "migration_table_name", "restrict_branch_region",
            "insights_raw_queries", "deletion_protected", "production_branch_web_console")
RECORD_NAMES = dict(allow_foreign_key_constraints="foreign_keys_enabled")
VITESS_ONLY = ("automatic_migrations", "migration_framework", "migration_table_name", "allow_data_branching",
               "allow_foreign_key_constraints")
ASLEEP = ("sleeping", "sleep_in_progress")  # states that do not become ready by themselves


def check_database_options(params):
    """Refuse, before any request, input the platform would refuse or that cannot mean anything."""
    present = params["state"] == "present"
    for option in ("name", "new_name") if present else ():
        value = params.get(option)
        if value is not None and not NEW_NAME.fullmatch(value):
            raise ModuleFailure("%s must be a database name the platform accepts: 1 to 63 characters, lower-case "
                                "letters, digits, '-' and '_', starting with a letter or digit; not %r." % (option, value))
    if not present and params.get("new_name") is not None:
        raise ModuleFailure("new_name renames a database that is kept: it does not go with state absent.")
    size = params.get("cluster_size")
    if size is not None and not CLUSTER_SIZE.fullmatch(size):
        raise ModuleFailure("cluster_size must be a cluster size name such as PS_10 (see "
                            "planetscale.cloud.cluster_size_info), not %r." % size)
    replicas = params.get("replicas")
    if replicas is not None and (replicas < 0 or replicas == 1):
        raise ModuleFailure("replicas must be 0 (no high availability) or 2 or more, not %s." % replicas)
    if params.get("kind") == "postgresql":
        refused = [name for name in VITESS_ONLY if params.get(name) is not None]
        if refused:
            raise ModuleFailure("%s only apply to MySQL (Vitess) databases, not to kind postgresql." % ", ".join(refused))
    elif params.get("major_version") is not None:
        raise ModuleFailure("major_version is only for kind postgresql.")
    storage = params.get("storage") or {}
    low, high = storage.get("minimum_storage_bytes"), storage.get("maximum_storage_bytes")
    if any(value is not None and value < 0 for value in (low, high)) or (None not in (low, high) and low > high):
        raise ModuleFailure("storage: minimum_storage_bytes and maximum_storage_bytes are 0 or more, the minimum "
                            "no more than the maximum; not %s and %s." % (low, high))


def managed(record):
    """The managed fields of a database record, by the names of the module's options."""
    fields = dict((name, record.get(RECORD_NAMES.get(name, name))) for name in SETTINGS)
    fields.update(name=record.get("name"), region=(record.get("region") or {}).get("slug"), kind=record.get("kind"))
    return fields


def wanted(params):
    """The managed fields the task gives; the name only where new_name renames the database."""
    fields = dict((name, params[name]) for name in SETTINGS + ("region", "kind") if params.get(name) is not None)
    if params.get("new_name"):
        fields["name"] = params["new_name"]
    return fields


def patch_body(changes):
    """Changed managed fields as the PATCH body: the name is new_name there."""
    return dict(("new_name" if name == "name" else name, value) for name, value in changes.items())


def as_record(values):
    """Option values (a create's or an update's) as the fields of a database record, for a prediction."""
    record = dict((RECORD_NAMES.get(name, name), value) for name, value in values.items() if name != "region")
    if values.get("region"):
        record["region"] = dict(slug=values["region"])
    return record


def readiness(label):
    """The wait for a database (label: "database 'shop'") to be ready, or asleep."""
    what = capital(label)
    return Waiter(
        "%s to be ready" % label, done=lambda db: is_ready(db) or db.get("state") in ASLEEP,
        state=lambda db: db.get("state"), key="database",
        failed=lambda db: "%s was deleted while waiting for it to be ready." % what if db is None else None,
        timed_out=lambda db, timeout: "%s was not ready after %s seconds (state %r); raise wait_timeout or set wait "
                                      "to false." % (what, timeout, db.get("state")))


def deletion_warning(label, organization, request, opened):
    """The warning for a deletion request that waits for another administrator (opened: by this run)."""
    actor = (request.get("actor") or {}).get("display_name")
    return ("%s was not deleted: organization %r requires several administrators to delete a database, so the "
            "platform %s deletion request %s%s. The database stays until another administrator of the organization "
            "also requests its deletion (or the request is withdrawn in the platform's UI)." % (
                capital(label), organization, "opened" if opened else "already has", request.get("id") or "(no id)",
                " by %s" % actor if actor else ""))


PROTECTED_DELETE = ("%s is deletion protected, so the platform does not delete it: set deletion_protected to false "
                    "(with state present) first, then delete it.")


def delete_or_request(module, resource):
    """DELETE the database of a Resource module: None once deleted, or the deletion request the platform opened
    instead. A lost answer is read back (gone, or a pending request: applied; still there without one: sent again)."""
    def read_back(error):  # pylint: disable=unused-argument
        found = module.read_record()
        if found is None:
            return None, True
        if found.get("deletion_request"):
            return found["deletion_request"], True
        return None
    try:
        answer = write_and_settle(lambda: module.client.delete(module.url(resource["name"]), missing_ok=True),
                                  read_back=read_back)[0]
    except ApiError as error:
        if not error.outcome_unknown:
            module.explain_refusal(error)  # a refusal that guard() explains (protected meanwhile) says so
        raise
    return answer if isinstance(answer, dict) and answer else None


def warn_about_cluster_size(module, resource):
    """Warn when the default branch of an existing database has another cluster size than the task gives."""
    url = module.url(resource["name"], "branches", resource.get("default_branch") or "main")
    have, want = cluster_size(module.client.get(url, missing_ok=True) or {}), module.params["cluster_size"]
    if other_size(have, want):
        module.ctx.warn("%s has cluster size %s on its default branch, not %s: cluster_size only shapes a new "
                        "database, so it is left as it is." % (capital(module.label()), have, want))
