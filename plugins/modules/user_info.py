#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: user_info
short_description: Show the user the credentials act for
version_added: 0.1.0
description:
  - Returns the user that the access token or service token belongs to.
  - Useful as a first check that credentials work.
author:
  - planetscale.cloud contributors (@planetscale-ansible)
extends_documentation_fragment:
  - planetscale.cloud.api
  - planetscale.cloud.api.connection
  - planetscale.cloud.attributes.info
"""

EXAMPLES = r"""
- name: Show who the credentials belong to
  planetscale.cloud.user_info:
  register: me

- name: Print the user's e-mail address
  ansible.builtin.debug:
    msg: "Acting as {{ me.user.email }}"
"""

RETURN = r"""
user:
  description: The current user.
  returned: success
  type: dict
  contains:
    id:
      description: The ID of the user.
      type: str
      sample: ab12cd34ef56
    display_name:
      description: The display name.
      type: str
    name:
      description: The user's name.
      type: str
    email:
      description: The e-mail address.
      type: str
      sample: ada@example.com
    avatar_url:
      description: URL of the avatar.
      type: str
    created_at:
      description: When the user was created (ISO 8601).
      type: str
    updated_at:
      description: When the user was last updated (ISO 8601).
      type: str
    two_factor_auth_configured:
      description: Whether the user has configured two-factor authentication.
      type: bool
    default_organization:
      description: The user's default organization (id, name, created_at, updated_at, deleted_at).
      type: dict
    sso:
      description: Whether the user is managed by single sign-on.
      type: bool
    managed:
      description: Whether the user is managed by an authentication provider.
      type: bool
    directory_managed:
      description: Whether the user is managed by a single-sign-on directory.
      type: bool
    email_verified:
      description: Whether the e-mail address is verified.
      type: bool
"""

from ansible_collections.planetscale.cloud.plugins.module_utils.adapter import run_module
from ansible_collections.planetscale.cloud.plugins.module_utils.base import InfoModule
from ansible_collections.planetscale.cloud.plugins.module_utils.options import CONNECTION, CREDENTIALS


class UserInfo(InfoModule):
    option_sets = (CREDENTIALS, CONNECTION)

    def run(self):
        return dict(user=self.client.get("/user"))


def main():
    run_module(UserInfo)


if __name__ == "__main__":
    main()
