# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The users of an organization, found by user ID or e-mail address, each looked up at most once."""

from __future__ import annotations

from ansible_collections.planetscale.cloud.plugins.module_utils.base import ModuleFailure


class Directory:
    """User records by ID, filled from what the module reads; the organization's members listed only when an
    e-mail address is not among the users already seen."""

    def __init__(self, list_members, organization):
        self.list_members = list_members  # called once, when an e-mail address is looked up: the members' records
        self.organization = organization
        self.users = {}  # user ID -> user record, of every user seen
        self.by_email = None  # e-mail address -> user record, of the organization's members

    def saw(self, users):
        """Remember user records read elsewhere (a team's members)."""
        self.users.update((user["id"], user) for user in users or [])

    def user(self, entry, near=()):
        """The user record of a user ID or e-mail address (only the ID when nothing more is known).

        near: user records to look in first (a team's members), which saves listing the organization.
        """
        if "@" not in entry:
            return self.users.setdefault(entry, dict(id=entry))
        for user in near or ():
            if (user.get("email") or "").lower() == entry.lower():
                return user
        if self.by_email is None:
            members = self.list_members()
            self.by_email = dict((m["user"]["email"].lower(), m["user"]) for m in members
                                 if (m.get("user") or {}).get("email"))
        user = self.by_email.get(entry.lower())
        if user is None:
            raise ModuleFailure("No member of organization %r has the e-mail address %r; invite them first." % (
                self.organization, entry))
        self.users[user["id"]] = user
        return user

    def email(self, uid):
        """How a user is shown: the e-mail address when known, else the ID."""
        return self.users.get(uid, {}).get("email") or uid


def names_member(membership, wanted):
    """Whether an organization membership is the one wanted names: an e-mail address (in any case), a user ID or
    a membership ID."""
    user = membership.get("user") or {}
    wanted = wanted.strip()
    if "@" in wanted:
        return (user.get("email") or "").lower() == wanted.lower()
    return wanted in (membership.get("id"), user.get("id"))
