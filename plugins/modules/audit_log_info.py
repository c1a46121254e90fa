#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: audit_log_info
short_description: Read the audit log of an organization
version_added: 0.3.0
description:
  - Returns the events of the organization's audit log, newest first as the API orders them. Each event says who
    (RV(events[].actor_display_name), RV(events[].actor_type) such as V(User) or V(ServiceToken)), did what
    (RV(events[].audit_action) such as V(service_token.created) or V(organization_membership.deleted)), to what
    (RV(events[].target_type), RV(events[].target_display_name)) and when (RV(events[].created_at)).
  - The log is cursor-based. By default every event is returned, every page read.
  - The platform filters by action, as its CLI does (C(pscale audit-log list --action)). When every entry of O(events)
    is an action's whole name, the module asks for those actions only (C(filters[]=audit_action:<action>)) and reads
    only their pages. A wildcard cannot be sent, so with one the module reads every page and keeps the matching
    events itself.
  - The API does not filter by time, so O(since) and O(until) are applied by the module to the pages it reads. Walking
    forward (the default, or with O(starting_after)), it stops at the first event older than O(since), since the rest
    of the log is older still; those pages are not read.
  - An event whose RV(events[].created_at) is missing or cannot be read (or placed in the years 1 to 9999 in UTC)
    cannot be placed in the window of O(since) and O(until). It is returned rather than dropped, and one warning
    counts such events and names their IDs.
  - For manual paging, give O(starting_after) (or O(ending_before)) and O(limit), and continue from
    RV(cursor.cursor_end) (or RV(cursor.cursor_start)) while RV(cursor.has_next) (or RV(cursor.has_prev)) is true.
  - A service token needs the access C(read_audit_logs) on the organization.
author:
  - planetscale.cloud contributors (@planetscale-ansible)
