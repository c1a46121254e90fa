#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: webhook
short_description: Manage the webhooks of a database, and send test deliveries
version_added: 0.2.0
description:
  - Ensures that a database has a webhook that sends the O(events) to O(url), enabled or not, or that it has none.
  - A webhook is named by its O(url), or by O(id); with O(id), a different O(url) moves the webhook to that URL.
  - O(events) are compared as a set; their order and repetitions do not matter. An event the platform does not have
    fails the task before any request, naming the valid ones.
  - The platform keeps at most 5 webhooks per database; creating a sixth fails with a sentence that says so.
  - The platform signs every delivery with the webhook's secret (the header C(X-PlanetScale-Signature) is the hex
    HMAC-SHA256 of the body, keyed by the secret). Every read of a webhook shows the secret, but this module leaves it
    out of its result unless O(return_secret) is set, and never shows it in a diff, warning or message.
  - The platform sends only to public C(https) URLs and disables webhooks whose deliveries keep failing.
author:
  - planetscale.cloud contributors (@planetscale-ansible)
options:
  database:
    description: The name of the database.
    type: str
    required: true
  url:
    description:
      - The URL the webhook sends its events to. One of O(url) and O(id) is required; a new webhook needs O(url).
      - With O(id), the URL the webhook is changed to if it has another.
    type: str
  id:
    description: The ID of the webhook. It must exist; leave it out to create a webhook.
    type: str
  events:
    description:
      - The events the webhook sends, for example V(deploy_request.opened) or V(branch.ready). The platform's events
        are V(branch.anomaly), V(branch.out_of_memory), V(branch.primary_promoted), V(branch.ready),
        V(branch.schema_recommendation), V(branch.sleeping), V(branch.start_maintenance), V(cluster.storage),
        V(database.access_request), V(deploy_request.closed), V(deploy_request.errored),
        V(deploy_request.in_progress), V(deploy_request.opened), V(deploy_request.pending_cutover),
        V(deploy_request.queued), V(deploy_request.reverted), V(deploy_request.schema_applied),
        V(keyspace.storage) and V(webhook.test).
      - Not given, the events of an existing webhook are kept, and a new one gets the platform's default.
    type: list
    elements: str
  enabled:
    description: Whether the webhook sends deliveries. Not given, an existing webhook keeps its setting.
    type: bool
  send_test:
    description:
      - Ask the platform to send a test delivery (event V(webhook.test)) to the webhook, once the rest is applied.
        This is a change on every run that sets it. In check mode nothing is sent.
      - The platform sends at most one test delivery of a webhook every 20 seconds. Asked sooner, it says how long to
        wait, and the module waits that long (within O(api_retries)) and asks again. A test still refused fails the
        task with a sentence; the webhook itself is then already as declared.
    type: bool
    default: false
  return_secret:
    description:
      - Return the webhook's signing secret, as C(secret) in RV(webhook). Set C(no_log) on the task when you do (see the
        examples). The secret is never shown in a diff.
    type: bool
    default: false
  state:
    description:
      - V(present) creates the webhook if it does not exist and sets O(events) and O(enabled).
      - V(absent) deletes it; a webhook that does not exist is not a change.
    type: str
    choices: [present, absent]
    default: present
extends_documentation_fragment:
  - planetscale.cloud.api
  - planetscale.cloud.api.connection
  - planetscale.cloud.api.organization
  - planetscale.cloud.attributes.resource
seealso:
  - module: planetscale.cloud.webhook_info
  - module: planetscale.cloud.deploy_request
"""

EXAMPLES = r"""
- name: Tell the deploy bot about deploy requests, and send it a test delivery
  planetscale.cloud.webhook:
    organization: acme
    database: app
    url: https://deploybot.example.com/planetscale
    events: [deploy_request.opened, deploy_request.schema_applied, deploy_request.errored]
    send_test: true

- name: Keep the webhook but stop its deliveries
  planetscale.cloud.webhook:
    organization: acme
    database: app
    url: https://deploybot.example.com/planetscale
    enabled: false

