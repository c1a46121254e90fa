#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: query_pattern_report
short_description: Make a branch's query-pattern report and download it to a file
version_added: 0.3.0
description:
  - Asks the platform for a report of the query patterns of a database branch, waits until it is completed, and
    downloads it to O(dest). The file is what the platform serves, a gzip-compressed CSV.
  - The download is a redirect to storage on another host, whose address is signed. The credentials are never sent
    there. The file is written with mode C(0600), whole or not at all. It is written to a temporary file beside
    O(dest), which then replaces O(dest).
  - The file's modification time is the time the report finished, which is how a later task knows which report the
    file holds. A task that names the report with O(id) does not download it again into a file that holds it already.
    A task without O(id) makes no new report while O(dest) exists, unless O(force=true).
  - V(absent) deletes the report, the one O(id) names or else the one O(dest) was downloaded from. The file is kept.
  - After a create whose answer was lost, a report of the branch that appeared in the time of the request is taken,
    with a warning naming it. A report holds the branch's query patterns at the time it is made, so any such report
    is as good as the one asked for. Only when none appeared is the create sent again.
  - A report is read whole into memory before it is written, at most 64 MiB.
author:
  - planetscale.cloud contributors (@planetscale-ansible)
options:
  database:
    description: The name of the database.
    type: str
    required: true
  branch:
    description: The name of the branch.
    type: str
    required: true
  dest:
    description:
      - The absolute path of the file to write the report to, in a directory that exists. Needed with
        O(state=present).
      - With O(state=absent) and no O(id), the report this file was downloaded from is the one deleted.
    type: path
  id:
    description:
      - The ID of a report of the branch, to download (and wait for) or to delete, rather than making a new one.
    type: str
  force:
    description:
      - Make a new report and download it even though O(dest) exists. This is a change every time the task runs.
        Not with O(id).
    type: bool
    default: false
  state:
    description:
      - V(present) makes sure O(dest) holds a report (O(id)'s when given). V(absent) deletes the report.
    type: str
    choices: [present, absent]
    default: present
  wait:
    description:
      - Wait until the report is completed, then download it. With V(false), a report that is not completed yet is
        returned without a download; a later task with its O(id) downloads it.
  wait_timeout:
    description:
      - Seconds to wait for the report to be completed.
    default: 600
extends_documentation_fragment:
  - planetscale.cloud.api
  - planetscale.cloud.api.connection
  - planetscale.cloud.api.organization
  - planetscale.cloud.api.wait
  - planetscale.cloud.attributes.resource
seealso:
  - module: planetscale.cloud.query_pattern_info
"""

EXAMPLES = r"""
- name: Make a query-pattern report of the main branch and download it
  planetscale.cloud.query_pattern_report:
    organization: acme
    database: app
    branch: main
    dest: "{{ playbook_dir }}/query-patterns.csv.gz"
  register: report

- name: Read the report's CSV
  ansible.builtin.command:
    argv: [gzip, -dc, "{{ report.file }}"]
  register: csv
  changed_when: false

- name: Show its header
  ansible.builtin.debug:
    msg: "{{ csv.stdout_lines | first }}"

- name: Delete the report on the platform; the file stays
  planetscale.cloud.query_pattern_report:
    organization: acme
    database: app
    branch: main
    id: "{{ report.report.id }}"
    state: absent
  when: report.report is not none
"""

RETURN = r"""
report:
  description:
    - The report the file holds, was written from, or that was deleted. Null when O(dest) existed and no report of
      the branch finished when the file was last written, or when there was nothing to delete.
    - In check mode, null when a new report would be made.
  returned: success
  type: dict
  contains:
    id:
      description: The ID of the report.
      type: str
    state:
      description: V(pending), V(completed) or V(failed).
      type: str
      sample: completed
    created_at:
      description: When the report was requested (ISO 8601).
      type: str
    finished_at:
      description: When the report was finished (ISO 8601), or null. Not in every answer about a pending report.
      type: str
file:
  description: The file, as O(dest) names it.
  returned: O(state=present)
  type: str
downloaded:
  description: Whether the task wrote the file (in check mode, whether it would).
  returned: O(state=present)
  type: bool
"""

import os
import tempfile

from ansible_collections.planetscale.cloud.plugins.module_utils.adapter import run_module
from ansible_collections.planetscale.cloud.plugins.module_utils.base import Module, ModuleFailure
from ansible_collections.planetscale.cloud.plugins.module_utils.client import ApiError
from ansible_collections.planetscale.cloud.plugins.module_utils.options import (
    CONNECTION, CREDENTIALS, ORGANIZATION, WAIT)
from ansible_collections.planetscale.cloud.plugins.module_utils.resource import capital
from ansible_collections.planetscale.cloud.plugins.module_utils.settle import Waiter, write_and_settle
from ansible_collections.planetscale.cloud.plugins.module_utils.shown_once import CreationWindow, age
from ansible_collections.planetscale.cloud.plugins.module_utils.timestamps import parse_iso8601

MODE = 0o600


def finished(report):
    """When a report finished (else was made), in whole seconds since the epoch: the mtime of a file written from it."""
    moment = parse_iso8601(report.get("finished_at")) or parse_iso8601(report.get("created_at"))
    return int(moment.timestamp()) if moment else None


class QueryPatternReport(Module):
    """A branch's query-pattern report (POST/GET/DELETE .../query-patterns[/{id}]) and its download
    (GET .../download: a 302 to signed storage, which the client follows without credentials)."""

    option_sets = (CREDENTIALS, CONNECTION, ORGANIZATION, WAIT)
    argument_spec = dict(
        database=dict(type="str", required=True),
        branch=dict(type="str", required=True),
        dest=dict(type="path"),
        id=dict(type="str"),
        force=dict(type="bool", default=False),
        state=dict(type="str", choices=["present", "absent"], default="present"),
        wait_timeout=dict(type="int", default=600),
    )
    path_options = ("database", "branch", "id")
    must_exist = ("database", "branch")

    def validate(self):
        super().validate()
        dest, present = self.params["dest"], self.params["state"] == "present"
        if self.params["force"] and (self.params["id"] or not present):
            raise ModuleFailure("force makes a new report: it is for state=present without id.")
        if dest is None and (present or not self.params["id"]):
            raise ModuleFailure("dest is needed: the file to download the report to." if present else
                                "state=absent deletes a report: give its id, or dest, the file downloaded from it.")
        if dest is not None and not os.path.isabs(dest):
            raise ModuleFailure("dest must be an absolute path, not %r." % dest)
        if dest is not None and os.path.isdir(dest):
            raise ModuleFailure("dest %s is a directory: name the file to write, such as %s." % (
                dest, os.path.join(dest, "query-patterns.csv.gz")))
        if present and not os.path.isdir(os.path.dirname(dest)):
            raise ModuleFailure("The directory of dest, %s, does not exist: create it first." % os.path.dirname(dest))

    def label(self, report_id):
        return "query-pattern report %r of branch %r of database %r" % (
            report_id, self.params["branch"], self.params["database"])

    def url(self, *segments):
        return self.org_path("databases", self.params["database"], "branches", self.params["branch"],
                             "query-patterns", *segments)

    def run(self):
        if self.params["state"] == "absent":
            return self.absent()
        report_id, dest = self.params["id"], self.params["dest"]
        created = False
        if report_id:
            report = self.client.get(self.url(report_id), missing_ok=True)
            if report is None:
                raise ModuleFailure("%s does not exist; leave id out to make a new report." % capital(
                    self.label(report_id)))
        elif os.path.exists(dest) and not self.params["force"]:
            return self.result(False, self.from_file(), downloaded=False)
        elif self.ctx.check_mode:
            return self.result(True, None, downloaded=True, after="(new)")
        else:
            report, created = self.create(), True
        if self.holds(report):
            return self.result(created, report, downloaded=False)
        if report.get("state") != "completed" and self.params["wait"]:
            if self.ctx.check_mode and report.get("state") == "pending":
                return self.result(True, report, downloaded=True)
            report = self.wait(report)
        if report.get("state") != "completed":
            return self.result(created, report, downloaded=False)
        if not self.ctx.check_mode:
            self.write(self.client.request("GET", self.url(report["id"], "download"), raw=True), finished(report))
        return self.result(True, report, downloaded=True)

    def absent(self):
        if self.params["id"]:
            report = self.client.get(self.url(self.params["id"]), missing_ok=True)
        else:
            report = self.from_file()
        if report is None:
            return self.result(False, None)
        if not self.ctx.check_mode:
            try:
                self.client.delete(self.url(report["id"]), missing_ok=True)
            except ApiError as error:
                if not error.outcome_unknown or self.client.get(self.url(report["id"]), missing_ok=True) is not None:
                    raise
        return self.result(True, report)

    def result(self, changed, report, downloaded=None, after=None):
        result = dict(changed=changed, report=report)
        if self.params["state"] == "present":
            # not under "dest": AnsibleModule adds a file's facts to a result with dest (or path), which only the module
            # path would show
            result.update(file=self.params["dest"], downloaded=downloaded)
        if self.ctx.diff:
            held = report.get("id") if report else None
            before = held if not (changed and self.params["state"] == "present") else None
            later = None if self.params["state"] == "absent" else (after or held)
            result["diff"] = dict(before=dict(report=before) if before else {},
                                  after=dict(report=later) if later else {})
        return result

    def holds(self, report):
        """Whether dest was written from this report: it exists and its mtime is the second the report finished."""
        try:
            return report.get("state") == "completed" and int(os.stat(self.params["dest"]).st_mtime) == finished(report)
        except OSError:
            return False

    def from_file(self):
        """The completed report dest was written from, found in the branch's list by its mtime; None if none is."""
        try:
            mtime = int(os.stat(self.params["dest"]).st_mtime)
        except OSError:
            return None
        return next((report for report in self.client.paginate_cursor(self.url())
                     if report.get("state") == "completed" and finished(report) == mtime), None)

    def create(self):
        """POST .../query-patterns (no body); after a lost answer, a report made in the time of the request is taken
        rather than a second one made."""
        if self.client.server_date is None:  # the server's time opens the window: a read before the create
            self.client.get(self.org_path("databases", self.params["database"], "branches", self.params["branch"]))
        window = CreationWindow(self.client)

        def read_back(error):  # pylint: disable=unused-argument
            newest = list(self.client.paginate_cursor(self.url(), limit=25))
            window.close()
            made = sorted((report for report in newest if window.holds(report)), key=age)
            if not made:
                return None
            self.ctx.warn("The answer to the request for a new query-pattern report of branch %r was lost; report %r, "
                          "made meanwhile, is taken rather than making another." % (
                              self.params["branch"], made[0].get("id")))
            return made[0], True

        answer = write_and_settle(lambda: self.client.post(self.url()), read_back=read_back)[0]
        self.client.record_id(answer, "the new report")
        return answer

    def wait(self, report):
        report_id = report["id"]
        what = self.label(report_id)
        waiter = Waiter(what + " to be completed", lambda found: found.get("state") == "completed",
                        lambda found: found.get("state"), key="report",
                        failed=lambda found: "%s failed on the platform: make a new one (leave id out)." % capital(
                            what) if found.get("state") == "failed" else None)

        def read():
            found = self.client.get(self.url(report_id), missing_ok=True)
            if found is None:
                raise ModuleFailure("%s was deleted while the task waited for it." % capital(what))
            return found
        return waiter.wait(read, self.params["wait_timeout"], current=report)

    def write(self, content, stamp):
        """The file whole or not at all: a temporary file beside dest, mode 0600, its mtime the report's, replaces
        dest."""
        dest = self.params["dest"]
        handle, temporary = tempfile.mkstemp(dir=os.path.dirname(dest), prefix=".%s." % os.path.basename(dest))
        try:
            with os.fdopen(handle, "wb") as stream:
                stream.write(content)
                stream.flush()
                os.fsync(stream.fileno())
            os.chmod(temporary, MODE)
            if stamp is not None:
                os.utime(temporary, (stamp, stamp))
            os.replace(temporary, dest)
        except OSError as error:
            raise ModuleFailure("The report could not be written to %s: %s." % (dest, error.strerror or error))
        finally:
            if os.path.exists(temporary):
                os.unlink(temporary)


def main():
    run_module(QueryPatternReport)


if __name__ == "__main__":
    main()
