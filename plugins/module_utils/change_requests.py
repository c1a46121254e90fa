# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Change and resize requests of a branch (its capacity): their states, the one still running, the wait for one.

A change request (PATCH .../changes, PATCH .../cluster) or a VTGate resize request (PUT .../resizes) goes
queued or pending, then resizing, then completed, or canceled. Lists of them are newest first.
"""

from __future__ import annotations

from ansible_collections.planetscale.cloud.plugins.module_utils.resource import capital
from ansible_collections.planetscale.cloud.plugins.module_utils.settle import Waiter

RUNNING = ("queued", "pending", "resizing")
ENDED = ("completed", "canceled")
# kind -> (the request in sentences, the path segment of the branch's list of them)
REQUESTS = dict(change=("change request", "changes"), resize=("VTGate resize request", "resizes"))


def request_path(kind):
    """The path segment below a branch of its change (kind change) or resize (kind resize) requests."""
    return REQUESTS[kind][1]


def running(requests):
    """The newest request of a list (newest first) that is still queued, pending or resizing, or None."""
    return next((request for request in requests if request.get("state") in RUNNING), None)


def request_label(kind, request, label):
    """A request in sentences: "change request 'r1' of branch 'main' of database 'app'"."""
    return "%s %r of %s" % (REQUESTS[kind][0], (request or {}).get("id"), label)


def request_waiter(kind, request, label, foreign=False):
    """The wait for a change or resize request of a branch (label) to end: completed, or, for a request this task
    made (foreign false), a failure at once when it is canceled, naming the state. A request made elsewhere
    (foreign) is waited for until it ends either way."""
    what = request_label(kind, request, label)

    def failed(record):
        if record is None:
            return "%s is gone while waiting for it to complete." % capital(what)
        if record.get("state") == "canceled" and not foreign:
            return ("%s ended in state 'canceled': the branch keeps what it had before; see why on the platform and "
                    "run the task again." % capital(what))
        return None
    return Waiter("%s to complete" % what, done=lambda r: r.get("state") in (ENDED if foreign else ("completed",)),
                  state=lambda r: r.get("state"), failed=failed, key="request")
