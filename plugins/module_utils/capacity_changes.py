# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Capacity changed in place, by requests the platform runs: the state machine of a module whose resource is resized
where it stands (a branch: its cluster size, replicas, storage, parameters and VTGates; a keyspace of a branch, by the
same kind of request: its cluster size and extra replicas; a bouncer waits for its resize request with
request_waiter()). What the task gives is compared with what the resource has; what differs is sent, one write per
request and never twice after a lost answer, and each request made is waited for until it completes. A request made
elsewhere, still running, is waited for first; cancel_pending() cancels those that have not started resizing.

A request goes queued or pending, then resizing, then completed, or canceled (capacity.REQUEST_STATES). The resource
lists its requests of each kind below its path, newest first, and DELETE <resource>/resizes cancels those pending.
"""

from __future__ import annotations

import abc

from ansible_collections.planetscale.cloud.plugins.module_utils.base import ModuleFailure
from ansible_collections.planetscale.cloud.plugins.module_utils.capacity import REQUEST_STATES, running
from ansible_collections.planetscale.cloud.plugins.module_utils.resource import capital
from ansible_collections.planetscale.cloud.plugins.module_utils.settle import Waiter, write_and_settle

ENDED = REQUEST_STATES[3:]  # canceled, completed
APPLIED = object()  # what a lost write's read-back gives when no request runs and the resource has it all
RESIZING = ("%s is resizing, and the platform cancels a request only before it starts resizing: wait for it to "
            "complete, or leave cancel_pending out.")
RUNNING_ELSEWHERE = ("%s is %s, made elsewhere (%s): set wait to true to wait for it to complete first, or run the "
                     "task again once it has.")


def request_label(kinds, kind, request, label):
    """A request in sentences: "change request 'r1' of branch 'main' of database 'app'". kinds: kind -> (the request
    in sentences, the path segment of the list of them below the resource); label: the resource's."""
    return "%s %r of %s" % (kinds[kind][0], (request or {}).get("id"), label)


def request_waiter(what, resource, foreign=False, key="request"):
    """The wait for a request (what: its request_label()) of a resource (the word: branch, keyspace, bouncer) to end:
    completed, or, for a request this task made (foreign false), a failure at once when it is canceled, naming the
    state. A request made elsewhere (foreign) is waited for until it ends either way. key: the failure's result key
    for the request as last read."""

    def failed(record):
        if record is None:
            return "%s is gone while waiting for it to complete." % capital(what)
        if record.get("state") == "canceled" and not foreign:
            return ("%s ended in state 'canceled': the %s keeps what it had before; see why on the platform and "
                    "run the task again." % (capital(what), resource))
        return None
    return Waiter("%s to complete" % what, done=lambda r: r.get("state") in (ENDED if foreign else ("completed",)),
                  state=lambda r: r.get("state"), failed=failed, key=key)


def cancel_pending(module, url, kinds):
    """The requests of the module's resource (at url; kinds: kind -> (the request in sentences, the path segment of
    the list of them), the kinds it has) that have not started resizing, canceled (DELETE <url>/resizes, which
    cancels every kind; none in check mode); one resizing, with none to cancel, fails."""

    def pending():
        found = [(kind, running(module.client.paginate("%s/%s" % (url, kinds[kind][1]), limit=5))) for kind in kinds]
        return [(kind, request) for kind, request in found if request is not None]
    found = pending()
    waiting = [request for kind, request in found if request.get("state") != "resizing"]
    if found and not waiting:
        raise ModuleFailure(RESIZING % (capital(request_label(kinds, found[0][0], found[0][1], module.label()))))
    if waiting and not module.ctx.check_mode:
        def settled(error):  # pylint: disable=unused-argument
            return None if any(r.get("state") != "resizing" for kind, r in pending()) else (None, True)
        write_and_settle(lambda: module.client.delete(url + "/resizes"), read_back=settled, on_conflict=settled)
    return waiting


