#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: oauth_application_info
short_description: List the OAuth applications of an organization and the tokens each holds
version_added: 0.3.0
description:
  - Returns every OAuth application of an organization, walking all pages of the list, or the one named by O(id); with
    each, by default, the tokens it holds to the organization (every page), which tell who authorized it, when, when it
    was last used, and what it may reach.
  - Never returns a secret. The platform's reads of a token still carry its access token and refresh token; the module
    returns only the fields documented under RV(oauth_applications[].tokens), so neither those nor any other field the
    platform adds reach the result. Nor does an application's client secret.
  - An application that does not exist is not an error; RV(oauth_applications) is then empty. An organization that does
    not exist is an error.
  - To revoke a token, give its ID and its application's to M(planetscale.cloud.oauth_application_token).
author:
  - planetscale.cloud contributors (@planetscale-ansible)
options:
  id:
    description: The ID of one application to read. RV(oauth_applications) then holds that application, or nothing.
    type: str
  name:
    description: Only the applications of this name.
    type: str
  tokens:
    description: Read each application's tokens into RV(oauth_applications[].tokens); one more request an application.
    type: bool
    default: true
extends_documentation_fragment:
  - planetscale.cloud.api
  - planetscale.cloud.api.connection
  - planetscale.cloud.api.organization
  - planetscale.cloud.attributes.info
seealso:
  - module: planetscale.cloud.oauth_application_token
  - module: planetscale.cloud.token
"""

EXAMPLES = r"""
- name: Every OAuth application of the organization, with the tokens it holds
  planetscale.cloud.oauth_application_info:
    organization: acme
  register: found

- name: Who authorized which application, and when each token was last used
  ansible.builtin.debug:
    msg: "{{ item.0.name }}: {{ item.1.actor_display_name }}, last used {{ item.1.last_used_at or 'never' }}"
  loop: "{{ found.oauth_applications | subelements('tokens') }}"
  loop_control:
    label: "{{ item.1.id }}"

- name: The applications alone, with how many tokens each holds
  planetscale.cloud.oauth_application_info:
    organization: acme
    tokens: false
  register: applications

- name: Name the applications that hold no token
  ansible.builtin.debug:
    msg: "{{ applications.oauth_applications | selectattr('token_count', 'eq', 0) | map(attribute='name') | list }}"
"""

RETURN = r"""
oauth_applications:
  description:
    - The applications, as the platform answers them without a client secret. With O(id), a list of the one
      application, or an empty list.
  returned: success
  type: list
  elements: dict
  contains:
    id:
      description: The ID of the application.
      type: str
    name:
      description: The name of the application.
      type: str
    client_id:
      description: The application's client ID (not a secret).
      type: str
    redirect_uri:
      description: Where the platform sends a user who authorized the application.
      type: str
    domain:
      description: The domain of the redirect URI.
      type: str
    scopes:
      description: The scopes the application asks for, separated by spaces.
      type: str
    created_at:
      description: When the application was registered (ISO 8601).
      type: str
    updated_at:
      description: When the application last changed (ISO 8601).
      type: str
    avatar:
      description: The image the platform shows for the application.
      type: str
    dcr:
      description: Whether the application registered itself (Dynamic Client Registration).
      type: bool
    single_org_authorization:
      description: Whether a user may authorize the application for one organization only.
      type: bool
    requires_org_scope:
      description: Whether the application needs at least one organization authorized.
      type: bool
    scopes_by_resource:
      description: The scopes the application asks for, by the kind of resource.
      type: dict
    all_scopes_by_resource:
      description: Every scope there is, by the kind of resource, with whether the application asks for it.
      type: dict
    mcp_tool_groups:
      description: The MCP tool groups of the application, where the platform's record has the field (often null).
      type: list
      returned: where the platform's record has it
    token_count:
      description: How many tokens the application holds, as the platform counts them (C(tokens) in its answer).
      type: int
    tokens:
      description:
        - The tokens the application holds, each without its secrets.
        - Only these fields, as the platform answers them. The platform's records may hold C(name), C(expires_at),
          C(actor_id) and C(service_token_accesses) null.
      returned: when O(tokens=true)
      type: list
      elements: dict
      contains:
        id:
          description: The ID of the token; give it to M(planetscale.cloud.oauth_application_token) to revoke it.
          type: str
        name:
          description: The name of the token.
          type: str
        display_name:
          description: The name the platform shows.
          type: str
        avatar_url:
          description: The avatar of the user who authorized the application.
          type: str
        created_at:
          description: When the token was first issued (ISO 8601).
          type: str
        updated_at:
          description: When it was last renewed (ISO 8601).
          type: str
        expires_at:
          description: When the access token expires (ISO 8601); null where the platform does not say.
          type: str
        last_used_at:
          description: When it was last used (ISO 8601); null when never.
          type: str
        actor_id:
          description: The ID of the user on whose behalf it was issued.
          type: str
        actor_display_name:
          description: The name of that user.
          type: str
        actor_type:
          description: The kind of that actor, such as V(User).
          type: str
        service_token_accesses:
          description: The accesses the token grants, each with C(access) and the C(resource) it is on.
          type: list
          elements: dict
        oauth_accesses_by_resource:
          description: The token's accesses by the kind of resource (C(database), C(organization), C(branch), C(user)).
          type: dict
