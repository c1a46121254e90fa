#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: service_token_info
short_description: List the service tokens of an organization with their accesses
version_added: 0.2.0
description:
  - Returns every service token of an organization, walking all pages of the list, each with its accesses.
  - Never returns a secret. The platform shows a token's secret only to the request that creates it; should an
    answer carry one, it is left out.
  - With O(id) or O(name), returns the tokens that match; a token that does not exist gives an empty list.
author:
  - planetscale.cloud contributors (@planetscale-ansible)
options:
  id:
    description: The ID of one token.
    type: str
  name:
    description: Only the tokens of this name (names are not unique).
    type: str
extends_documentation_fragment:
  - planetscale.cloud.api
  - planetscale.cloud.api.connection
  - planetscale.cloud.api.organization
  - planetscale.cloud.attributes.info
notes:
  - Each token's accesses take one request of their own.
seealso:
  - module: planetscale.cloud.service_token
"""

EXAMPLES = r"""
- name: List every service token with its accesses
  planetscale.cloud.service_token_info:
    organization: acme
  register: tokens

- name: Name the tokens with organization-wide accesses
  ansible.builtin.debug:
    msg: "{{ item.name }}: {{ item.accesses | rejectattr('database', 'defined') | map(attribute='access') | flatten }}"
  loop: "{{ tokens.service_tokens }}"
  loop_control:
    label: "{{ item.id }}"
  when: item.accesses | rejectattr('database', 'defined') | list | length > 0

- name: Name the tokens that never expire
  ansible.builtin.debug:
    msg: "{{ tokens.service_tokens | rejectattr('expires_at') | map(attribute='name') | list }}"
"""

RETURN = r"""
service_tokens:
  description: The tokens, without their secrets.
  returned: success
  type: list
  elements: dict
  contains:
    id:
      description: The ID of the token.
      type: str
    name:
      description: The name of the token.
      type: str
    display_name:
      description: The name the platform shows.
      type: str
    created_at:
      description: When it was created (ISO 8601).
      type: str
    expires_at:
      description: When it expires (ISO 8601); null when it never expires.
      type: str
    last_used_at:
      description: When it was last used (ISO 8601).
      type: str
    actor_id:
      description: The ID of the user on whose behalf it was created.
      type: str
    actor_display_name:
      description: The name of that user.
      type: str
    accesses:
      description: The accesses, one entry per database, in the form the option
        O(planetscale.cloud.service_token#module:accesses) takes; the organization-wide entry has no C(database).
      type: list
      elements: dict
      sample: [{access: [create_databases]}, {database: app, access: [read_branch]}]
"""

from ansible_collections.planetscale.cloud.plugins.module_utils.adapter import run_module
from ansible_collections.planetscale.cloud.plugins.module_utils.base import InfoModule
from ansible_collections.planetscale.cloud.plugins.module_utils.options import CONNECTION, CREDENTIALS, ORGANIZATION
from ansible_collections.planetscale.cloud.plugins.module_utils.service_tokens import read_accesses
from ansible_collections.planetscale.cloud.plugins.module_utils.shown_once import without_secrets


class ServiceTokenInfo(InfoModule):
    option_sets = (CREDENTIALS, CONNECTION, ORGANIZATION)
    argument_spec = dict(
        id=dict(type="str"),
        name=dict(type="str"),
    )
    path_options = ("id",)

    def run(self):
        tokens_url = self.org_path("service-tokens")
        if self.params["id"]:
            found = self.client.get("%s/%s" % (tokens_url, self.params["id"]), missing_ok=True)
            if found is None:
                self.client.get(tokens_url, params=dict(per_page=1))  # a missing organization fails
            tokens = [found] if found else []
        else:
            tokens = self.items(tokens_url)
        tokens = [without_secrets(token) for token in tokens
                  if self.params["name"] in (None, token.get("name"))]
        ids = [self.client.record_id(token, "a service token") for token in tokens]
        for token, token_id in zip(tokens, ids):
            token.pop("service_token_accesses", None)
            token["accesses"] = read_accesses(self.client, self.org_path("service-tokens", token_id, "access"))
        return dict(service_tokens=tokens)


def main():
    run_module(ServiceTokenInfo)


if __name__ == "__main__":
    main()