options:
  since:
    description:
      - Only events created at or after this time.
      - An ISO 8601 time such as V(2026-11-01T00:00:00Z) (no zone means UTC), or a duration back from now such as
        V(30d), V(12h), V(45m) or V(90s).
      - A time that falls outside the years 1 to 9999 in UTC, given or reached back to, fails the task.
    type: str
  until:
    description:
      - Only events created at or before this time, in the same forms as O(since).
    type: str
  events:
    description:
      - Only events whose C(audit_action) matches one of these, such as V(service_token.created). Shell-style
        wildcards match several, such as V(service_token.*) or V(*.deleted).
      - When every entry is a whole name, the platform filters the log and only the pages of those actions are read;
        a wildcard makes the module read every page (to O(since)) and filter them itself.
      - The actions of credentials and members seen on the platform (its audit log documentation lists those of every
        type; the P(planetscale.cloud.access_review#role) role matches them by wildcard, so that an action not listed
        here is never missed) are
        V(database_branch_password.created), V(database_branch_password.updated),
        V(database_branch_password.deleted), V(database_branch_password.renewed),
        V(database_branch_password.password_leaked), V(database_branch_password.updated_ip_restrictions),
        V(database_branch_role.created), V(database_branch_role.updated), V(database_branch_role.deleted),
        V(database_branch_role.renewed), V(service_token.created), V(service_token.updated),
        V(service_token.deleted), V(service_token.granted_access), V(organization_membership.created),
        V(organization_membership.updated), V(organization_membership.deleted), V(team_membership.created) and
        V(team_membership.deleted).
    type: list
    elements: str
  limit:
    description:
      - Return at most this many events (of those the filters keep). By default every one is returned.
    type: int
  starting_after:
    description:
      - Start after the event with this ID and walk forward (to older events).
    type: str
  ending_before:
    description:
      - Start before the event with this ID and walk backward (to newer events).
    type: str
extends_documentation_fragment:
  - planetscale.cloud.api
  - planetscale.cloud.api.connection
  - planetscale.cloud.api.organization
  - planetscale.cloud.attributes.info
seealso:
  - module: planetscale.cloud.organization_info
  - module: planetscale.cloud.service_token_info
  - module: planetscale.cloud.organization_member_info
"""

EXAMPLES = r"""
- name: Read what happened to credentials and members in the last 30 days
  planetscale.cloud.audit_log_info:
    organization: acme
    since: 30d
    events:
      - database_branch_password.*
      - service_token.*
      - organization_membership.*
  register: audit

- name: Read the service tokens created or deleted this week (the platform filters the log)
  planetscale.cloud.audit_log_info:
    organization: acme
    since: 7d
    events: [service_token.created, service_token.deleted]

- name: Read the deletions of November 2026
  planetscale.cloud.audit_log_info:
    organization: acme
    since: "2026-11-01T00:00:00Z"
    until: "2026-11-30T23:59:59Z"
    events: ["*.deleted"]

- name: Read the newest ten events
  planetscale.cloud.audit_log_info:
    organization: acme
    limit: 10
"""

RETURN = r"""
events:
  description: The events the filters keep, newest first.
  returned: success
  type: list
  elements: dict
  contains:
    id:
      description: The ID of the event.
      type: str
    audit_action:
      description: What was done, as C(<type>.<action>).
      type: str
      sample: service_token.created
    action:
      description: The action alone.
      type: str
      sample: created
    actor_id:
      description: The ID of who did it (a user or a service token).
      type: str
    actor_type:
      description: What did it, such as V(User) or V(ServiceToken).
      type: str
    actor_display_name:
      description: The name of who did it.
      type: str
    target_id:
      description: The ID of what it was done to.
      type: str
    target_type:
      description: The type of what it was done to, such as V(DatabaseBranchPassword) or V(OrganizationMembership).
      type: str
    target_display_name:
      description: The name of what it was done to.
      type: str
    auditable_id:
      description: The ID of the organization or database it belongs to.
      type: str
    auditable_type:
      description: V(Organization) or V(Database).
      type: str
    auditable_display_name:
      description: The name of the organization or database it belongs to.
      type: str
    remote_ip:
      description: The IP address the request came from.
      type: str
    location:
      description: Where that address is.
      type: str
    metadata:
      description: More about the change.
      type: dict
    created_at:
      description: When it was done (ISO 8601).
      type: str
cursor:
  description: The cursor fields of the last page read, to continue from by hand.
  returned: success
  type: dict
  contains:
    has_next:
      description: Whether more (older) events follow.
      type: bool
    has_prev:
      description: Whether (newer) events precede.
      type: bool
    cursor_start:
      description: The ID of the first event of the last page read.
      type: str
    cursor_end:
      description: The ID of the last event of the last page read.
      type: str
"""

import datetime
import fnmatch
import re

from ansible_collections.planetscale.cloud.plugins.module_utils.adapter import run_module
from ansible_collections.planetscale.cloud.plugins.module_utils.base import InfoModule, ModuleFailure
from ansible_collections.planetscale.cloud.plugins.module_utils.options import CONNECTION, CREDENTIALS, ORGANIZATION
from ansible_collections.planetscale.cloud.plugins.module_utils.timestamps import ISO8601, parse_iso8601

DURATION = re.compile(r"(\d+)\s*([dhms])", re.IGNORECASE)
UNITS = dict(d="days", h="hours", m="minutes", s="seconds")


def moment(option, text, now):
    """An option's time: ISO 8601, or a duration back from now (30d, 12h, 45m, 90s); ModuleFailure naming it."""
    if text is None:
        return None
    duration = DURATION.fullmatch(text.strip())
    if duration:
        try:
            return now - datetime.timedelta(**{UNITS[duration.group(2).lower()]: int(duration.group(1))})
        except OverflowError:
            raise ModuleFailure("%s: %s reaches back before the year 1; give a shorter duration or an ISO 8601 "
                                "time." % (option, text))
    found = parse_iso8601(text)
    if found is None and ISO8601.fullmatch(text.strip()):
        raise ModuleFailure("%s: %r is not a date and time from 0001-01-01 to 9999-12-31 in UTC." % (option, text))
    if found is None:
        raise ModuleFailure("%s must be an ISO 8601 time such as 2026-11-01T00:00:00Z or a duration back from now such "
                            "as 30d, 12h, 45m or 90s, not %r." % (option, text))
    return found


class AuditLogInfo(InfoModule):
    option_sets = (CREDENTIALS, CONNECTION, ORGANIZATION)
    must_exist = ()  # a 404 names the organization alone
    argument_spec = dict(
        since=dict(type="str"),
        until=dict(type="str"),
        events=dict(type="list", elements="str"),
        limit=dict(type="int"),
        starting_after=dict(type="str"),
        ending_before=dict(type="str"),
    )
    mutually_exclusive = [["starting_after", "ending_before"]]

    def __init__(self, params, ctx=None):
        super().__init__(params, ctx)
        self.since = self.until = None  # the window, as datetimes in UTC (validate())
        self.unplaced = []  # the IDs of events returned although the window cannot place them (no readable time)

    def validate(self):
        super().validate()
        now = datetime.datetime.now(datetime.timezone.utc)
        self.since = moment("since", self.params["since"], now)
        self.until = moment("until", self.params["until"], now)
        if self.since and self.until and self.since > self.until:
            raise ModuleFailure("since (%s) is after until (%s): no event can be in that window." % (
                self.params["since"], self.params["until"]))
        if any(not pattern.strip() for pattern in self.params["events"] or []):
            raise ModuleFailure("events must not hold an empty action.")

    def kept(self, event):
        """(keep, older): whether the filters keep the event, and whether it is older than since. An event whose time
        cannot be read is kept (never dropped unseen) and its ID noted for the warning."""
        created = parse_iso8601(event.get("created_at"))
        older = bool(self.since and created and created < self.since)
        in_window = not older and not (self.until and created and created > self.until)
        patterns = self.params["events"]
        named = patterns is None or any(fnmatch.fnmatchcase(str(event.get("audit_action")), p) for p in patterns)
        if in_window and named and created is None and (self.since or self.until):
            self.unplaced.append(str(event.get("id")))
        return in_window and named, older

    def server_filters(self):
        """The platform's filter of the actions (filters[]=audit_action:<action>, repeatable), when every entry of
        events is a whole name; None with a wildcard, which only this module can apply (it applies all of them again,
        which costs nothing)."""
        patterns = self.params["events"]
        if not patterns or any(char in pattern for pattern in patterns for char in "*?["):
            return None
        return {"filters[]": ["audit_action:%s" % pattern for pattern in patterns]}

    def run(self):
        forward = self.params["ending_before"] is None
        filtered = bool(self.since or self.until or self.params["events"])
        pages, found = [], []
        walk = self.client.paginate_cursor(
            self.org_path("audit-log"), self.server_filters(), limit=None if filtered else self.params["limit"],
            pages=pages,
            starting_after=self.params["starting_after"], ending_before=self.params["ending_before"])
        for event in walk:
            keep, older = self.kept(event)
            if keep:
                found.append(event)
            if older and forward or self.params["limit"] and len(found) >= self.params["limit"]:
                break
        walk.close()
        if self.unplaced:
            self.ctx.warn("%d of the events returned (IDs %s%s) have no created_at time the module can read, so "
                          "since and until cannot place them: they are returned rather than dropped." % (
                              len(self.unplaced), ", ".join(self.unplaced[:10]),
                              ", ..." if len(self.unplaced) > 10 else ""))
        return dict(events=found, cursor=pages[-1])


def main():
    run_module(AuditLogInfo)


if __name__ == "__main__":
    main()