"""

from ansible_collections.planetscale.cloud.plugins.module_utils.adapter import run_module
from ansible_collections.planetscale.cloud.plugins.module_utils.base import InfoModule
from ansible_collections.planetscale.cloud.plugins.module_utils.oauth_tokens import token_record, tokens_path
from ansible_collections.planetscale.cloud.plugins.module_utils.options import CONNECTION, CREDENTIALS, ORGANIZATION

# What an application's record may return: named, so that a client secret (or any field the platform adds) never does.
APPLICATION_FIELDS = ("id", "name", "client_id", "redirect_uri", "domain", "scopes", "avatar", "created_at",
                      "updated_at", "dcr", "single_org_authorization", "requires_org_scope", "scopes_by_resource",
                      "all_scopes_by_resource", "mcp_tool_groups")


def application_record(record):
    """The fields of APPLICATION_FIELDS the answer has, and the platform's count of tokens as token_count."""
    shown = dict((key, record[key]) for key in APPLICATION_FIELDS if key in record)
    shown["token_count"] = record.get("tokens")
    return shown


class OAuthApplicationInfo(InfoModule):
    """An application named that is absent is an empty list; the organization being absent is a failure."""

    option_sets = (CREDENTIALS, CONNECTION, ORGANIZATION)
    argument_spec = dict(
        id=dict(type="str"),
        name=dict(type="str"),
        tokens=dict(type="bool", default=True),
    )
    path_options = ("id",)
    must_exist = ()  # a 404 names the organization only: the list that answers it is the organization's

    def run(self):
        applications_url = self.org_path("oauth-applications")
        if self.params["id"] is not None:
            found = self.client.get("%s/%s" % (applications_url, self.params["id"]), missing_ok=True)
            if found is None:
                self.client.get(applications_url, params=dict(per_page=1))  # a missing organization fails
            found = [found] if found is not None else []
        else:
            found = self.items(applications_url)
        found = [record for record in found if self.params["name"] in (None, record.get("name"))]
        ids = [self.client.record_id(record, "an OAuth application") for record in found]
        applications = []
        for record, application_id in zip(found, ids):
            application = application_record(record)
            if self.params["tokens"]:
                application["tokens"] = [token_record(token) for token in self.items(tokens_path(self, application_id))]
            applications.append(application)
        return dict(oauth_applications=applications)


def main():
    run_module(OAuthApplicationInfo)


if __name__ == "__main__":
    main()
