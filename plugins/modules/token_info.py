#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: token_info
short_description: Check an OAuth access token before relying on it
version_added: 0.1.0
description:
  - Asks the OAuth server (O(auth_url)) whether O(access_token) is active, for which client and
    user, with which scopes, and until when.
  - An expired, revoked or unknown token is a normal result, RV(token_info.active=false), unless
    O(fail_if_inactive=true).
author:
  - planetscale.cloud contributors (@planetscale-ansible)
extends_documentation_fragment:
  - planetscale.cloud.api.auth_url
  - planetscale.cloud.api.connection
  - planetscale.cloud.attributes.info
options:
  access_token:
    description:
      - The OAuth access token to check, as returned by M(planetscale.cloud.token).
      - If not set, the environment variable E(PLANETSCALE_ACCESS_TOKEN) is used.
    type: str
    required: true
  fail_if_inactive:
    description:
      - Fail when the token is not active, instead of returning RV(token_info.active=false).
    type: bool
    default: false
seealso:
  - module: planetscale.cloud.token
"""

EXAMPLES = r"""
- name: Check the access token the play is about to use
  planetscale.cloud.token_info:
    access_token: "{{ planetscale_oauth.access_token }}"
  register: checked
  no_log: true

- name: Say how long it lives
  ansible.builtin.debug:
    msg: "Active: {{ checked.token_info.active }}, expires at {{ checked.token_info.expires_at | default('-') }}"

- name: Stop here unless the token from the environment (PLANETSCALE_ACCESS_TOKEN) is active
  planetscale.cloud.token_info:
    fail_if_inactive: true
"""

RETURN = r"""
token_info:
  description: What the OAuth server knows of the token. For an inactive token, only RV(token_info.active).
  returned: success
  type: dict
  contains:
    active:
      description: Whether the token is active (neither expired nor revoked).
      type: bool
      returned: always
      sample: true
    scope:
      description: The scopes of the token, space-separated.
      type: str
      returned: when active
      sample: read_user read_organization
    scopes:
      description: The scopes of the token, as a list.
      type: list
      elements: str
      returned: when active
      sample: [read_user, read_organization]
    client_id:
      description: The client ID of the OAuth application the token was issued to.
      type: str
      returned: when active
    token_type:
      description: The type of the token.
      type: str
      returned: when active
      sample: Bearer
    exp:
      description: When the token expires, as a Unix timestamp.
      type: int
      returned: when active
      sample: 1795309323
    iat:
      description: When the token was issued, as a Unix timestamp.
      type: int
      returned: when active
      sample: 1795305723
    sub:
      description: The ID of the user who authorized the token.
      type: str
      returned: when active
    expires_at:
      description: RV(token_info.exp) in ISO 8601 UTC.
      type: str
      returned: when active
      sample: "2026-11-22T01:02:03Z"
    expires_in:
      description: Seconds the token has left, on the OAuth server's clock.
      type: int
      returned: when active
      sample: 3412
"""

from ansible_collections.planetscale.cloud.plugins.module_utils.adapter import run_module
from ansible_collections.planetscale.cloud.plugins.module_utils.base import ModuleFailure
from ansible_collections.planetscale.cloud.plugins.module_utils.oauth import OAuthModule
from ansible_collections.planetscale.cloud.plugins.module_utils.options import ACCESS_TOKEN, AUTH_URL, CONNECTION


class TokenInfo(OAuthModule):
    """Reads only; an inactive token is an answer, not an error, unless the user says so."""

    option_sets = (AUTH_URL, CONNECTION)
    argument_spec = dict(
        access_token=dict(ACCESS_TOKEN.options["access_token"], required=True),
        fail_if_inactive=dict(type="bool", default=False),
    )

    def validate(self):
        super().validate()
        if not self.params["access_token"].strip():
            raise ModuleFailure("access_token is empty: pass the access token to check (or set PLANETSCALE_ACCESS_TOKEN).")

    def run(self):
        info = self.read_token_info(self.params["access_token"])
        if self.params["fail_if_inactive"] and not info["active"]:
            raise ModuleFailure("The access token is not active: it expired, was revoked or is unknown to the OAuth "
                                "server at %s. Refresh it with planetscale.cloud.token, or have the user authorize "
                                "the application again." % self.params["auth_url"], token_info=info)
        return dict(token_info=info)


def main():
    run_module(TokenInfo)


if __name__ == "__main__":
    main()
