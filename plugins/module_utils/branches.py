# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the modules of branches know of the platform's branch records and names."""

from __future__ import annotations

import re

from ansible_collections.planetscale.cloud.plugins.module_utils.base import ModuleFailure
from ansible_collections.planetscale.cloud.plugins.module_utils.resource import capital
from ansible_collections.planetscale.cloud.plugins.module_utils.settle import Waiter

# The platform's rule for the name of a new branch; it refuses any other name with 422.
NEW_NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,62}")
CLUSTER_SIZE = re.compile(r"(SIZE|PS)_[1-9][0-9]*")
ISO_8601 = re.compile(r"\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?")


def check_new_name(option, value):
    """Refuse, before any request, a name the platform would refuse for a new branch."""
    if not NEW_NAME.fullmatch(value):
        raise ModuleFailure("%s must be a branch name the platform accepts: 1 to 63 characters, lower-case letters, "
                            "digits, '-' and '_', starting with a letter or digit; not %r." % (option, value))


def check_create_options(size, point):
    """Refuse a malformed cluster_size or restore_point before any request."""
    if size is not None and not CLUSTER_SIZE.fullmatch(size):
        raise ModuleFailure("cluster_size must be of the form SIZE_10 (or PS_10), not %r." % size)
    if point is not None and not ISO_8601.fullmatch(point):
        raise ModuleFailure("restore_point must be an ISO 8601 timestamp such as 2026-01-31T12:00:00Z, not %r." % point)


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


ASLEEP = ("sleeping", "sleep_in_progress")  # states that do not become ready by themselves
PRODUCTION_DELETE = ("%s is a production branch, which the platform does not delete: demote it first (in the "
                     "platform's UI or API), then delete it.")


def readiness(label):
    """The wait for a branch (label: "branch 'dev' of database 'shop'") to be ready, or asleep."""
    what = capital(label)
    return Waiter(
        "%s to be ready" % label, done=lambda b: b.get("ready") or b.get("state") in ASLEEP,
        state=lambda b: b.get("state"), key="branch",
        failed=lambda b: "%s was deleted while waiting for it to be ready." % what if b is None else None,
        timed_out=lambda b, timeout: "%s was not ready after %s seconds (state %r); raise wait_timeout or set wait "
                                     "to false." % (what, timeout, b.get("state")))
