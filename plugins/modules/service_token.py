#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: service_token
short_description: Manage the service tokens of an organization and their accesses
version_added: 0.2.0
description:
  - Ensures that a service token exists, with the O(accesses) declared, or that it does not.
  - The secret is shown once, by the task that creates the token, in RV(service_token.token). Set C(no_log) on that
    task and store the secret at once; no later read of the token carries it.
  - Accesses are added and removed in the fewest requests, one per database whose accesses grow or shrink; equal
    accesses send nothing. Accesses that are not declared stay, unless O(purge_accesses=true).
  - A token is named by O(id), or by O(name). Names are not unique; when several tokens share the name the module
    fails and names their IDs (also in a warning, which C(no_log) does not hide), and O(id) selects one.
  - After a create whose answer was lost, the token that request made is found by its name, the time of the request
    and its C(actor_id), which must be the task's credential (the service token O(service_token_id), or the user
    that C(GET /user) names for the credential); it is deleted (nobody holds its secret) and created once more. A
    token the task cannot prove it made (made with another credential, or one without an actor) is never deleted;
    it is left, the create is sent again, and a warning that C(no_log) does not hide names its ID. Two clients that
    share one credential are not told apart.
  - A create answered with a token of another name than asked fails naming both, and nothing more is sent.
  - When adding the declared accesses to a token the task has just created fails, the token is deleted again, so
    that no token whose secret nobody holds is left.
author:
  - planetscale.cloud contributors (@planetscale-ansible)
options:
  name:
    description: The name of the token. With O(id), it must be the name the token has (it cannot be changed).
    type: str
  id:
    description: The ID of the token, to select one of several tokens that share a name. One of O(id) and O(name)
      is required.
    type: str
  ttl:
    description:
      - Seconds the new token is valid for, at most 2147483647. V(0) or leaving it out gives a token that never
        expires.
      - It can only be set when the token is created. On an existing token it is compared with the token's lifetime
        (C(expires_at) minus C(created_at), to the second); a difference fails and names the field.
    type: int
  accesses:
    description:
      - The accesses the token has, one entry per database; an entry without O(accesses[].database) holds the
        organization-wide accesses (such as V(create_databases) or V(read_organization)).
      - The platform's access names are listed in its documentation of service tokens.
    type: list
    elements: dict
    suboptions:
      database:
        description: The name of the database. Leave it out for accesses on the whole organization.
        type: str
      access:
        description: The accesses on the database (or the organization), such as V(read_branch) or
          V(create_branch).
        type: list
        elements: str
        required: true
  purge_accesses:
    description: Remove the accesses that O(accesses) does not declare. Without O(accesses) nothing is removed.
    type: bool
    default: false
  state:
    description:
      - V(present) creates the token if there is none of the name, and adds (and with O(purge_accesses) removes)
        accesses.
      - V(absent) deletes it; a token that does not exist is not a change.
    type: str
    choices: [present, absent]
    default: present
extends_documentation_fragment:
  - planetscale.cloud.api
  - planetscale.cloud.api.connection
  - planetscale.cloud.api.organization
  - planetscale.cloud.attributes.resource
notes:
  - The diff shows the name and the accesses of the token, never its secret.
  - Removing an organization member with O(planetscale.cloud.organization_member#module:delete_service_tokens=true)
    deletes the tokens that member created.
seealso:
  - module: planetscale.cloud.service_token_info
  - module: planetscale.cloud.organization_member
"""

EXAMPLES = r"""
- name: Ensure the CI token, which may create branches of the app database and open deploy requests
  planetscale.cloud.service_token:
    organization: acme
    name: ci
    ttl: 7776000
    accesses:
      - database: app
        access: [read_branch, create_branch, delete_branch, create_deploy_request]
  register: ci_token
  no_log: true

- name: Store the secret the first time (it is shown once)
  ansible.builtin.copy:
    content: "{{ ci_token.service_token.id }}:{{ ci_token.service_token.token }}\n"
    dest: "{{ playbook_dir }}/planetscale-token"
    mode: "0600"
  when: ci_token.service_token.token is defined
  no_log: true

- name: Keep exactly these accesses on the reporting token
  planetscale.cloud.service_token:
    organization: acme
    name: reporting
    accesses:
      - access: [read_organization]
      - database: app
        access: [read_branch]
    purge_accesses: true

- name: Delete a token by its ID
  planetscale.cloud.service_token:
    organization: acme
    id: 4tsv0q3s0yr0
    state: absent
"""

RETURN = r"""
service_token:
  description: The token. In check mode, when it would be created, its name, accesses and ttl (the O(ttl) given).
  returned: O(state=present)
  type: dict
  contains:
    id:
      description: The ID of the token, the user name of the credential (O(service_token_id)).
      type: str
      sample: 4tsv0q3s0yr0
    name:
      description: The name of the token.
      type: str
      sample: ci
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
    accesses:
      description: The accesses, one entry per database; the organization-wide entry has no C(database).
      type: list
      elements: dict
      sample: [{access: [read_organization]}, {database: app, access: [create_branch, read_branch]}]
    token:
      description: The secret, the password of the credential (O(service_token)).
      returned: when the token was created by this task (not in check mode)
      type: str
"""

from ansible_collections.planetscale.cloud.plugins.module_utils.adapter import run_module
from ansible_collections.planetscale.cloud.plugins.module_utils.options import CONNECTION, CREDENTIALS, ORGANIZATION
from ansible_collections.planetscale.cloud.plugins.module_utils.passwords import check_ttl
from ansible_collections.planetscale.cloud.plugins.module_utils.resource import Resource
from ansible_collections.planetscale.cloud.plugins.module_utils.service_tokens import (
    OwnTokens, as_entries, by_database, check_accesses)


class ServiceToken(OwnTokens, Resource):
    option_sets = (CREDENTIALS, CONNECTION, ORGANIZATION)
    argument_spec = dict(
        name=dict(type="str"),
        id=dict(type="str"),
        ttl=dict(type="int"),
        accesses=dict(type="list", elements="dict", options=dict(
            database=dict(type="str"),
            access=dict(type="list", elements="str", required=True),
        )),
        purge_accesses=dict(type="bool", default=False),
    )
    required_one_of = (("name", "id"),)
    path_options = ("id",)
    kind = "service_token"
    api_path = ("service-tokens",)
    names = ("name",)
    fields = ("name", "ttl", "accesses")
    create_only = ("name", "ttl")

    def validate(self):
        super().validate()
        check_ttl(self.params["ttl"])
        check_accesses(self.params["accesses"])

    def label(self):
        if self.params["id"]:
            return "service token %r" % self.params["id"]
        return "service token %r" % self.params["name"]

    def wanted(self, resource):
        wanted = dict((name, self.params[name]) for name in ("name", "ttl") if self.params[name] is not None)
        if self.params["accesses"] is not None:
            declared = by_database(self.params["accesses"])
            if resource is not None and not self.params["purge_accesses"]:
                for database, names in by_database(resource.get("accesses")).items():
                    declared.setdefault(database, set()).update(names)
            wanted["accesses"] = as_entries(declared)
        return wanted


def main():
    run_module(ServiceToken)


if __name__ == "__main__":
    main()
