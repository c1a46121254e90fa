# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations


class ModuleDocFragment:
    # Credentials and the API root of the resource API.
    DOCUMENTATION = r"""
options:
  access_token:
    description:
      - "An OAuth access token, sent as C(Authorization: Bearer <token>)."
      - Obtain one with M(planetscale.cloud.token).
      - Mutually exclusive with O(service_token_id) and O(service_token). A credential given in the task wins over
        the other kind set in the environment.
      - If not set, the environment variable E(PLANETSCALE_ACCESS_TOKEN) is used.
    type: str
  service_token_id:
    description:
      - The ID of a service token, used together with O(service_token).
      - If not set, the environment variable E(PLANETSCALE_SERVICE_TOKEN_ID) is used.
      - One of the two without the other (as an option or its environment variable) fails the module before any
        request, with a message that names the option and the environment variable to set.
    type: str
  service_token:
    description:
      - The secret of the service token named by O(service_token_id).
      - If not set, the environment variable E(PLANETSCALE_SERVICE_TOKEN) is used.
    type: str
  api_url:
    description:
      - The root of the resource API, including its version segment.
      - A URL that carries a user name or password (C(user:password@host)) is refused; give the credentials
        in their own options. A plain C(http) URL to a host other than this machine (C(localhost),
        C(127.0.0.0/8), C(::1)) draws a warning, as the credentials would cross the network in clear text.
      - If not set, the environment variable E(PLANETSCALE_API_URL) is used.
    type: str
    default: https://api.planetscale.com/v1
notes:
  - One kind of credential is needed, given as options, through C(module_defaults)
    with the action group C(group/planetscale.cloud.all), or through the environment variables.
  - Set the environment variables where C(ansible-playbook) starts, not with the task keyword
    C(environment), whose values Ansible shows at C(-vvv) for a module that runs as a process.
"""

    # Connection behaviour shared by every module.
    CONNECTION = r"""
options:
  api_timeout:
    description:
      - Seconds to wait for each answer of the API, from 1 to 86400.
      - An answer must also arrive in full within O(api_timeout) seconds of its start, or 60 seconds where
        O(api_timeout) is shorter, and be at most 64 MiB.
      - If not set, the environment variable E(PLANETSCALE_API_TIMEOUT) is used.
    type: int
    default: 30
  api_retries:
    description:
      - How many times (0 or more) a request that failed transiently is retried (HTTP 429, 502, 503, 504
        and connection failures), with exponential backoff and jitter, honouring C(Retry-After).
      - Waits are at most 30 seconds each (60 seconds when the API asks for it) and 120 seconds for
        all retries of one request.
      - So a request to an API that keeps failing, or does not answer, fails after at most
        O(api_retries) + 1 attempts of O(api_timeout) seconds each, plus those waits.
      - A request that creates something is retried only where the API cannot have applied it
        (HTTP 429, or no connection). After any other failure, a 503 included, the module reads what
        exists and continues from there; only a create that reading shows was not applied is sent
        again, after the same backoff, three times in all or O(api_retries) + 1 times where that is more.
      - If not set, the environment variable E(PLANETSCALE_API_RETRIES) is used.
    type: int
    default: 5
  validate_certs:
    description:
      - Whether to verify the TLS certificate of the server. Set to V(false) only for test servers.
      - It has no effect on a plain C(http) URL; the module warns when it is V(false) with one.
    type: bool
    default: true
  ca_path:
    description:
      - A file of PEM certificates of the authorities to trust instead of the system's bundle.
      - It has no effect on a plain C(http) URL; the module warns when it is set with one.
    type: path
requirements:
  - requests
"""

    ORGANIZATION = r"""
options:
  organization:
    description:
      - The name of the organization.
      - If not set, the environment variable E(PLANETSCALE_ORG) is used.
      - One of the two is needed. Without either, the module fails before any request, with a message that names
        both.
    type: str
"""

    # The OAuth server and the OAuth application's credentials.
    OAUTH = r"""
options:
  auth_url:
    description:
      - The root of the OAuth authorization server.
      - A URL that carries a user name or password (C(user:password@host)) is refused. A plain C(http) URL to a
        host other than this machine (C(localhost), C(127.0.0.0/8), C(::1)) draws a warning, as the client
        secret and the tokens would cross the network in clear text.
      - If not set, the environment variable E(PLANETSCALE_AUTH_URL) is used.
    type: str
    default: https://auth.planetscale.com
  client_id:
    description:
      - The client ID of the OAuth application.
      - If not set, the environment variable E(PLANETSCALE_CLIENT_ID) is used.
    type: str
  client_secret:
    description:
      - The client secret of the OAuth application.
      - If not set, the environment variable E(PLANETSCALE_CLIENT_SECRET) is used.
    type: str
"""

    # The OAuth server alone, for modules that need no client credentials.
    AUTH_URL = r"""
options:
  auth_url:
    description:
      - The root of the OAuth authorization server.
      - A URL that carries a user name or password (C(user:password@host)) is refused. A plain C(http) URL to a
        host other than this machine (C(localhost), C(127.0.0.0/8), C(::1)) draws a warning, as the client
        secret and the tokens would cross the network in clear text.
      - If not set, the environment variable E(PLANETSCALE_AUTH_URL) is used.
    type: str
    default: https://auth.planetscale.com
"""

    # A service token and the resource API, for modules whose access_token means something else.
    SERVICE_TOKEN = r"""
options:
  service_token_id:
    description:
      - The ID of a service token, used together with O(service_token).
      - If not set, the environment variable E(PLANETSCALE_SERVICE_TOKEN_ID) is used.
    type: str
  service_token:
    description:
      - The secret of the service token named by O(service_token_id).
      - If not set, the environment variable E(PLANETSCALE_SERVICE_TOKEN) is used.
    type: str
  api_url:
    description:
      - The root of the resource API, including its version segment.
      - A URL that carries a user name or password (C(user:password@host)) is refused; give the credentials
        in their own options. A plain C(http) URL to a host other than this machine (C(localhost),
        C(127.0.0.0/8), C(::1)) draws a warning, as the credentials would cross the network in clear text.
      - If not set, the environment variable E(PLANETSCALE_API_URL) is used.
    type: str
    default: https://api.planetscale.com/v1
"""

    # Waiting for the resource; each module gives wait_timeout its default, and may say more of what it waits for.
    WAIT = r"""
options:
  wait:
    description:
      - Wait until the resource is in the state the task asks for, polling with growing intervals.
      - At C(-v) the task shows a line for the first state it sees and for each change, with the seconds waited.
        In-process (the default) each line shows as it happens; as a module process (C(planetscale_in_process=false))
        they show when the task ends, and an C(async) task's result carries them as C(waited).
    type: bool
    default: true
  wait_timeout:
    description:
      - Seconds to wait. The task fails after that, with the resource's last state.
    type: int
"""
