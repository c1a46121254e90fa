# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The shared logic of resource modules: read, compare the supplied options, one write.

A module states its resource's rules through a few attributes and hooks; Resource.run()
does the rest the same way for every module:

- state=present: read; create when missing; otherwise compare only the options the user
  supplied, refuse a create-only field that differs (or replace the resource where the module
  offers the option replace), and send one update with only what differs. A create-only field the record
  does not state is not compared.
- state=absent: delete; a resource that is already missing is changed=false.
- Check mode never writes: the result predicts changed and the resource.
- Diff mode: before and after of the managed fields only.
- A write whose outcome is unknown (ApiError.outcome_unknown) is followed by a read and the
  module continues from what exists, so nothing is created twice.
"""

from __future__ import annotations

import abc
import collections
import ipaddress

from ansible_collections.planetscale.cloud.plugins.module_utils.base import Module, ModuleFailure
from ansible_collections.planetscale.cloud.plugins.module_utils.client import ApiError, json_kind
from ansible_collections.planetscale.cloud.plugins.module_utils.settle import write_and_settle

# What update() may return instead of the resource: the resource, and whether this run applied the change (False
# where every write it sent was refused because another run had made the same change).
Outcome = collections.namedtuple("Outcome", "resource applied")

STATE_OPTION = dict(type="str", choices=["present", "absent"], default="present")


class Resource(Module, metaclass=abc.ABCMeta):
    """A resource with state present or absent. Subclasses set the attributes and hooks below."""

    kind = None  # the result key and the word in messages, e.g. "branch"
    api_path = ()  # the API path of the resources below the organization; "{option}" stands for an option's value
    key = "id"  # the field of the resource that names it in its path
    fields = ()  # the managed fields: compared when the user supplies them, shown in the diff
    create_only = ()  # managed fields that only a new resource can take
    required_to_create = ()  # options needed only when the resource must be created
    names = ()  # options (strings or lists of strings) that must not be blank
    parent = None  # the option naming the resource this one lives in, when an earlier task may create it

    def __init__(self, params, ctx=None):
        super().__init__(params, ctx)
        self.created = False  # the resource is new (or predicted new) in this run

    @classmethod
    def spec(cls):
        spec = super().spec()
        spec["argument_spec"].setdefault("state", dict(STATE_OPTION))
        return spec

    def validate(self):
        super().validate()
        for name in self.names:
            value = self.params.get(name)
            texts = value if isinstance(value, list) else [] if value is None else [value]
            if any(not text.strip() for text in texts):
                raise ModuleFailure("%s must not be empty." % name)

    def url(self, *segments):
        """The path of the collection, or with segments of something in it."""
        parts = [self.params[part[1:-1]] if part.startswith("{") else part for part in self.api_path]
        return self.org_path(*(parts + list(segments)))

    # Hooks ----------------------------------------------------------------------------------

    @abc.abstractmethod
    def read(self):
        """The resource as the API has it, or None when it does not exist. Every resource module defines it."""

    def create(self, values):
        """Create the resource from values (managed fields) and the other options; return it."""
        return self.client.post(self.url(), json=values)

    def update(self, resource, changes):
        """Apply changes (managed fields that differ) in one write; return the resource (or an Outcome)."""
        return self.client.patch(self.url(resource[self.key]), json=changes)

    def delete(self, resource):
        self.client.delete(self.url(resource[self.key]), missing_ok=True)

    def managed(self, resource):
        """The managed fields of a resource, in the form they are compared and shown."""
        return {name: resource.get(name) for name in self.fields}

    def wanted(self, resource):
        """The managed fields the user supplied (not defaults), in the form managed() gives."""
        return {name: self.params[name] for name in self.fields if self.params.get(name) is not None}

    def same(self, name, have, want):
        """Whether a field already has the wanted value. The order of a list does not matter."""
        if isinstance(have, list) or isinstance(want, list):
            return sorted(map(str, have or [])) == sorted(map(str, want or []))
        return have == want

    def predict(self, resource, changes):
        """The resource as it would be after the changes (check mode); resource is None for a new one."""
        return dict(resource or {}, **changes)

    def guard(self, resource):
        """Refuse, by raising ModuleFailure, a change to a resource before anything is sent."""

    def recover(self, error):
        """After a create whose outcome is unknown: the resource if it exists, else None to create again."""
        return self.read()

    def after_present(self, resource, changed):
        """Last step of state=present, also in check mode (where it must not write): (resource, changed)."""
        return resource, changed

    def result_keys(self, resource):
        """The result keys for the resource."""
        return {self.kind: resource}

    def diff_view(self, fields):
        """Managed fields as the diff shows them: lists sorted, unknown values left out."""
        return {name: sorted(value) if isinstance(value, list) else value
                for name, value in fields.items() if value is not None}

    def label(self):
        """The resource in messages, e.g. "branch 'dev' of database 'shop'"."""
        return "%s %r" % (self.kind, self.params.get("name"))

    def read_record(self):
        """read(), with what it found checked to be a record of this kind."""
        return self.record(self.read())

    def record(self, resource):
        """A resource the API answered, or ApiError naming the request when it is not a record with its key.

        None (missing) passes: it is what a read of something that does not exist gives.
        """
        if resource is None or (isinstance(resource, dict) and resource.get(self.key) not in (None, "")):
            return resource
        raise self.client.wrong_answer("the answer is not a %s record: %s" % (
            self.kind, "it has no %s" % self.key if isinstance(resource, dict) else "it is %s" % json_kind(resource)))

    # The flow -------------------------------------------------------------------------------

    def run(self):
        resource = self.read_in_parent()
        if self.params["state"] == "absent":
            return self.absent(resource)
        return self.present(resource)

    def read_in_parent(self):
        """read(), except that in check mode a missing parent predicts a create rather than failing.

        A check run does not create the parent an earlier task of the play would create, so the
        API answers 404 for it; the run would create this resource there. The warning says so,
        because a misspelt parent name gives the same answer.
        """
        try:
            return self.read_record()
        except ApiError as error:
            predicted = (self.ctx.check_mode and error.status == 404 and self.parent and not self.params.get("id")
                         and self.params["state"] == "present")
            if not predicted:
                raise
            self.ctx.warn("%s %r was not found (%s). Check mode predicts that %s would be created, as if an earlier "
                          "task created the %s; if no task does, the run will fail." % (
                              capital(self.parent), self.params[self.parent], error.message or error.code,
                              self.label(), self.parent))
            return None

    def present(self, resource):
        before = self.managed(resource) if resource is not None else {}
        changed = False
        if resource is None and self.params.get("id"):
            raise ModuleFailure("%s with id %r does not exist; leave id out to create it." % (
                capital(self.label()), self.params["id"]))
        if resource is None:
            missing = [name for name in self.required_to_create if self.params.get(name) is None]
            if missing:
                raise ModuleFailure("%s %s required to create %s, which does not exist." % (
                    " and ".join(missing), "is" if len(missing) == 1 else "are", self.label()))
            values = self.wanted(None)
            self.created = changed = True
            if self.ctx.check_mode:
                resource, changed = self.after_present(self.predict(None, values), changed)
                return self.outcome(changed, resource, before)
            resource, changed = self.create_once(values)
        changes = self.differences(resource)
        if self.created and changed:  # the create-only fields were just sent: how the API spells them is the truth
            changes = dict((name, value) for name, value in changes.items() if name not in self.create_only)
        fixed = [name for name in self.create_only if name in changes]
        if fixed:
            resource, changed = self.replace(resource, fixed[0]), True
        elif changes:
            self.guard(resource)
            if self.ctx.check_mode:
                resource, applied = self.predict(resource, changes), True
            else:
                resource, applied = self.update_once(resource, changes)
            changed = changed or applied
        resource, changed = self.after_present(resource, changed)
        return self.outcome(changed, resource, before)

    def absent(self, resource):
        if resource is None:
            return self.outcome(False, None, {})
        self.guard(resource)
        if not self.ctx.check_mode:
            self.delete_once(resource)
        return self.outcome(True, None, self.managed(resource))

    def differences(self, resource):
        """The wanted fields that differ from the resource. A create-only field the record leaves out (no key, and
        None in managed()) is not a difference: the platform leaves out what it does not say, and it cannot be
        changed. A field the record states as null is compared."""
        have = self.managed(resource)
        unstated = [name for name in self.create_only if have.get(name) is None and name not in (resource or {})]
        return {name: want for name, want in self.wanted(resource).items()
                if name not in unstated and not self.same(name, have.get(name), want)}

    def replace(self, resource, field):
        """A create-only field differs: fail naming it, or delete and create anew where the user asked."""
        have, want = self.managed(resource), self.wanted(resource)
        if not self.params.get("replace"):
            remedy = ("set replace: true to delete it and create it again" if "replace" in self.argument_spec
                      else "delete it first to create it again")
            raise ModuleFailure("%s has %s %s, not %s: %s can only be set when the %s is created; %s." % (
                capital(self.label()), field, _text(have.get(field)), _text(want[field]), field, self.kind, remedy))
        self.guard(resource)
        values = dict(have, **want)
        self.created = True
        if self.ctx.check_mode:
            return self.predict(None, values)
        self.delete_once(resource)
        return self.create_once(values)[0]

    def outcome(self, changed, resource, before):
        result = dict(changed=changed)
        if resource is not None:
            result.update(self.result_keys(resource))
        if self.ctx.diff:
            after = self.managed(resource) if resource is not None else {}
            result["diff"] = dict(before=self.diff_view(before), after=self.diff_view(after))
        return result

    # Writes that survive an unknown outcome ---------------------------------------------------

    def create_once(self, values):
        """Create, and after an unknown outcome read what exists rather than create twice: (resource, changed).

        Only a create that reading shows was not applied is sent again (write_and_settle); a create refused
        as a conflict is another run's work when reading finds the resource.
        """
        def recovered(error):
            found = self.record(self.recover(error))
            return None if found is None else (found, True)

        def made_by_another_run(error):  # pylint: disable=unused-argument
            found = self.read_record()
            return None if found is None else (found, False)
        resource, changed = write_and_settle(lambda: self.create(values), read_back=recovered,
                                             on_conflict=made_by_another_run)
        return self.record(resource), changed

    def update_once(self, resource, changes):
        """Update: (resource, applied). After an unknown outcome read what exists and send only what still
        differs (an update may take several requests, and the lost one may have been applied)."""
        pending = dict(resource=resource, changes=changes)

        def send():
            return self.update(pending["resource"], pending["changes"])

        def read_back(error):
            found = self.read_record()
            if found is None:
                raise error
            pending.update(resource=found, changes=self.differences(found))
            return None if pending["changes"] else (found, True)
        try:
            answer, applied = write_and_settle(send, read_back=read_back)
        except ApiError as error:
            if not error.outcome_unknown:
                self.explain_refusal(error)
            raise
        updated, applied = answer if isinstance(answer, Outcome) else (answer, applied)
        return self.record(updated), applied

    def delete_once(self, resource):
        """Delete; after an unknown outcome read back: gone is done, still there means nothing was deleted."""
        try:
            self.delete(resource)
        except ApiError as error:
            if not error.outcome_unknown:
                self.explain_refusal(error)
                raise
            if self.read_record() is not None:
                raise ModuleFailure("%s Reading it back shows that %s still exists: the delete was not applied and "
                                    "nothing was deleted. Run the task again later." % (error, self.label()),
                                    status=error.status, error=error.as_dict())

    def explain_refusal(self, error):
        """A write the API refused (422) because of what guard() checks: fail with guard()'s sentence."""
        if error.status != 422:
            return
        try:
            found = self.read_record()
        except (ApiError, ModuleFailure):
            return  # the refusal itself is the better report
        try:
            if found is not None:
                self.guard(found)
        except ModuleFailure as failure:
            raise ModuleFailure(failure.msg, status=error.status, error=error.as_dict())


