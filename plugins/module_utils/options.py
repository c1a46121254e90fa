# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The shared options of the modules, in option sets (OptionSet), and the action group they make up.

A module names the sets it takes in Module.option_sets (base.py); each set carries its options' argument
spec and the doc fragment (plugins/doc_fragments/api.py) that documents them.
"""

from __future__ import annotations

from ansible.module_utils.basic import env_fallback

DEFAULT_API_URL = "https://api.planetscale.com/v1"
DEFAULT_AUTH_URL = "https://auth.planetscale.com"


class OptionSet:
    """Options that modules take together, and the doc fragment that documents them.

    A module names the sets it takes in Module.option_sets; its argument spec and the doc fragments
    its DOCUMENTATION extends follow from that (tests/unit/test_option_sets.py holds every module to it).

    fragment documents the options, or is None where each module that takes them documents
    them itself (their meaning differs). parts are the sets that a set combines: a module that
    takes OAUTH takes AUTH_URL.
    """

    def __init__(self, name, options=None, fragment=None, parts=()):
        self.name = name
        self.options = dict(options or {})
        for part in parts:
            self.options.update(part.options)
        self.fragment = fragment
        self.parts = tuple(parts)

    def __repr__(self):
        return "OptionSet(%s)" % self.name


FRAGMENT = "planetscale.cloud.api"
CONNECTION = OptionSet("connection", dict(
    api_timeout=dict(type="int", default=30, fallback=(env_fallback, ["PLANETSCALE_API_TIMEOUT"])),
    api_retries=dict(type="int", default=5, fallback=(env_fallback, ["PLANETSCALE_API_RETRIES"])),
    validate_certs=dict(type="bool", default=True),
    ca_path=dict(type="path"),
), fragment=FRAGMENT + ".connection")
ACCESS_TOKEN = OptionSet("access_token", dict(
    access_token=dict(type="str", no_log=True, fallback=(env_fallback, ["PLANETSCALE_ACCESS_TOKEN"])),
))
SERVICE_TOKEN = OptionSet("service_token", dict(
    service_token_id=dict(type="str", fallback=(env_fallback, ["PLANETSCALE_SERVICE_TOKEN_ID"])),
    service_token=dict(type="str", no_log=True, fallback=(env_fallback, ["PLANETSCALE_SERVICE_TOKEN"])),
    api_url=dict(type="str", default=DEFAULT_API_URL, fallback=(env_fallback, ["PLANETSCALE_API_URL"])),
), fragment=FRAGMENT + ".service_token")
# The resource API's credentials: either kind, and where to send them.
CREDENTIALS = OptionSet("credentials", parts=(ACCESS_TOKEN, SERVICE_TOKEN), fragment=FRAGMENT)
ORGANIZATION = OptionSet("organization", dict(
    # needed, yet not required=True: Module.validate() names the option and its variable when neither is set
    organization=dict(type="str", fallback=(env_fallback, ["PLANETSCALE_ORG"])),
), fragment=FRAGMENT + ".organization")
AUTH_URL = OptionSet("auth_url", dict(
    auth_url=dict(type="str", default=DEFAULT_AUTH_URL, fallback=(env_fallback, ["PLANETSCALE_AUTH_URL"])),
), fragment=FRAGMENT + ".auth_url")
OAUTH_CLIENT = OptionSet("oauth_client", dict(
    client_id=dict(type="str", no_log=False, fallback=(env_fallback, ["PLANETSCALE_CLIENT_ID"])),
    client_secret=dict(type="str", no_log=True, fallback=(env_fallback, ["PLANETSCALE_CLIENT_SECRET"])),
))
# The OAuth server and the OAuth application's credentials.
OAUTH = OptionSet("oauth", parts=(AUTH_URL, OAUTH_CLIENT), fragment=FRAGMENT + ".oauth")

# Waiting until a resource is in the state the task asks for (settle.Waiter). A module that takes the set gives
# wait_timeout its own default, in its argument_spec and its documentation: how long a wait may take differs.
WAIT = OptionSet("wait", dict(
    wait=dict(type="bool", default=True),
    wait_timeout=dict(type="int"),
), fragment=FRAGMENT + ".wait")

# The action group planetscale.cloud.all, each of its options in one of these sets. Ansible gives
# every option set for the group to every module of the group; the action plugin leaves out those a
# module does not take (plugins/plugin_utils/in_process.py), so a module's spec and documentation hold
# only the options it takes.
GROUP = (ACCESS_TOKEN, SERVICE_TOKEN, ORGANIZATION, AUTH_URL, OAUTH_CLIENT, CONNECTION)
GROUP_OPTIONS = dict((name, option) for option_set in GROUP for name, option in option_set.options.items())
CREDENTIAL_VARIABLES = dict((name, option["fallback"][1][0]) for name, option in CREDENTIALS.options.items()
                            if name != "api_url")