class CapacityChanges(metaclass=abc.ABCMeta):
    """The capacity a task gives for the resource of a module (a Resource named by its option name, with the option
    set WAIT): compared with what the resource has, and changed by the requests writes() gives, each waited for
    until it completes (with wait).

    A subclass sets kinds and want (option -> the value the task gives), and implements read(), changes() and
    writes(); consent() names the changes that restart a server, view() shows what it compares.
    """

    kinds = {}  # kind -> (the request in sentences, the path segment of the list of them below the resource)

    def __init__(self, module):
        self.module, self.params, self.client = module, module.params, module.client
        self.want, self.have = {}, {}  # what the task gives; what the resource has of it, as read() read it
        self.requests = []  # the requests this task made
        self.runs = None  # the running requests read() found before the task's checks ended: kind -> request
        self.restarts = []  # what consent() named

    def url(self):
        """The path of the resource, below which its requests are listed."""
        return self.module.url(self.params["name"])

    @abc.abstractmethod
    def read(self, resource):
        """Read what the resource has of what the task gives into have, and return the running request of each
        kind the task would make: {kind: request}."""

    @abc.abstractmethod
    def changes(self):
        """What differs: {option: wanted value}; a dict option only with the keys that differ."""

    @abc.abstractmethod
    def writes(self, changes):
        """The requests that make the changes: [(kind, method, path segment below the resource, body)]. A write
        whose path is not the list of its kind is answered with no request (204), and the list shows the one made."""

    def consent(self, changes):  # pylint: disable=unused-argument
        """The names of changes that restart a server, once the task may make them (none here)."""
        return []

    def view(self, fields):
        """Capacity fields as the diff and the result show them."""
        return dict((name, fields[name]) for name in self.want if name in fields)

    def label_of(self, kind, request, label=None):
        """A request of the resource in sentences (label: the resource's words, when not its label())."""
        return request_label(self.kinds, kind, request, self.module.label() if label is None else label)

    def apply(self, resource, runs=None):
        """Wait for a request made elsewhere, then send what differs and wait for it: (resource, changed).
        runs: the running requests read() found, when it was called for this resource already."""
        module = self.module
        if module.created and module.ctx.check_mode:  # a new resource, predicted: it has what it is given
            self.have = dict(self.want)
            return resource, bool(self.want)
        runs = self.read(resource) if runs is None else runs
        for kind, request in runs.items():
            if module.ctx.check_mode:
                module.ctx.warn("%s is %s, made elsewhere: the prediction is against what the %s has now." % (
                    capital(self.label_of(kind, request)), request.get("state"), module.kind))
            elif not self.params["wait"]:
                raise ModuleFailure(RUNNING_ELSEWHERE % (capital(module.label()), "in the middle of a "
                                                         + self.label_of(kind, request, "it"), request.get("state")))
            else:
                self.wait(kind, request, foreign=True)
        if runs and not module.ctx.check_mode:
            resource = module.read() or resource
            self.read(resource)  # what the resource has once they ended
        changes = self.changes()
        self.restarts = self.consent(changes)
        if module.ctx.check_mode or not changes:
            self.have = dict(self.have, **self.merged(changes))
            return resource, bool(changes)
        wrote = False
        for kind, method, segment, body in self.writes(changes):
            request, applied = self.send(kind, method, segment, body)
            wrote = wrote or applied
            if request is not None:
                self.requests.append(self.wait(kind, request) if self.params["wait"] else request)
        if wrote:
            self.have = dict(self.have, **self.merged(changes))
        return (module.read() or resource), wrote

    def merged(self, changes):
        return dict((k, dict(self.have[k], **v) if isinstance(v, dict) else v) for k, v in changes.items())

    def send(self, kind, method, segment, body):
        """One write: (the request it made or None, whether it applied anything). After a lost answer, the request it
        made (the platform updates a pending one rather than make a second) or, when none runs and the resource has
        it all, no request but applied: never a second request. A 204 of a kind's list applied nothing."""
        listed = "%s/%s" % (self.url(), self.kinds[kind][1])

        def read_back(error):  # pylint: disable=unused-argument
            request = running(self.client.paginate(listed, limit=5))
            if request is not None:
                return request, True
            found = self.module.read()
            return (APPLIED, True) if found is not None and not self.read(found) and not self.changes() else None
        # a refusal because a request is resizing: the one a lost answer made, asked again (or sent again by the
        # transport, as PUT is) once it had started, is waited for as the answer
        answer = write_and_settle(lambda: self.client.request(method, "%s/%s" % (self.url(), segment), json=body),
                                  read_back=read_back, on_conflict=read_back)[0]
        if answer is APPLIED:
            return None, True
        if segment != self.kinds[kind][1]:  # 204, always: the request is listed
            return answer or running(self.client.paginate(listed, limit=5)), True
        if answer is not None:
            return answer, True
        # 204, nothing to apply: the resource has it now if the transport sent again a write whose answer it lost (503
        # with Retry-After) after that write had completed; it applied something when the resource changed since read
        before, found = self.have, self.module.read()
        if found is not None:
            self.read(found)
        return None, self.have != before

    def wait(self, kind, request, foreign=False):
        url = "%s/%s/%s" % (self.url(), self.kinds[kind][1], request["id"])
        return request_waiter(self.label_of(kind, request), self.module.kind, foreign).wait(
            lambda: self.client.get(url, missing_ok=True), self.params["wait_timeout"], current=request,
            changed=not foreign)