def networks(cidrs, option="cidrs", strict=False):
    """The set of IP networks that addresses or CIDR ranges name; ModuleFailure naming one that is neither.

    strict, for what a user gives (every option that takes CIDRs checks it here): a range with host bits set fails
    too, with the network it would mean and the address alone, since 203.0.113.7/0 means every address, not one.
    Without it (what the platform holds), such a range counts as the network it means.
    """
    found = set()
    for cidr in cidrs or []:
        try:
            network, address = ipaddress.ip_network(cidr, strict=False), ipaddress.ip_interface(cidr).ip
        except ValueError:
            raise ModuleFailure("%s: %r is not an IP address or CIDR range." % (option, cidr))
        if strict and address != network.network_address:
            size = "every IPv%d address" % network.version if not network.prefixlen else "%d addresses" % (
                network.num_addresses)
            raise ModuleFailure("%s: %r has host bits set, so it would mean %s (%s): write %s/%d for that address "
                                "alone, or %s for the whole range." % (
                                    option, cidr, network, size, address, network.max_prefixlen, network))
        found.add(network)
    return found


def _text(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return "%r" % value
    return "none" if value is None else str(value)


def capital(text):
    """The text with its first letter in upper case (str.capitalize lowers the rest)."""
    return text[:1].upper() + text[1:]
