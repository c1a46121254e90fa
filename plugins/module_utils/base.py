# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The shared module base: Module and InfoModule (argument spec, checks of input, the client, the failure
sentence), the task context (TaskContext) and ModuleFailure. The option sets are in options.py, the rules
of a resource (present, absent, check mode, diff) in resource.py.

Nothing here touches AnsibleModule: a module class takes validated parameters and a
TaskContext and returns a result dict or raises ModuleFailure. The adapters (the module
entry point and the in-process action plugin) turn that into Ansible's result.
"""

from __future__ import annotations

import contextvars
import copy
import ipaddress
import os
import re
from urllib.parse import urlsplit

from ansible_collections.planetscale.cloud.plugins.module_utils.client import (
    ApiError,
    Client,
    path,
)
from ansible_collections.planetscale.cloud.plugins.module_utils.options import (
    AUTH_URL,
    CONNECTION,
    CREDENTIAL_VARIABLES,
    CREDENTIALS,
    DEFAULT_API_URL,
    DEFAULT_AUTH_URL,
    GROUP,
    ORGANIZATION,
    WAIT,
)

# A name with one of these characters could reach another endpoint through a server or proxy that
# decodes the escaped path before routing; no name on the platform has one.
NOT_IN_NAMES = frozenset("/?#%\\")
# What an HTTP header can carry of a credential: visible ASCII, no space.
HEADER_VALUE = re.compile(r"[\x21-\x7e]+")
HEADER_OPTIONS = ("access_token", "service_token_id", "service_token")
URL_OPTIONS = ("api_url", "auth_url")
MAX_TIMEOUT = 86400
LOOPBACK_NAMES = frozenset(("localhost",))

OUTCOME_UNKNOWN = ("The API may have applied the change before its answer was lost; running the task again reads "
                   "what exists and continues from there.")
MISSING_ORGANIZATION = ("No organization was given: set organization (in the task, or in module_defaults for "
                        "group/planetscale.cloud.all) or the environment variable PLANETSCALE_ORG to the name of "
                        "the organization.")
HALF_A_SERVICE_TOKEN = ("%s is set but %s is not, and a service token needs both: set %s (or the environment "
                        "variable %s) to the token's %s.")
HINTS = {
    401: "Check the credentials: service_token_id and service_token, or access_token "
         "(or their PLANETSCALE_* environment variables).",
    403: "The credentials are valid but lack access to this resource; grant the service token "
         "or OAuth application the access it needs.",
    429: "The API's rate limit was still exceeded after the retries; lower the number of forks or "
         "raise api_retries.",
}


class ModuleFailure(Exception):
    """A failure to report: msg is a sentence a person can act on; extra keys go into the result."""

    def __init__(self, msg, **result):
        super().__init__(msg)
        self.msg = msg
        self.result = result


class TaskContext:
    """What a module needs to know of the task that runs it.

    progress(message) tells how a long step goes (a wait's states), for Ansible's -v: given a callable (the in-process
    path gives ansible's display.v), the line is shown at once; otherwise it is kept in waited, which the module
    process returns and the action plugin shows at -v when the task ends (a module's output is its result).
    """

    def __init__(self, check_mode=False, diff=False, warn=None, deprecate=None, progress=None):
        self.check_mode = check_mode
        self.diff = diff
        self.warnings = []
        self.deprecations = []
        self.waited = []
        self._warn = warn
        self._deprecate = deprecate
        self._progress = progress
        self.sessions = None  # the in-process path's pool of sessions (plugin_utils/sessions.py); None: a Client owns one
        self.debug = None  # where a note for Ansible's debug output goes (never a secret), or None

    def warn(self, message):
        if self._warn:
            self._warn(message)
        else:
            self.warnings.append(message)

    def progress(self, message):
        if self._progress:
            self._progress(message)
        else:
            self.waited.append(message)

    def deprecate(self, message, version=None, date=None, collection_name=None):
        if self._deprecate:
            named = dict(collection_name=collection_name) if collection_name else {}
            self._deprecate(message, version=version, date=date, **named)
        else:
            self.deprecations.append(dict(msg=message, version=version, date=date))


# The context of the task whose module runs now (Module.execute), for what reports progress without one at hand.
_RUNNING = contextvars.ContextVar("planetscale_cloud_task", default=None)


def progress(message):
    """Tell the running task's context how a long step goes (TaskContext.progress); outside a task, nothing."""
    ctx = _RUNNING.get()
    if ctx is not None:
        ctx.progress(message)


class Module:
    """A module's rules. Subclasses declare their options and implement run() -> result dict.

    option_sets names the shared options the module takes (CREDENTIALS, CONNECTION, ORGANIZATION,
    ...: the sets of options.py); argument_spec holds its own, and may refine a shared one (token_info
    requires access_token).
    """

    option_sets = (CREDENTIALS, CONNECTION, ORGANIZATION)
    argument_spec = {}
    mutually_exclusive = ()
    required_together = ()
    required_one_of = ()
    required_if = ()
    required_by = {}
    path_options = ()  # options that become path segments
    branch_options = ()  # options that name a branch beyond those named branch or *_branch (see branch_naming())
    # What a 404 tells to check beside the organization (not_found_hint()): the options naming what must exist,
    # outermost first, each an option name or (option, word); None: "the names given".
    must_exist = None

    def __init__(self, params, ctx=None):
        self.params = params
        self.ctx = ctx or TaskContext()
        self._client = None

    @classmethod
    def takes(cls, option_set):
        """Whether the module takes an option set, named or as part of a set it names (OAUTH has AUTH_URL)."""
        return any(option_set is named or option_set in named.parts for named in cls.option_sets)

    @classmethod
    def taken_options(cls):
        """The options the module uses: those of its option sets, then its own argument_spec."""
        options = {}
        for option_set in cls.option_sets:
            options.update(option_set.options)
        options.update(cls.argument_spec)
        return options

    @classmethod
    def branch_naming(cls):
        """The options that name a branch, held to the platform's rule for branch names in every module: those of
        type str named branch or *_branch, and branch_options."""
        named = [name for name, option in cls.argument_spec.items() if option.get("type") == "str" and (
            name == "branch" or name.endswith("_branch"))]
        return tuple(named) + tuple(name for name in cls.branch_options if name not in named)

    @classmethod
    def spec(cls):
        """The full argument spec and its constraints, as AnsibleModule's keyword arguments.

        Only the options the module takes: the action plugin leaves out the options of the action group that
        module_defaults for group/planetscale.cloud.all gives a module that does not take them
        (plugins/plugin_utils/in_process.py).
        """
        options = cls.taken_options()
        return dict(
            argument_spec=copy.deepcopy(options),
            mutually_exclusive=list(cls.mutually_exclusive),
            required_together=list(cls.required_together),
            required_one_of=list(cls.required_one_of),
            required_if=list(cls.required_if),
            required_by=dict(cls.required_by),
            supports_check_mode=True,
        )

    @classmethod
    def doc_fragments(cls):
        """The planetscale.cloud.api doc fragments the module's DOCUMENTATION extends: those of its option sets.
        The options of the action group it does not take are not its options (see spec())."""
        taken = cls.taken_options()
        for option_set in GROUP:
            missing = [name for name in option_set.options if name not in taken]
            if missing and len(missing) < len(option_set.options):
                raise ValueError("%s takes part of the option set %s, not %s: take all of it or none of it." % (
                    cls.__name__, option_set.name, ", ".join(missing)))
        return [option_set.fragment for option_set in cls.option_sets if option_set.fragment]

    # The client -----------------------------------------------------------------------------

    @property
    def client(self):
        if self._client is None:
            self._client = self.make_client(self.params["api_url"], self.authorization())
        return self._client

    def make_client(self, base_url, authorization=None):
        options = self.spec()["argument_spec"]
        secrets = [self.params.get(name) for name in options if options[name].get("no_log")]
        secrets = [value for value in secrets if isinstance(value, str)]
        return Client(base_url, authorization=authorization, timeout=self.params["api_timeout"],
                      retries=self.params["api_retries"], validate_certs=self.params["validate_certs"],
                      ca_path=self.params.get("ca_path"), secrets=secrets, pool=self.ctx.sessions,
                      debug=self.ctx.debug)

    def authorization(self):
        if (self.params.get("access_token") or "").strip():
            return "Bearer %s" % self.params["access_token"]
        if (self.params.get("service_token_id") or "").strip() and (self.params.get("service_token") or "").strip():
            return "%s:%s" % (self.params["service_token_id"], self.params["service_token"])
        raise ModuleFailure(
            "No credentials were given: set service_token_id and service_token (or the environment "
            "variables PLANETSCALE_SERVICE_TOKEN_ID and PLANETSCALE_SERVICE_TOKEN), or access_token "
            "(PLANETSCALE_ACCESS_TOKEN).")

    def needs_organization(self):
        """Whether this task needs an organization: a module that takes one needs it, unless a task of its asks for
        something outside every organization (region_info's public regions)."""
        return self.takes(ORGANIZATION)

    def path(self, *segments):
        return path(*segments)

    def org_path(self, *segments):
        return path("organizations", self.params["organization"], *segments)

    # Running ---------------------------------------------------------------------------------

    def choose_credentials(self):
        """Keep one kind of credential: the one the task gives wins over one from the environment.

        The argument spec has filled unset options from the environment already, so an option
        whose value is its variable's counts as coming from the environment. Both kinds given in
        the task, or both only in the environment, are refused before any request.
        """
        kinds = dict(access_token=("access_token",), service_token=("service_token_id", "service_token"))
        given = dict((kind, names) for kind, names in kinds.items()
                     if any((self.params.get(name) or "").strip() for name in names))
        if len(given) == 2:
            from_env = [kind for kind, names in given.items() if all(
                self.params.get(name) == os.environ.get(CREDENTIAL_VARIABLES[name]) for name in names if
                self.params.get(name))]
            if len(from_env) == 2:
                raise ModuleFailure(
                    "Both kinds of credential come from the environment (PLANETSCALE_ACCESS_TOKEN, and "
                    "PLANETSCALE_SERVICE_TOKEN_ID with PLANETSCALE_SERVICE_TOKEN), or the task passes their values. "
                    "Unset the variables of the kind you do not use, or give the task a credential of its own.")
            if not from_env:
                raise ModuleFailure("parameters are mutually exclusive: access_token|service_token_id, service_token; "
                                    "give one kind of credential.")
            for name in kinds[from_env[0]]:
                self.params[name] = None
        halves = [name for name in kinds["service_token"] if (self.params.get(name) or "").strip()]
        if len(halves) == 1:
            (other,) = [name for name in kinds["service_token"] if name not in halves]
            raise ModuleFailure(HALF_A_SERVICE_TOKEN % (halves[0], other, other, CREDENTIAL_VARIABLES[other],
                                                        "ID" if other == "service_token_id" else "secret"))

    def validate(self):
        """Checks of the input that the argument spec cannot express. Raise ModuleFailure."""
        boolean = next(booleans_as_integers(self.spec()["argument_spec"], self.params), None)
        if boolean:
            raise ModuleFailure("%s must be a whole number, not a boolean (true or false)." % boolean)
        if self.takes(CREDENTIALS):
            self.choose_credentials()
        if self.needs_organization() and not (self.params.get("organization") or "").strip():
            raise ModuleFailure(MISSING_ORGANIZATION)
        for name in ("organization",) + tuple(self.path_options):
            value = self.params.get(name)
            if value is not None and not is_name(value):
                raise ModuleFailure("%s must be a name, not %r." % (name, value))
        for name in self.branch_naming():
            check_branch_name(name, self.params.get(name))
        for group in self.required_one_of:  # the argument spec lets an option given as null count
            if all(self.params.get(name) is None for name in group):
                raise ModuleFailure("one of the following is required: %s." % ", ".join(group))
        for name in HEADER_OPTIONS:
            value = self.params.get(name)
            if value and value.strip() and not HEADER_VALUE.fullmatch(value):  # a blank one is missing, below
                raise ModuleFailure("%s holds a space or a character an HTTP header cannot carry; check that it "
                                    "was copied whole." % name)  # never the value: it may be a secret
        for name in URL_OPTIONS:
            value = self.params.get(name)
            if value is None:
                continue
            if "@" in value:  # never echoed: the part before the @ may be a password
                raise ModuleFailure("%s must not carry a user name or password (user:password@host): the modules never "
                                    "send them. Remove them from the URL and give the credentials in their own "
                                    "options." % name)
            if not _is_api_url(value):
                raise ModuleFailure("%s must be an http or https URL without a query, such as %s, not %r." % (
                    name, DEFAULT_API_URL if name == "api_url" else DEFAULT_AUTH_URL, value))
        if not 1 <= self.params.get("api_timeout", 1) <= MAX_TIMEOUT:
            raise ModuleFailure("api_timeout must be from 1 to %d seconds, not %s." % (MAX_TIMEOUT, self.params["api_timeout"]))
        if self.params.get("api_retries", 0) < 0:
            raise ModuleFailure("api_retries must be 0 or more, not %s." % self.params["api_retries"])
        if self.takes(CREDENTIALS):
            self.authorization()
        if self.params.get("ca_path") and not os.path.isfile(self.params["ca_path"]):
            raise ModuleFailure("ca_path %s is not a readable file." % self.params["ca_path"])
        if self.takes(WAIT) and self.params.get("wait_timeout") is not None and self.params["wait_timeout"] < 0:
            raise ModuleFailure("wait_timeout must be 0 or more seconds, not %s." % self.params["wait_timeout"])

    def execute(self):
        """Validate, run, and return the result; every failure becomes a ModuleFailure."""
        running = _RUNNING.set(self.ctx)
        try:
            self.validate()
            self.warn_about_transport()
            result = self.run()
        except ApiError as error:
            raise ModuleFailure(self.explain(error), status=error.status, error=error.as_dict())
        finally:
            _RUNNING.reset(running)
            if self._client is not None:
                self._client.close()
        result.setdefault("changed", False)
        return result

    def urls_in_use(self):
        """The names of the URL options this task sends requests to."""
        names = ["api_url"] if self.takes(CREDENTIALS) else []
        if self.takes(AUTH_URL):
            names.append("auth_url")
        return [name for name in names if self.params.get(name)]

    def warn_about_transport(self):
        """Warn where a URL in use sends credentials in clear text, or where a TLS setting has no effect."""
        urls = dict((name, urlsplit(self.params[name])) for name in self.urls_in_use())
        plain = [name for name, parts in urls.items() if parts.scheme == "http"]
        for name in plain:
            if not is_loopback(urls[name].hostname):
                self.ctx.warn("%s is plain http to %s, which is not this machine: credentials and tokens would cross "
                              "the network in clear text. Use https (plain http is for a server on localhost)."
                              % (name, urls[name].hostname))
        unchecked = self.params.get("validate_certs") is False
        settings = [name for name, given in (("ca_path", self.params.get("ca_path")), ("validate_certs", unchecked))
                    if given]
        if settings and plain:
            self.ctx.warn("%s %s no effect on %s: plain http has no TLS." % (
                " and ".join(settings), "have" if len(settings) > 1 else "has", " and ".join(plain)))
        if unchecked and len(plain) < len(urls):
            self.ctx.warn("validate_certs is false: the server's TLS certificate is not checked.")

    def explain(self, error):
        """The failure sentence for an API error: what failed, where, and what to do."""
        hint = HINTS.get(error.status)
        if error.status == 404:
            hint = self.not_found_hint()
        if error.outcome_unknown:  # a write whose answer was lost, and that reading back could not settle
            hint = OUTCOME_UNKNOWN
        return " ".join(part for part in (str(error), hint) if part)

    def not_found_hint(self):
        """The sentence a 404 adds: check that the organization and what must_exist names exist (an option left
        unset is left out), and that the credentials can see them."""
        if not self.takes(ORGANIZATION):
            return None
        names = ["organization %r" % self.params.get("organization")]
        if self.must_exist is None:
            names.append("the names given")
        for entry in self.must_exist or ():
            option, word = entry if isinstance(entry, tuple) else (entry, entry)
            value = self.params.get(option)
            if value not in (None, ""):
                names.append("%s %s" % (word, "%r" % value if isinstance(value, str) else value))
        if len(names) == 1:
            return "Check that %s exists and that the credentials can see it." % names[0]
        return "Check that %s and %s exist and that the credentials can see them." % (", ".join(names[:-1]), names[-1])


class InfoModule(Module):
    """A module that reads and never changes anything."""

    def validate(self):
        super().validate()
        if self.params.get("limit") is not None and self.params["limit"] < 1:
            raise ModuleFailure("limit must be 1 or more, not %s." % self.params["limit"])

    def items(self, url_path, params=None, limit=None):
        return list(self.client.paginate(url_path, params=params, limit=limit))


class _ConnectionSettings(Module):
    """The shared options alone, for check_connection."""

    option_sets = (CREDENTIALS, CONNECTION)


def check_connection(params, warn=None):
    """Check the credentials and connection settings (CREDENTIALS and CONNECTION) with the modules' own checks, for
    a plugin that is not a module (the planetscale.cloud.branches inventory). Raise ModuleFailure with the modules'
    sentence; give warn the modules' warnings about the transport (plain http, unchecked TLS); answer the
    Authorization header of the one kind of credential kept (params loses the other kind, as a module's do)."""
    settings = _ConnectionSettings(params, TaskContext(warn=warn))
    settings.validate()
    settings.warn_about_transport()
    return settings.authorization()


def is_name(value):
    """Whether a value can name something in an API path: not blank, not . or .., no control or path character."""
    return value.strip() not in ("", ".", "..") and not any(ord(c) < 32 or c in NOT_IN_NAMES for c in value)


# The platform's rule for the name of a branch. It refuses any other name for a new or renamed branch (422), so no
# branch has one: an option that names a branch (Module.branch_options) is held to it in every module.
BRANCH_NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,62}")


def check_branch_name(option, value):
    """Refuse, before any request, a branch name the platform refuses (None: not given)."""
    if value is not None and not BRANCH_NAME.fullmatch(value):
        raise ModuleFailure("%s must be a branch name the platform accepts: 1 to 63 characters, lower-case letters, "
                            "digits, '-' and '_', starting with a letter or digit; not %r." % (option, value))


def booleans_as_integers(argument_spec, params, prefix=""):
    """The options of type int (or lists of int) given a boolean, suboptions named parent.child.

    A boolean is an int to Python, so the argument spec lets true and false through.
    """
    for name, option in argument_spec.items():
        value = (params or {}).get(name)
        values = value if option.get("elements") == "int" and isinstance(value, list) else [value]
        if "int" in (option.get("type"), option.get("elements")) and any(isinstance(v, bool) for v in values):
            yield prefix + name
        if option.get("options"):
            for entry in value if isinstance(value, list) else [value]:
                if isinstance(entry, dict):
                    yield from booleans_as_integers(option["options"], entry, prefix + name + ".")


def is_loopback(host):
    """Whether a URL's host is this machine: localhost, 127.0.0.0/8 or ::1."""
    if not host:
        return False
    if host.lower().rstrip(".") in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _is_api_url(value):
    try:
        parts = urlsplit(value)
        port = parts.port  # ValueError for a port out of range
    except ValueError:
        return False
    return (parts.scheme in ("http", "https") and bool(parts.hostname) and port != 0
            and not (parts.query or parts.fragment))
