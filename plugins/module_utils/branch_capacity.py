# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The capacity of a branch, changed in place (the options cluster_size on an existing branch, replicas, storage,
parameters and vtgate of the branch module): each engine's options, the cluster sizes the organization may use, the
parameters the branch has and the values they take, what the branch has of each (its record, else its newest
completed request), and the requests that change it: one change request (PostgreSQL), or a cluster change and a
VTGate resize (MySQL). capacity_changes.CapacityChanges sends them and waits.
"""

from __future__ import annotations

from ansible_collections.planetscale.cloud.plugins.module_utils.base import ModuleFailure
from ansible_collections.planetscale.cloud.plugins.module_utils.branches import (
    ENGINES, check_storage, cluster_size, first, listed_size, other_size)
from ansible_collections.planetscale.cloud.plugins.module_utils.capacity import (
    REQUESTS, consent_to_restart, flat_parameters, parameter_problem, parameter_text, request_path, restarting,
    running)
from ansible_collections.planetscale.cloud.plugins.module_utils.capacity_changes import CapacityChanges

# The storage settings a task sets (option -> the API's key), the VTGate settings (option -> the API's key).
STORAGE = dict(minimum_bytes="minimum_storage_bytes", maximum_bytes="maximum_storage_bytes",
               autoscaling="storage_autoscaling", iops="storage_iops", throughput_mibs="storage_throughput_mibs")
VTGATE = dict((name, "vtgate_" + name) for name in ("size", "count", "max_count", "autoscaling",
                                                    "target_cpu_utilization"))
ENGINE_OPTIONS = dict(postgresql=("replicas", "storage", "parameters"), mysql=("vtgate",))
WRONG_ENGINE = "%s only for %s branches, and branch %r of database %r is a %s branch; leave %s out."


def given(options):
    """The suboptions of a dict option that a task gives (not None)."""
    return dict((name, value) for name, value in (options or {}).items() if value is not None)


def check_capacity_options(params):
    """Refuse, before any request, parameters of another shape, storage sizes that cannot hold and fewer than 0
    replicas."""
    flat_parameters(params["parameters"])
    check_storage(dict((STORAGE[k], v) for k, v in given(params["storage"]).items()),
                  dict((v, k) for k, v in STORAGE.items()))
    if (params["replicas"] or 0) < 0:
        raise ModuleFailure("replicas must be 0 or more, not %d." % params["replicas"])


def same_value(record, have, want):
    if record.get("parameter_type") in ("integer", "float"):
        try:
            return float(have) == float(parameter_text(want))
        except (TypeError, ValueError):
            return False
    if record.get("parameter_type") == "boolean":
        return str(have).lower() in ("true", "on") if parameter_text(want).lower() in ("true", "on") else \
            str(have).lower() in ("false", "off")
    return have == parameter_text(want)


class BranchCapacity(CapacityChanges):
    """The capacity a task gives for a branch (cluster_size on an existing branch, replicas, storage, parameters,
    vtgate): checked before any write, compared with what the branch has, and changed by one change request
    (PostgreSQL) or a cluster change and a VTGate resize (MySQL), each waited for until it completes."""

    kinds = REQUESTS

    def __init__(self, module, new):
        super().__init__(module)
        self.want = dict((name, self.params[name]) for name in ("cluster_size", "replicas") if self.params[name]
                         is not None and (name != "cluster_size" or not new))
        self.want.update((name, value) for name, value in (
            ("storage", dict((STORAGE[k], v) for k, v in given(self.params["storage"]).items())),
            ("parameters", flat_parameters(self.params["parameters"])),
            ("vtgate", dict((VTGATE[k], v) for k, v in given(self.params["vtgate"]).items()))) if value)
        self.catalogue, self.kind = {}, None
        self.catalogue_of = None  # the branch whose parameters self.catalogue holds

    def check(self, source, kind):
        """Refuse, before any write, options of the other engine, a size the organization does not list for the
        engine (read only when the task would create or resize with it) and a parameter the branch (or its parent,
        source, for a new branch) does not have or a value it does not take."""
        self.kind, branch, size = kind, source.get("name"), self.params["cluster_size"]
        wrong = [name for name in ENGINE_OPTIONS.get("mysql" if kind == "postgresql" else "postgresql", ())
                 if name in self.want or self.params[name] is not None]
        if kind in ENGINES and wrong:
            other = "postgresql" if kind == "mysql" else "mysql"
            raise ModuleFailure(WRONG_ENGINE % (" and ".join(wrong) + (" is" if len(wrong) == 1 else " are"),
                                                ENGINES[other], branch, self.params["database"], ENGINES[kind],
                                                "it" if len(wrong) == 1 else "them"))
        if size is not None and ("cluster_size" not in self.want or other_size(cluster_size(source), size)):
            self.want_size(kind)
        if "parameters" in self.want:
            self.read_parameters(branch)
            for name, value in sorted(self.want["parameters"].items()):
                record = self.catalogue.get(name)
                problem = "is not a parameter of the branch" if record is None else parameter_problem(record, value)
                if problem:
                    raise ModuleFailure("parameters: %s %s; see planetscale.cloud.postgres_parameter_info for the "
                                        "branch's parameters and their ranges." % (name, problem))

    def want_size(self, kind):
        name = listed_size(self.module, self.params["cluster_size"], kind)
        if "cluster_size" in self.want:
            self.want["cluster_size"] = name

    def read_parameters(self, branch):
        """The branch's parameter records (the platform answers a bare list), by namespace.name."""
        records = self.client.request("GET", self.module.url(branch, "parameters"), any_json=True)
        records = records.get("data", []) if isinstance(records, dict) else records or []
        self.catalogue = dict(("%s.%s" % (r.get("namespace"), r.get("name")), r) for r in records)
        self.catalogue_of = branch

    def read(self, resource, checked=False):
        """What the branch has of what the task gives, and the running request of each kind it needs. checked: the
        branch's parameters were read by check() in this task, just before, and are not read again."""
        branch, url = resource, self.module.url(resource["name"])
        have = dict(cluster_size=cluster_size(branch))
        found = {}
        kinds = ["change"] if self.kind == "postgresql" or "cluster_size" in self.want else []
        kinds += ["resize"] if "vtgate" in self.want else []
        for kind in kinds:
            for request in self.client.paginate(url + "/" + request_path(kind)):
                found.setdefault(kind, running([request]))
                if request.get("state") == "completed":
                    found.setdefault(kind + "_completed", request)
                    break
        # the branch's record, else its newest completed request (platform's records: no vtgate_*, no replicas in one)
        done, resized = found.get("change_completed") or {}, found.get("resize_completed") or {}
        have["replicas"] = first(branch.get("replicas"), done.get("replicas"), 2 * bool(branch.get("has_replicas")))
        storage = dict(done, storage_iops=first(branch.get("cluster_iops"), done.get("storage_iops")))
        have["storage"] = dict((key, storage.get(key)) for key in self.want.get("storage", ()))
        if "parameters" in self.want:
            if not (checked and self.catalogue_of == branch["name"]):
                self.read_parameters(branch["name"])
            have["parameters"] = dict((name, (self.catalogue.get(name) or {}).get("value"))
                                      for name in self.want["parameters"])
        vtgate = dict((key, first(branch.get(key), resized.get(key))) for key in VTGATE.values())
        vtgate["vtgate_size"] = first(*[record.get(key) for key in ("vtgate_name", "vtgate_size")
                                        for record in (branch, resized)])
        have["vtgate"] = dict((key, vtgate[key]) for key in self.want.get("vtgate", ()))
        self.have = have
        return dict((kind, found[kind]) for kind in ("change", "resize") if found.get(kind))

    def changes(self):
        """What differs: {option: wanted value}; storage, parameters and vtgate only the keys that differ."""
        changes = {}
        if "cluster_size" in self.want and other_size(self.have["cluster_size"], self.want["cluster_size"]):
            changes["cluster_size"] = self.want["cluster_size"]
        if "replicas" in self.want and self.have["replicas"] != self.want["replicas"]:
            changes["replicas"] = self.want["replicas"]
        for name in ("storage", "vtgate"):
            differ = dict((k, v) for k, v in self.want.get(name, {}).items() if self.have[name].get(k) != v)
            if differ:
                changes[name] = differ
        differ = dict((k, v) for k, v in self.want.get("parameters", {}).items()
                      if not same_value(self.catalogue.get(k) or {}, self.have["parameters"].get(k), v))
        if differ:
            changes["parameters"] = differ
        return changes

    def view(self, fields):
        """Capacity fields as the diff and the result show them: parameters nested by namespace."""
        shown = dict(fields)
        if "parameters" in shown:
            nested = {}
            for name, value in shown["parameters"].items():
                namespace, parameter = name.split(".", 1)
                nested.setdefault(namespace, {})[parameter] = value if value is None else parameter_text(value)
            shown["parameters"] = nested
        for name, keys in (("storage", STORAGE), ("vtgate", VTGATE)):
            if name in shown:
                shown[name] = dict((option, shown[name][key]) for option, key in keys.items() if key in shown[name])
        return super().view(shown)

    def writes(self, changes):
        if self.kind == "postgresql":
            body = dict((k, v) for k, v in changes.items() if k in ("cluster_size", "replicas", "storage"))
            if "parameters" in changes:
                body["parameters"] = self.view(dict(parameters=changes["parameters"]))["parameters"]
            return [("change", "PATCH", "changes", body)]
        writes = [("change", "PATCH", "cluster", dict(cluster_size=changes["cluster_size"]))] \
            if "cluster_size" in changes else []
        return writes + ([("resize", "PUT", "resizes", changes["vtgate"])] if "vtgate" in changes else [])

    def consent(self, changes):
        """The parameters among changes whose change restarts PostgreSQL, as the branch's parameters (already read)
        say; none on a branch this task creates, which serves no one yet. Named in check mode, else refused before any
        write without allow_restart."""
        names = [] if self.module.created else restarting(self.catalogue, changes.get("parameters", ()))
        return consent_to_restart(self.module, names, "PostgreSQL")
