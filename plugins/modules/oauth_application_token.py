#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: oauth_application_token
short_description: Revoke a token an OAuth application holds to an organization
version_added: 0.3.0
description:
  - Ensures that a token an OAuth application of the organization holds is revoked (O(state=absent)), so that the
    application can no longer act with it, nor renew it.
  - The token is named by its ID and its application's ID, as M(planetscale.cloud.oauth_application_info) returns them;
    nothing else names a token, so the module never revokes one it was not given by ID. A token that is already gone is
    not a change; an application that does not exist fails the task.
  - This module manages the tokens other applications hold. To obtain or renew the collection's own access token from
    the OAuth server, use M(planetscale.cloud.token).
author:
  - planetscale.cloud contributors (@planetscale-ansible)
options:
  application_id:
    description: The ID of the OAuth application that holds the token.
    type: str
    required: true
  id:
    description: The ID of the token.
    type: str
    required: true
  state:
    description:
      - V(absent) revokes the token. It is the only state, and must be given, so that a task says what it does.
    type: str
    choices: [absent]
    required: true
extends_documentation_fragment:
  - planetscale.cloud.api
  - planetscale.cloud.api.connection
  - planetscale.cloud.api.organization
  - planetscale.cloud.attributes.resource
notes:
  - The diff shows who the token was issued to and when it was last used, never its secrets, though the platform's
    reads of a token carry them.
  - When the answer to the revocation is lost (a dropped connection, a gateway error), the module reads the token
    back. A token that is gone was revoked; one that is still there fails the task, which says that nothing was
    revoked.
seealso:
  - module: planetscale.cloud.oauth_application_info
  - module: planetscale.cloud.token
"""

EXAMPLES = r"""
- name: The tokens of the organization's OAuth applications
  planetscale.cloud.oauth_application_info:
    organization: acme
  register: found

- name: Revoke every token that was never used
  planetscale.cloud.oauth_application_token:
    organization: acme
    application_id: "{{ item.0.id }}"
    id: "{{ item.1.id }}"
    state: absent
  loop: "{{ found.oauth_applications | subelements('tokens') }}"
  loop_control:
    label: "{{ item.0.name }}: {{ item.1.display_name }}"
  when: item.1.last_used_at is none

- name: Revoke every token that a person who left authorized
  planetscale.cloud.oauth_application_token:
    organization: acme
    application_id: "{{ item.0.id }}"
    id: "{{ item.1.id }}"
    state: absent
  loop: "{{ found.oauth_applications | subelements('tokens') }}"
  loop_control:
    label: "{{ item.0.name }}: {{ item.1.display_name }}"
  when: item.1.actor_display_name == 'Emulator Admin'
"""

RETURN = r"""
oauth_token:
  description:
    - The token revoked (in check mode, the one that would be), without its secrets, with the fields
      M(planetscale.cloud.oauth_application_info) returns of a token.
  returned: when the token existed
  type: dict
  contains:
    id:
      description: The ID of the token.
      type: str
    display_name:
      description: The name the platform shows.
      type: str
    actor_display_name:
      description: The user who authorized the application.
      type: str
    created_at:
      description: When the token was first issued (ISO 8601).
      type: str
    last_used_at:
      description: When it was last used (ISO 8601); null when never.
      type: str
"""

from ansible_collections.planetscale.cloud.plugins.module_utils.adapter import run_module
from ansible_collections.planetscale.cloud.plugins.module_utils.oauth_tokens import token_record, tokens_path
from ansible_collections.planetscale.cloud.plugins.module_utils.options import CONNECTION, CREDENTIALS, ORGANIZATION
from ansible_collections.planetscale.cloud.plugins.module_utils.resource import Resource


class OAuthApplicationToken(Resource):
    """A token of an OAuth application, named by its ID only: read, then revoked."""

    option_sets = (CREDENTIALS, CONNECTION, ORGANIZATION)
    argument_spec = dict(
        application_id=dict(type="str", required=True),
        id=dict(type="str", required=True),
        state=dict(type="str", choices=["absent"], required=True),
    )
    path_options = ("application_id", "id")
    must_exist = (("application_id", "OAuth application"),)
    kind = "oauth_token"
    fields = ("id", "display_name", "actor_display_name", "created_at", "last_used_at")  # shown in the diff

    def label(self):
        return "OAuth token %r of application %r" % (self.params["id"], self.params["application_id"])

    def read(self):
        found = self.client.get(tokens_path(self, self.params["application_id"], self.params["id"]), missing_ok=True)
        if found is None:
            # a token that is gone is not a change; an application that is not there is an error
            self.client.get(self.org_path("oauth-applications", self.params["application_id"]))
            return None
        if not isinstance(found, dict) or str(found.get("id")) != self.params["id"]:
            raise self.client.wrong_answer("the answer is not the OAuth token %r (it names %s); nothing was revoked" % (
                self.params["id"], "%r" % found.get("id") if isinstance(found, dict) else "no token"))
        return token_record(found)

    def absent(self, resource):
        result = super().absent(resource)
        if resource is not None:
            result[self.kind] = resource  # token_record(): the fields named there, never a secret
        return result

    def delete(self, resource):
        self.client.delete(tokens_path(self, self.params["application_id"], self.params["id"]), missing_ok=True)


def main():
    run_module(OAuthApplicationToken)


if __name__ == "__main__":
    main()