- name: Read the signing secret, to give it to the receiver that checks the signatures
  planetscale.cloud.webhook:
    organization: acme
    database: app
    url: https://deploybot.example.com/planetscale
    return_secret: true
  register: hook
  no_log: true  # the result holds the secret

- name: Store it where the receiver reads it
  ansible.builtin.copy:
    content: "{{ hook.webhook.secret }}"
    dest: "{{ playbook_dir }}/planetscale-webhook-secret"
    mode: "0600"
  no_log: true

- name: Move the webhook to a new URL
  planetscale.cloud.webhook:
    organization: acme
    database: app
    id: "{{ hook.webhook.id }}"
    url: https://deploybot.example.com/v2/planetscale

- name: Delete it
  planetscale.cloud.webhook:
    organization: acme
    database: app
    url: https://deploybot.example.com/v2/planetscale
    state: absent
"""

RETURN = r"""
webhook:
  description:
    - The webhook (id, url, events, enabled, last_sent_at (null until it sends, not the zero time), last_sent_success,
      last_sent_result, created_at...). In check mode, when it would be created, the fields given.
    - The signing secret, C(secret), only with O(return_secret).
  returned: O(state=present)
  type: dict
  sample:
    id: wh1a2b3c4d5e
    url: https://deploybot.example.com/planetscale
    events: [deploy_request.opened, deploy_request.schema_applied]
    enabled: true
    last_sent_success: true
