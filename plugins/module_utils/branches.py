# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the modules of branches know of the platform's branch records and names."""

from __future__ import annotations

import re

from ansible_collections.planetscale.cloud.plugins.module_utils.base import ModuleFailure
from ansible_collections.planetscale.cloud.plugins.module_utils.resource import capital
from ansible_collections.planetscale.cloud.plugins.module_utils.settle import Waiter


def cluster_size(branch):
    """The cluster size of a branch record: cluster_name, as the OpenAPI names it, or cluster_rate_name, as the
    platform's records often do."""
    return branch.get("cluster_name") or branch.get("cluster_rate_name")


def first(*values):
    """The first of values that is not None, else None."""
    return next((value for value in values if value is not None), None)


def with_cluster_name(branch):
    """A branch record with cluster_name filled in from cluster_rate_name where only that is given."""
    if branch and not branch.get("cluster_name") and branch.get("cluster_rate_name"):
        branch["cluster_name"] = branch["cluster_rate_name"]
    return branch


# What a cluster size name can look like; which names exist is the platform's to say (cluster-size-skus, per engine):
# PS_10, PS_DEV, PS_10_AWS_ARM, PS_DEV_AWS_X86, M1_10_AWS_AMD_D_METAL_10, M7_160_D_METAL_460, SIZE_10...
CLUSTER_SIZE = re.compile(r"[A-Za-z][A-Za-z0-9]*(_[A-Za-z0-9]+)*")


def check_cluster_size(size):
    """Refuse, before any request, a cluster_size that cannot be a name (blank, spaces, path characters); any form
    of name passes, since the platform lists the sizes (and refuses one it does not have, in a sentence)."""
    if size is not None and not CLUSTER_SIZE.fullmatch(size):
        raise ModuleFailure("cluster_size must be a cluster size name such as PS_10 or PS_10_AWS_ARM (see "
                            "planetscale.cloud.cluster_size_info), not %r." % size)


ENGINES = dict(postgresql="PostgreSQL", mysql="MySQL")


def listed_size(module, size, kind):
    """A cluster size (SIZE_10 spelt PS_10) that the organization may use for the engine (kind: mysql, postgresql;
    None: mysql), as cluster-size-skus lists its enabled sizes; ModuleFailure naming those it may use otherwise."""
    name = size_name(size)
    answer = module.client.request("GET", module.org_path("cluster-size-skus"), params=dict(engine=kind or "mysql"),
                                   any_json=True)
    skus = answer.get("data", []) if isinstance(answer, dict) else answer or []
    names = [sku.get("name") for sku in skus if isinstance(sku, dict) and sku.get("enabled", True)]
    if name not in names:
        raise ModuleFailure("cluster_size %s is not a %s cluster size organization %r may use: one of %s." % (
            size, ENGINES.get(kind, kind), module.params["organization"], ", ".join(names)))
    return name


def size_name(size):
    """A cluster size as the platform names it: SIZE_10, the older spelling, is PS_10; other names are kept."""
    return "PS_" + size[len("SIZE_"):] if size.startswith("SIZE_") else size


def other_size(have, want):
    """Whether a branch's cluster size (have) is known and not the one wanted: PS_10 and SIZE_10 are one size,
    PS_10_AWS_ARM and PS_20_AWS_ARM are two."""
    return bool(have and want) and size_name(have) != size_name(want)


# The storage a branch or a new database takes, by the API's names (the modules document the ranges): least, most.
STORAGE_RANGES = (("minimum_storage_bytes", 0, None), ("maximum_storage_bytes", 0, None), ("storage_iops", 100, 64000),
                  ("storage_throughput_mibs", 125, 4000))


def check_storage(storage, names=None):
    """Refuse, before any request, storage the platform refuses: a value outside its range, a minimum above the
    maximum. storage: the values given, by the API's names; names: the option's name of each where it differs."""
    names = names or {}
    for key, least, most in STORAGE_RANGES:
        value = storage.get(key)
        if value is not None and not least <= value <= (most or value):
            raise ModuleFailure("storage.%s must be %s, not %d." % (
                names.get(key, key), "%d to %d" % (least, most) if most else "%d or more" % least, value))
    low, high = storage.get("minimum_storage_bytes"), storage.get("maximum_storage_bytes")
    if None not in (low, high) and low > high:
        raise ModuleFailure("storage.%s must be no more than storage.%s, not %d above %d." % (
            names.get("minimum_storage_bytes", "minimum_storage_bytes"),
            names.get("maximum_storage_bytes", "maximum_storage_bytes"), low, high))


def is_ready(record):
    """Whether a database or branch record says it is ready: ready true, or, where the record has no ready field
    (the platform's database records often carry none), state ready."""
    return bool(first(record.get("ready"), record.get("state") == "ready"))


ASLEEP = ("sleeping", "sleep_in_progress")  # states that do not become ready by themselves


def readiness(label, key, need=None):
    """The wait for a branch or a database (label: "branch 'dev' of database 'shop'"; key: the result's key, branch
    or database) to be ready, or asleep; need: what the task does next that needs it ready ("be promoted"), when
    waiting is not the user's choice."""
    what = capital(label)
    remedy = "it must be ready to %s: raise wait_timeout" % need if need else "raise wait_timeout or set wait to false"
    return Waiter(
        "%s to be ready" % label, done=lambda record: is_ready(record) or record.get("state") in ASLEEP,
        state=lambda record: record.get("state"), key=key,
        failed=lambda record: "%s was deleted while waiting for it to be ready." % what if record is None else None,
        timed_out=lambda record, timeout: "%s was not ready after %s seconds (state %r); %s." % (
            what, timeout, record.get("state"), remedy))
