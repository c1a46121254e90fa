# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the modules of branches know of the platform's branch records and names."""

from __future__ import annotations

from ansible_collections.planetscale.cloud.plugins.module_utils.resource import capital
from ansible_collections.planetscale.cloud.plugins.module_utils.settle import Waiter


def cluster_size(branch):
    """The cluster size of a branch record: cluster_name, as the OpenAPI names it, or cluster_rate_name, as the
    platform's records often do."""
    return branch.get("cluster_name") or branch.get("cluster_rate_name")


def with_cluster_name(branch):
    """A branch record with cluster_name filled in from cluster_rate_name where only that is given."""
    if branch and not branch.get("cluster_name") and branch.get("cluster_rate_name"):
        branch["cluster_name"] = branch["cluster_rate_name"]
    return branch


def other_size(have, want):
    """Whether a branch's cluster size (have) is known and not the one wanted: PS_10 and SIZE_10 are one size."""
    return bool(have and want) and have.rpartition("_")[2] != want.rpartition("_")[2]


def is_ready(record):
    """Whether a database or branch record says it is ready: ready true, or, where the record has no ready field
    (the platform's database records often carry none), state ready."""
    if record.get("ready") is not None:
        return bool(record["ready"])
    return record.get("state") == "ready"


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