"""

from ansible_collections.planetscale.cloud.plugins.module_utils.adapter import run_module
from ansible_collections.planetscale.cloud.plugins.module_utils.base import ModuleFailure
from ansible_collections.planetscale.cloud.plugins.module_utils.client import ApiError
from ansible_collections.planetscale.cloud.plugins.module_utils.options import CONNECTION, CREDENTIALS, ORGANIZATION
from ansible_collections.planetscale.cloud.plugins.module_utils.resource import Resource
from ansible_collections.planetscale.cloud.plugins.module_utils.settle import write_and_settle
from ansible_collections.planetscale.cloud.plugins.module_utils.webhooks import RETURN_SECRET_OPTION, check_url, shown

# The events a webhook can subscribe to, as the platform lists them.
EVENTS = ("branch.anomaly", "branch.out_of_memory", "branch.primary_promoted", "branch.ready",
          "branch.schema_recommendation", "branch.sleeping", "branch.start_maintenance", "cluster.storage",
          "database.access_request", "deploy_request.closed", "deploy_request.errored", "deploy_request.in_progress",
          "deploy_request.opened", "deploy_request.pending_cutover", "deploy_request.queued",
          "deploy_request.reverted", "deploy_request.schema_applied", "keyspace.storage", "webhook.test")
MAX_WEBHOOKS = 5  # per database
TEST_INTERVAL = 20  # seconds: the platform sends at most one test delivery of a webhook in this time
REFUSED_TESTS = (429,)  # how the platform refuses a test delivery sooner than it allows (with Retry-After)


def check_events(events):
    """Refuse, before any request, an event the platform does not have, naming it and the ones it has."""
    unknown = [event for event in events or [] if event not in EVENTS]
    if unknown:
        raise ModuleFailure("events: %s %s not an event of the platform; the events are %s." % (
            ", ".join(repr(event) for event in unknown), "is" if len(unknown) == 1 else "are", ", ".join(EVENTS)))


def events_set(events):
    """Events as they are compared and shown: each once, sorted (the platform's order carries no meaning)."""
    return None if events is None else sorted(set(events))


def limit_reached(label, database, error):
    """The sentence for a create the platform refused because the database has the most webhooks it allows."""
    return ModuleFailure(
        "Database %r has %d webhooks, the most the platform allows, so it refused to create %s (HTTP %s%s). Delete "
        "one (state absent) or reuse one (give its id and the new url)." % (
            database, MAX_WEBHOOKS, label, error.status, ": %s" % error.message if error.message else ""),
        status=error.status, error=error.as_dict())


def test_refused(label, error):
    """The sentence for a test delivery the platform refused (it sends one a webhook every TEST_INTERVAL seconds)."""
    return (
        "The platform refused to send a test delivery to %s (HTTP %s%s): it sends at most one every %d seconds. Run "
        "the task again later." % (label, error.status, ": %s" % error.message if error.message else "",
                                   TEST_INTERVAL))


def send_test(client, test_path):
    """Ask for a test delivery (POST webhooks/{id}/test), through write_and_settle.

    A test cannot be read back, so one whose answer was lost is asked for again, without the client's retries; the
    platform refuses that second ask when the lost one was sent (one test every TEST_INTERVAL seconds), and that
    refusal means it was sent: it is neither waited out nor resent.
    """
    lost = []

    def send():
        if not lost:
            return client.post(test_path)
        try:
            with client.retrying(0):
                return client.post(test_path)
        except ApiError as error:
            if error.status in REFUSED_TESTS:
                return None
            raise

    def read_back(error):
        lost.append(error)
    write_and_settle(send, read_back=read_back)


class Webhook(Resource):
    option_sets = (CREDENTIALS, CONNECTION, ORGANIZATION)
    argument_spec = dict(
        database=dict(type="str", required=True),
        url=dict(type="str"),
        id=dict(type="str"),
        events=dict(type="list", elements="str"),
        enabled=dict(type="bool"),
        send_test=dict(type="bool", default=False),
        return_secret=RETURN_SECRET_OPTION,
    )
    required_one_of = (("url", "id"),)
    path_options = ("database", "id")
    must_exist = ("database",)
    names = ("url",)
    kind = "webhook"
    api_path = ("databases", "{database}", "webhooks")
    fields = ("url", "events", "enabled")
    required_to_create = ("url",)

    def validate(self):
        super().validate()
        check_url(self.params["url"])
        check_events(self.params["events"])

    def label(self):
        return "webhook %r of database %r" % (self.params["url"] or self.params["id"], self.params["database"])

    def read(self):
        if self.params["id"]:
            return self.client.get(self.url(self.params["id"]), missing_ok=True)
        found = [hook for hook in self.client.paginate(self.url()) if hook.get("url") == self.params["url"]]
        if len(found) > 1:
            raise ModuleFailure("%d webhooks of database %r send to %s (IDs %s); give id to name one." % (
                len(found), self.params["database"], self.params["url"], ", ".join(str(h.get("id")) for h in found)))
        return found[0] if found else None

    def managed(self, resource):
        fields = super().managed(resource)
        fields["events"] = events_set(fields["events"])
        return fields

    def wanted(self, resource):
        fields = super().wanted(resource)
        if "events" in fields:
            fields["events"] = events_set(fields["events"])
        return fields

    def predict(self, resource, changes):
        return dict(resource or dict(enabled=True), **changes)

    def create(self, values):
        try:
            return self.client.post(self.url(), json=values)
        except ApiError as error:
            if error.status != 422:
                raise
            hooks = list(self.client.paginate(self.url()))
            if len(hooks) >= MAX_WEBHOOKS and not any(h.get("url") == self.params["url"] for h in hooks):
                raise limit_reached(self.label(), self.params["database"], error)
            raise

    def after_present(self, resource, changed):
        if not self.params["send_test"]:
            return resource, changed
        if not self.ctx.check_mode:
            self.send_test(resource, changed)
        return resource, True

    def send_test(self, webhook, changed):
        try:
            send_test(self.client, self.url(webhook["id"], "test"))
        except ApiError as error:
            refused = error.status in REFUSED_TESTS
            raise ModuleFailure(test_refused(self.label(), error) if refused else self.explain(error), changed=changed,
                                webhook=shown(webhook, self.params["return_secret"]), status=error.status,
                                error=error.as_dict())

    def result_keys(self, resource):
        return {self.kind: shown(resource, self.params["return_secret"])}


def main():
    run_module(Webhook)


if __name__ == "__main__":
    main()
