#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: webhook_info
short_description: List the webhooks of a database, or read one
version_added: 0.2.0
description:
  - Returns every webhook of a database, walking all pages of the list, or the one named by O(id) or O(url).
  - A webhook that does not exist is not an error; RV(webhooks) is then empty. A database or organization that does
    not exist is an error.
  - Every read of a webhook on the platform shows its signing secret; this module leaves it out unless
    O(return_secret) is set.
author:
  - planetscale.cloud contributors (@planetscale-ansible)
options:
  database:
    description: The name of the database.
    type: str
    required: true
  id:
    description: The ID of one webhook to read. RV(webhooks) then holds that webhook, or nothing.
    type: str
  url:
    description: Return only the webhooks that send to this URL.
    type: str
  return_secret:
    description:
      - Return each webhook's signing secret in RV(webhooks[].secret). Set C(no_log) on the task when you do (see the
        examples).
    type: bool
    default: false
extends_documentation_fragment:
  - planetscale.cloud.api
  - planetscale.cloud.api.connection
  - planetscale.cloud.api.organization
  - planetscale.cloud.attributes.info
seealso:
  - module: planetscale.cloud.webhook
"""

EXAMPLES = r"""
- name: List the webhooks of a database
  planetscale.cloud.webhook_info:
    organization: acme
    database: app
  register: hooks

- name: Show the webhooks whose last delivery failed
  ansible.builtin.debug:
    msg: "{{ hooks.webhooks | rejectattr('last_sent_success') | map(attribute='url') | list }}"

- name: Read the signing secret of one webhook
  planetscale.cloud.webhook_info:
    organization: acme
    database: app
    url: https://deploybot.example.com/planetscale
    return_secret: true
  register: hook
  no_log: true  # the result holds the secret
"""

RETURN = r"""
webhooks:
  description: The webhooks, as the API lists them. With O(id), a list of the one webhook, or an empty list.
  returned: success
  type: list
  elements: dict
  contains:
    id:
      description: The ID of the webhook, for O(planetscale.cloud.webhook#module:id).
      type: str
    url:
      description: The URL the webhook sends its events to.
      type: str
    events:
      description: The events it sends.
      type: list
      elements: str
      sample: [deploy_request.opened, branch.ready]
    enabled:
      description: Whether it sends deliveries.
      type: bool
    last_sent_at:
      description: When it last sent a delivery, or null when it has sent none (the platform's zero time
        C(0001-01-01T00:00:00Z) is returned as null).
      type: str
    last_sent_success:
      description: Whether the last delivery was answered with a 2xx status.
      type: bool
    last_sent_result:
      description: What the last delivery got as an answer.
      type: str
    created_at:
      description: When the webhook was created.
      type: str
    secret:
      description: The key that signs its deliveries (C(X-PlanetScale-Signature)).
      type: str
      returned: O(return_secret=true)
"""

from ansible_collections.planetscale.cloud.plugins.module_utils.adapter import run_module
from ansible_collections.planetscale.cloud.plugins.module_utils.base import InfoModule
from ansible_collections.planetscale.cloud.plugins.module_utils.options import CONNECTION, CREDENTIALS, ORGANIZATION
from ansible_collections.planetscale.cloud.plugins.module_utils.webhooks import RETURN_SECRET_OPTION, check_url, shown


class WebhookInfo(InfoModule):
    """A webhook named by id that is absent is an empty list; its database being absent is a failure."""

    option_sets = (CREDENTIALS, CONNECTION, ORGANIZATION)
    argument_spec = dict(
        database=dict(type="str", required=True),
        id=dict(type="str"),
        url=dict(type="str"),
        return_secret=RETURN_SECRET_OPTION,
    )
    path_options = ("database", "id")
    must_exist = ("database",)

    def validate(self):
        super().validate()
        check_url(self.params["url"])

    def run(self):
        webhooks = self.org_path("databases", self.params["database"], "webhooks")
        if self.params["id"] is not None:
            found = self.client.get("%s/%s" % (webhooks, self.params["id"]), missing_ok=True)
            if found is None:
                self.client.get(webhooks, params=dict(per_page=1))  # a missing database or organization fails
            found = [found] if found is not None else []
        else:
            found = self.items(webhooks)
        found = [hook for hook in found if self.params["url"] in (None, hook.get("url"))]
        return dict(webhooks=[shown(hook, self.params["return_secret"]) for hook in found])


def main():
    run_module(WebhookInfo)


if __name__ == "__main__":
    main()
