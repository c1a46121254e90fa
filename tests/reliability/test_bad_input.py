# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Bad input, generated (hypothesis) for every module: wrong types, empty and very long
strings, unicode, path characters such as ../ and ?, bad CIDRs, negative and huge numbers,
unknown choices, conflicting and unknown options, bad URLs and credentials.

Input the modules can check is answered with a failure and a message, never a traceback, and
no request at all (the emulator's request log stays empty). Input only the API can judge
(unicode or very long names) fails with a message or succeeds, never with a traceback, and
every request it causes goes to an endpoint of the collection, with the value in one path
segment: a path character never reaches another endpoint.

The cases are generated first, with a fixed seed. Every case runs its module's class in this process, as the
in-process action runs it (harness.direct), against the emulator; a sample of them runs as a playbook on each
execution path, as a user's playbook would, to show the message reaches the user without a traceback.
"""

from __future__ import annotations

import importlib
import ipaddress
import math
import re

import pytest
import yaml
from ansible.module_utils.common.validation import check_type_bool, check_type_int
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from harness import FQCN, MODULES, ORG_MODULES, module_classes, module_defaults, play

# Valid arguments of each module; a case changes one or two of them.
VALID = {
    "audit_log_info": dict(since="30d", events=["service_token.*"]),
    "branch": dict(database="app", name="bad-input", parent_branch="main", wait=False),
    "branch_info": dict(database="app"),
    "branch_change_info": dict(database="app", branch="main"),
    "branch_schema_info": dict(database="app", branch="main"),
    "deploy_request": dict(database="app", branch="bad-input", into_branch="main", wait=False),
    "deploy_request_info": dict(database="app"),
    "deploy_request_review": dict(database="app", number=1),
    "database": dict(name="bad-input", cluster_size="PS_10", wait=False),
    "database_info": dict(),
    "database_throttler": dict(database="app", ratio=10),
    "cluster_size_info": dict(engine="mysql"),
    "backup": dict(database="app", branch="main", name="bad-input", wait=False),
    "backup_info": dict(database="app", branch="main"),
    "backup_policy": dict(database="app", name="bad-input", frequency_value=1, frequency_unit="day", retention_value=1,
                          retention_unit="day"),
    "backup_policy_info": dict(database="app"),
    "password": dict(database="app", branch="main", name="bad-input"),
    "password_info": dict(database="app", branch="main"),
    "postgres_role": dict(database="pgapp", branch="main", name="bad-input"),
    "postgres_role_info": dict(database="pgapp", branch="main"),
    "postgres_parameter_info": dict(database="pgapp", branch="main"),
    "postgres_extension_info": dict(database="pgapp", branch="main"),
    "postgres_ip_restriction": dict(database="pgapp", role="bad-input", cidrs=["10.0.0.0/8"]),
    "postgres_ip_restriction_info": dict(database="pgapp"),
    "postgres_bouncer": dict(database="pgapp", branch="main", name="bad-input", wait=False),
    "postgres_bouncer_info": dict(database="pgapp", branch="main"),
    "query_pattern_info": dict(database="app", branch="main"),
    "region_info": dict(database="app"),
    "schema_recommendation": dict(database="app", number=1, reason="Bad input"),
    "schema_recommendation_info": dict(database="app", state="open"),
    "maintenance_schedule_info": dict(database="app"),
    "read_only_region_info": dict(database="app"),
    "team": dict(name="Bad Input"),
    "team_info": dict(),
    "team_member_info": dict(team="engineering"),
    "user_info": dict(),
    "token": dict(grant_type="refresh_token", refresh_token="not-a-refresh-token-the-emulator-issued"),
    "token_info": dict(access_token="not-an-access-token-the-emulator-issued"),
    "service_token": dict(name="bad-input", accesses=[dict(database="app", access=["read_branch"])]),
    "service_token_info": dict(),
    "organization": dict(billing_email="billing@acme.test"),
    "organization_info": dict(),
    "organization_member": dict(member="member1@acme.test", role="member"),
    "organization_member_info": dict(),
    "traffic_budget": dict(database="pgapp", branch="main", name="bad-input", rate=10),
    "traffic_budget_info": dict(database="pgapp", branch="main"),
    "webhook": dict(database="app", url="https://hooks.example.com/bad-input"),
    "webhook_info": dict(database="app"),
    "keyspace": dict(database="app", branch="main", name="bad-input", cluster_size="PS_10", wait=False),
    "keyspace_info": dict(database="app", branch="main"),
    "vschema": dict(database="app", branch="main", keyspace="app", vschema=dict(sharded=False)),
    "workflow": dict(database="app", name="bad-input", phase="cancelled"),
    "workflow_info": dict(database="app"),
    "invoice_info": dict(),
    "branch_metrics_info": dict(database="app", branch="main"),
    "oauth_application_info": dict(),
    "oauth_application_token": dict(application_id="bad-input", id="bad-input", state="absent"),
    "query_insights_info": dict(database="app", branch="main"),
    "query_pattern_report": dict(database="app", branch="main", id="bad-input", state="absent"),
}
# What the modules' classes tell: each module's own options by type, the options that become path segments,
# name a branch or must not be blank, and the options it requires. A new module gets its cases from these;
# tests/unit/test_suite_tables.py says what it must be given by hand (VALID, and an every-module task).
CLASSES = module_classes()
BASE = importlib.import_module("ansible_collections.planetscale.cloud.plugins.module_utils.base")  # (importable now)
OPTIONS = importlib.import_module("ansible_collections.planetscale.cloud.plugins.module_utils.options")


def _own(module, kind=None):
    """The module's own options (not the action group's), of one type."""
    options = CLASSES[module].spec()["argument_spec"]
    return tuple(name for name, option in options.items() if name not in OPTIONS.GROUP_OPTIONS
                 and (kind is None or option["type"] == kind))


def _required(module):
    """The options a task of VALID[module] must give that module_defaults does not: a task without one fails."""
    spec = CLASSES[module].spec()
    given = set(module_defaults()[FQCN + module])
    required = [name for name, option in spec["argument_spec"].items() if option.get("required")]
    for rule in spec["required_if"]:  # (option, value, requirements[, any of them is enough])
        if VALID[module].get(rule[0]) == rule[1] and not (len(rule) > 3 and rule[3]):
            required += list(rule[2])
    return tuple(sorted(set(name for name in required if name not in given)))


INTS = dict((module, _own(module, "int")) for module in MODULES)
BOOLS = dict((module, _own(module, "bool")) for module in MODULES)
CHOICES = dict((module, tuple(name for name in _own(module) if CLASSES[module].spec()["argument_spec"][name].get(
    "choices"))) for module in MODULES)
PATHS = dict((module, tuple(CLASSES[module].path_options)) for module in MODULES)
# Options that must not be blank: the resource modules' names, and the name filters of info modules that check
# them (by hand, and optional: a module without an entry only goes without these cases).
NAME_FILTERS = dict(password_info=("name",), postgres_role_info=("name",), postgres_parameter_info=("name",),
                    postgres_extension_info=("name",))
NAMES = dict((module, tuple(getattr(CLASSES[module], "names", ())) + NAME_FILTERS.get(module, ()))
             for module in MODULES)
NEGATIVE = INTS  # every integer option has a lower bound: 0, or 1 for limit
MISSING = dict((module, _required(module)) for module in MODULES)
# Options that name a branch: held to the platform's rule for branch names before any request, in every module.
BRANCH_OPTIONS = dict((module, CLASSES[module].branch_naming()) for module in MODULES)
NULL = "<null>"  # an option given as null (None drops it)
CONFLICTS = {
    "query_pattern_info": [dict(starting_after="a1", ending_before="b2")],
    "audit_log_info": [dict(starting_after="a1", ending_before="b2"), dict(since="yesterday"),
                       dict(since="2026-11-02T00:00:00Z", until="2026-11-01T00:00:00Z"), dict(events=[" "]),
                       dict(since="3000000d"), dict(until="0001-01-01T00:00:00+01:00")],
    "organization": [dict(billing_email="finance"), dict(invoice_budget_amount=-1)],
    "branch": [dict(backup_id="k2l3m4"), dict(major_version="seventeen"), dict(parameters=dict(pgconf=8192))],
    "database": [dict(replicas=1), dict(major_version="17"), dict(kind="postgresql", allow_data_branching=True),
                 dict(state="absent", new_name="other")],
    "database_info": [dict(name="app", q="app")],
    "backup": [dict(name=None), dict(retention_unit="day"), dict(retention_unit="day", retention_value=1001)],
    "backup_info": [{"from": "yesterday"}, {"to": "2026-13-01T00:00:00Z"}],
    "backup_policy": [dict(schedule_time="24:00"), dict(schedule_day=7), dict(schedule_week=4)],
    "token": [dict(code="one-time-code"), dict(min_ttl=60),
              dict(grant_type="authorization_code", code="c", redirect_uri="https://app/cb", refresh_token="r")],
    "team": [dict(name=None), dict(name=NULL), dict(name=NULL, team=NULL)],
    "service_token": [dict(name=None), dict(ttl=2 ** 31), dict(accesses=[dict(database="app", access=[])]),
                      dict(accesses=[dict(access=["Read Branch"])]), dict(accesses=[dict(database="a/b", access=["x"])])],
    "webhook": [dict(events=["deploy_request.opened", "deploy.done"]), dict(events=["Branch.Ready"]),
                dict(url="hooks.example.com/bad-input"), dict(url="ftp://hooks.example.com/"), dict(url=NULL),
                dict(url=None, state="absent")],
    "webhook_info": [dict(url="not a url")],
    "traffic_budget": [dict(rate=101), dict(capacity=6001), dict(rules=[dict(kind="each")]),
                       dict(rules=[dict(keyspace="pgapp", tags=["app=web"])]), dict(rules=[dict(tags=["=web"])])],
    "schema_recommendation": [dict(reason=" "), dict(reason="x" * 501)],
    "postgres_role": [dict(renew=True, reset=True), dict(successor="heir"),
                      dict(inherited_roles=["pg_read_all_data", "superuser"]),
                      dict(reassign_objects_to="heir", state="absent")],
    "postgres_ip_restriction": [dict(cidrs=["2001:db8::/32"]), dict(cidrs=["10.0.0.300"]), dict(cidrs=[]),
                                dict(cidrs=["203.0.113.7/0"])],
    "password": [dict(cidrs=["10.0.0.0/8", "10.9.8.7/0"])],
    "database_throttler": [dict(ratio=96), dict(ratio=None, keyspaces=[dict(name="app", ratio=100)]),
                           dict(keyspaces=[dict(name="app", ratio=5)])],
    "keyspace": [dict(shards=0), dict(cluster_size="PS 10")],
    "vschema": [dict(vschema="{not json"), dict(vschema=[1]), dict(vschema="just words")],
    "workflow": [dict(tables=[]), dict(tables=[" "]), dict(tables=["orders", "orders"]),
                 dict(source_keyspace="app", target_keyspace="app"), dict(number=0)],
    "workflow_info": [dict(between="yesterday"), dict(between="2026-11-02T00:00:00Z..2026-11-01T00:00:00Z"),
                      dict(name="a", number=1)],
    "postgres_bouncer": [dict(name="Read Pool"), dict(parameters=dict(default_pool_size=dict(value=1))),
                         dict(replicas_per_cell=0)],
    "query_insights_info": [dict(period="1h", **{"from": "2026-01-01T00:00:00Z"}),
                            {"from": "2026-02-01T00:00:00Z", "to": "2026-01-01T00:00:00Z"}, {"from": "yesterday"},
                            dict(tag="route"), dict(show="query", fingerprint="fp"), dict(sort="slowest"),
                            dict(show="errors", sort="rows_read")],
    "query_pattern_report": [dict(force=True), dict(state="present"), dict(state="present", dest="relative.csv.gz"),
                             dict(id=None)],
    "region_info": [dict(scope="public"), dict(scope="organization"), dict(database=None, scope="database")],
    "organization_member_info": [dict(user_id="u1", q="reviewer"), dict(user_id="u1", member="u1")],
    "branch_metrics_info": [dict(scope="query", instant=True), dict(fingerprint="abc"),
                            dict(scope="tables", steps=5), dict(since="yesterday"),
                            dict(since="2026-02-01T00:00:00Z", until="2026-01-01T00:00:00Z"), dict(steps=0),
                            dict(metrics=[" "])],
}
NOT_A_BRANCH_NAME = st.sampled_from(["UPPER", "has space", "Main Branch", "-dev", "dev.1", "a" * 64])
PATH_CHARACTERS = ("/", "../", "?", "#", "%2F", "\\", "\x00", "\n", "\t", "%")
LOCAL_EXAMPLES = 2  # cases per kind of bad input and module, each checkable without a request
REMOTE_EXAMPLES = 6  # cases per module that only the API can judge
PLAYBOOK_SAMPLE = 8  # cases, from all along the list, that also run as a playbook on each execution path


def _not(check):
    def fails(value):
        try:
            check(value)
        except (TypeError, ValueError, OverflowError):
            return True
        return False
    return fails


TEXT = st.text(st.characters(exclude_categories=("Cs",)), max_size=40)
NOT_INT = st.one_of(TEXT, st.floats().filter(lambda f: math.isnan(f) or math.isinf(f) or not f.is_integer()),
                    st.lists(st.integers(), max_size=2), st.dictionaries(TEXT, st.integers(), max_size=2)
                    ).filter(_not(check_type_int))
NOT_BOOL = st.one_of(TEXT, st.integers(), st.lists(st.booleans(), max_size=2),
                     st.dictionaries(TEXT, st.booleans(), max_size=2)).filter(_not(check_type_bool))
WITH_PATH_CHARACTER = st.builds(lambda a, c, b: a + c + b, TEXT, st.sampled_from(PATH_CHARACTERS), TEXT)
NOT_A_NAME = st.one_of(WITH_PATH_CHARACTER, st.sampled_from(["", " ", ".", "..", "\u3000"]))
NOT_A_CIDR = st.one_of(TEXT.filter(lambda s: not _is_network(s)),
                       st.sampled_from(["10.0.0.0/33", "300.1.1.1", "::g", "10.0.0.0/8/8", "10.0.0.0/-1", ""]))
URL_PASSWORD = "pw-in-the-url"  # the failure sentence must never echo a URL's user or password
BAD_URL = st.one_of(st.sampled_from(["", "api.planetscale.com/v1", "ftp://x/v1", "http://[::1", "http://h:99999/v1",
                                     "http://h:0/v1", "https:///v1", "http://h/v1?x=1", "http://h/v1#f"]),
                    TEXT.filter(lambda s: "://" not in s))
URL_WITH_USER = st.sampled_from(["https://ci:%s@api.planetscale.invalid/v1" % URL_PASSWORD,
                                 "http://%s@127.0.0.1:9/v1" % URL_PASSWORD, "https://ci:%s@h:99999/v1" % URL_PASSWORD,
                                 "ci:%s@h/v1" % URL_PASSWORD])
BAD_HEADER = st.builds(lambda a, c, b: "x" + a + c + b, TEXT, st.sampled_from([" ", "\n", "\r", "\x7f", "\u00e9", "\u20ac"]), TEXT)


def _is_network(text):
    try:
        ipaddress.ip_network(text, strict=False)
    except ValueError:
        return False
    return True


def _local_changes(module):
    """Strategies of (label, changes), one a kind, that make the module's valid arguments invalid in a way it can
    check."""
    options = []
    for name in INTS.get(module, ()) + ("api_timeout", "api_retries"):
        options.append(st.tuples(st.just("%s, not an integer" % name), st.fixed_dictionaries({name: NOT_INT})))
        options.append(st.tuples(st.just("%s, a boolean" % name), st.fixed_dictionaries({name: st.booleans()})))
    for name in BOOLS.get(module, ()) + ("validate_certs",):
        options.append(st.tuples(st.just("%s, not a boolean" % name), st.fixed_dictionaries({name: NOT_BOOL})))
    for name in CHOICES.get(module, ()):
        options.append(st.tuples(st.just("%s, an unknown choice" % name),
                                 st.fixed_dictionaries({name: TEXT.filter(lambda s: s.strip() not in (
                                     "present", "absent", "reader", "writer", "admin", "readwriter",
                                     "last_successful_backup", "authorization_code", "refresh_token", "open",
                                     "closed", "deployed", "keep", "skip", "revert", "approve", "comment"))})))
    for name in PATHS.get(module, ()) + (("organization",) if module in ORG_MODULES else ()):
        options.append(st.tuples(st.just("%s, not a name" % name), st.fixed_dictionaries({name: NOT_A_NAME})))
    for name in BRANCH_OPTIONS.get(module, ()):
        options.append(st.tuples(st.just("%s, not a branch name" % name),
                                 st.fixed_dictionaries({name: NOT_A_BRANCH_NAME})))
    for name in NAMES.get(module, ()):
        options.append(st.tuples(st.just("%s, blank" % name),
                                 st.fixed_dictionaries({name: st.sampled_from(["", " ", "\t"])})))
    for name in NEGATIVE.get(module, ()):
        low = 1 if name == "limit" else 0
        options.append(st.tuples(st.just("%s, too small" % name),
                                 st.fixed_dictionaries({name: st.integers(max_value=low - 1)})))
    options.append(st.tuples(st.just("api_timeout, out of range"), st.fixed_dictionaries(
        {"api_timeout": st.one_of(st.integers(max_value=0), st.integers(min_value=86401))})))
    options.append(st.tuples(st.just("api_retries, negative"), st.fixed_dictionaries(
        {"api_retries": st.integers(max_value=-1)})))
    if module in ("password", "postgres_role"):
        options.append(st.tuples(st.just("ttl, huge"), st.fixed_dictionaries({"ttl": st.integers(min_value=2 ** 31)})))
        options.append(st.tuples(st.just("cidrs, one not a CIDR"), st.fixed_dictionaries(
            {"cidrs": st.lists(NOT_A_CIDR, min_size=1, max_size=3).map(lambda bad: ["10.0.0.0/8"] + bad)})))
        options.append(st.tuples(st.just("cidrs, not a list"), st.fixed_dictionaries(
            {"cidrs": st.dictionaries(TEXT, TEXT, min_size=1, max_size=2)})))
    if module == "team":
        options.append(st.tuples(st.just("members, an ID that is not a name"), st.fixed_dictionaries(
            {"members": st.lists(WITH_PATH_CHARACTER.filter(lambda s: "@" not in s), min_size=1, max_size=2)})))
        options.append(st.tuples(st.just("members, blank"), st.just({"members": [""]})))
    if module == "token":
        options.append(st.tuples(st.just("refresh_token, blank"),
                                 st.fixed_dictionaries({"refresh_token": st.sampled_from(["", " "])})))
    if module == "token_info":
        options.append(st.tuples(st.just("access_token, blank"),
                                 st.fixed_dictionaries({"access_token": st.sampled_from(["", " "])})))
    for index, conflict in enumerate(CONFLICTS.get(module, ())):
        options.append(st.just(("conflicting options %d" % index, conflict)))
    for name in MISSING.get(module, ()):
        options.append(st.just(("%s, missing" % name, {name: None})))
    options.append(st.tuples(st.just("an unknown option"), st.builds(
        lambda key, value: {key: value}, st.sampled_from(["nmae", "timeout", "validate_cert", "org"]), TEXT)))
    url_option = "auth_url" if "auth_url" in CLASSES[module].taken_options() else "api_url"
    options.append(st.tuples(st.just("%s, not an API URL" % url_option), st.fixed_dictionaries({url_option: BAD_URL})))
    options.append(st.tuples(st.just("%s, with a user and password" % url_option),
                             st.fixed_dictionaries({url_option: URL_WITH_USER})))
    if CLASSES[module].takes(BASE.CREDENTIALS):  # not the OAuth modules
        options.append(st.tuples(st.just("access_token with the service token"),
                                 st.just({"access_token": "not-an-access-token-the-emulator-issued"})))
        options.append(st.tuples(st.just("service_token, not a header value"),
                                 st.fixed_dictionaries({"service_token": BAD_HEADER})))
    else:
        options.append(st.tuples(st.just("access_token, not a header value"),
                                 st.fixed_dictionaries({"access_token": BAD_HEADER})))
    return options


def _remote_changes(module):
    """Values only the API can judge: unicode and very long names where the module puts a name in a path."""
    names = PATHS.get(module, ()) + (("organization",) if module in ORG_MODULES else ())
    if not names:
        return None
    unicode_name = st.text(st.characters(exclude_categories=("Cs", "Cc", "Zs", "Zl", "Zp"),
                                         exclude_characters="/?#%\\"), min_size=1, max_size=20).filter(
        lambda s: s.strip() not in ("", ".", "..") and not s.isascii())
    long_name = st.integers(min_value=256, max_value=3000).map(lambda n: ("long-" * n)[:n])
    return st.tuples(st.sampled_from(names), st.one_of(unicode_name, long_name)).map(
        lambda pair: ("%s, unicode or long" % pair[0], {pair[0]: pair[1]}))


def generate(strategy, count):
    """count distinct examples of strategy, always the same ones (derandomized)."""
    found, seen = [], set()

    @settings(max_examples=count * 4, derandomize=True, database=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck), deadline=None)
    @given(strategy)
    def collect(example):
        key = repr(example)
        if key not in seen and len(found) < count:
            seen.add(key)
            found.append(example)

    collect()  # pylint: disable=no-value-for-parameter
    return found


class Unsafe(str):
    """A string Ansible must not template: written with the !unsafe tag, as a user passes odd input."""


class _Dumper(yaml.SafeDumper):
    pass


_Dumper.add_representer(Unsafe, lambda dumper, value: dumper.represent_scalar("!unsafe", str(value), style='"'))


def _unsafe(value):
    if isinstance(value, str) and "{" in value:  # only where Ansible would template it (an empty !unsafe is null)
        return Unsafe(value)
    if isinstance(value, list):
        return [_unsafe(item) for item in value]
    if isinstance(value, dict):
        return dict((key, _unsafe(item)) for key, item in value.items())
    return value


def _cases(kind):
    cases = []
    for module in MODULES:
        if kind == "local":
            examples = [example for strategy in _local_changes(module) for example in generate(strategy, LOCAL_EXAMPLES)]
        else:
            strategy = _remote_changes(module)
            examples = generate(strategy, REMOTE_EXAMPLES) if strategy is not None else []
        for label, changes in examples:
            args = dict(VALID[module])
            args.update(changes)
            args = dict((key, None if value == NULL else value) for key, value in args.items() if value is not None)
            cases.append((module, label, args))
    return cases


def _tasks(cases):
    return [{"name": "case %d: %s, %s" % (index, module, label), FQCN + module: _unsafe(args), "ignore_errors": True}
            for index, (module, label, args) in enumerate(cases)]


def _run(ansible, emulator, label, cases, in_process, **connection):
    defaults = module_defaults(**connection)
    playbook = [play(_tasks(cases), defaults=defaults)]
    # yaml.safe_dump cannot write !unsafe: the harness takes the text as it is.
    return ansible.run(yaml.dump(playbook, Dumper=_Dumper, sort_keys=False, width=1000, allow_unicode=True),
                       emulator=emulator, in_process=in_process, timeout=900, label=label)


def _run_here(direct, emulator, label, cases, **connection):
    """The cases' modules run in this process (harness.direct), their !unsafe values never templated."""
    return direct.run([play(_tasks(cases), defaults=module_defaults(**connection))], emulator=emulator, label=label)


def _check_failures(run, cases, figures, must_fail):
    """Every case failed (or, where only the API can judge, maybe not) with a message and no traceback."""
    figures["bad_inputs"] += len(cases)
    assert run.tracebacks() == [], "tracebacks in %s" % run.log_path  # (counted with every run's, in the figures)
    results = [task for task in run.tasks if task.name.startswith("case ")]
    assert len(results) == len(cases), run.log_path
    problems = []
    for task in results:
        msg = task.result.get("msg")
        if must_fail and not task.failed:
            problems.append("%s: did not fail: %s" % (task.name, task.result))
        elif task.failed and not (isinstance(msg, str) and len(msg) > 10):
            problems.append("%s: no message: %s" % (task.name, task.result))
        elif task.failed and ("Task failed: " in msg or "object at 0x" in msg or "exception" in task.result
                              or "module_stderr" in task.result):
            problems.append("%s: not a sentence of the module's: %s" % (task.name, msg))
        elif task.failed and URL_PASSWORD in msg:
            problems.append("%s: the message echoes the password of a URL: %s" % (task.name, msg))
    assert problems == [], "\n".join(problems[:20])


def _spread(items, count):
    """count items from all along the list (the cases of a module come kind after kind)."""
    return items[len(items) // (2 * count)::max(1, len(items) // count)][:count]


@pytest.fixture(scope="module")
def local_cases():
    return _cases("local")


def test_input_the_modules_can_check_fails_with_a_message_and_sends_nothing(emulator, direct, figures, local_cases):
    """Every case of every module, each module's class run in this process as the in-process action runs it."""
    emulator.clear_requests()
    run = _run_here(direct, emulator, "bad input checked locally", local_cases)
    log = emulator.requests()
    figures["requests_for_local_errors"] += len(log)
    _check_failures(run, local_cases, figures, must_fail=True)
    assert log == [], "requests were sent for input the modules could check: %s" % log[:5]


@pytest.mark.parametrize("in_process", [True, False], ids=["in_process", "module"])
def test_bad_input_in_a_playbook_fails_with_the_modules_message_on_each_path(
        emulator, ansible, figures, local_cases, in_process):
    """A sample of the cases as a user's playbook: on either path the task fails with the module's sentence (no
    traceback, no Ansible wrapper around it) and sends nothing."""
    cases = _spread(local_cases, PLAYBOOK_SAMPLE)
    assert len(set(module for module, _label, _args in cases)) > PLAYBOOK_SAMPLE // 2
    emulator.clear_requests()
    run = _run(ansible, emulator, "bad input checked locally, in_process=%s" % in_process, cases, in_process)
    log = emulator.requests()
    figures["requests_for_local_errors"] += len(log)
    _check_failures(run, cases, figures, must_fail=True)
    assert log == [], "requests were sent for input the modules could check: %s" % log[:5]


# Every endpoint the collection may call; {} is one path segment. (tests/unit/test_suite_tables.py checks that
# each resource module's endpoints are here.)
ENDPOINTS = (
    "/v1/organizations/{}/databases/{}/branches/{}/metrics",
    "/v1/organizations/{}/databases/{}/branches/{}/metrics/instant",
    "/v1/organizations/{}/databases/{}/branches/{}/metrics/tablets",
    "/v1/organizations/{}/databases/{}/branches/{}/metrics/tablets-instant",
    "/v1/organizations/{}/databases/{}/branches/{}/metrics/tables",
    "/v1/organizations/{}/databases/{}/branches/{}/metrics/keyspace-tables",
    "/v1/organizations/{}/databases/{}/branches/{}/metrics/query",
    "/v1/organizations/{}/databases/{}/branches/{}/metrics/tag",
    "/v1/organizations/{}/databases/{}/deploy-requests/{}/storage-check",
    "/v1/organizations/{}/databases/{}/deploy-requests/{}/throttler",
    "/v1/organizations/{}/databases/{}/deploy-queue",
    "/v1/regions", "/v1/organizations/{}/regions",
    "/v1/organizations/{}/databases/{}/branches/{}/query-patterns/{}",
    "/v1/organizations/{}/databases/{}/branches/{}/query-patterns/{}/download",
    "/v1/organizations/{}/databases/{}/branches/{}/roles/{}/reassign",
    "/v1/organizations/{}/invoices", "/v1/organizations/{}/invoices/{}", "/v1/organizations/{}/invoices/{}/line-items",
    "/v1/organizations/{}/oauth-applications", "/v1/organizations/{}/oauth-applications/{}",
    "/v1/organizations/{}/oauth-applications/{}/tokens", "/v1/organizations/{}/oauth-applications/{}/tokens/{}",
    "/v1/organizations/{}/databases/{}/branches/{}/insights",
    "/v1/organizations/{}/databases/{}/branches/{}/insights/{}",
    "/v1/organizations/{}/databases/{}/branches/{}/insights/{}/summary",
    "/v1/organizations/{}/databases/{}/branches/{}/insights/queries/{}",
    "/v1/organizations/{}/databases/{}/branches/{}/insights/errors",
    "/v1/organizations/{}/databases/{}/branches/{}/insights/errors/{}",
    "/v1/organizations/{}/databases/{}/branches/{}/insights/anomalies",
    "/v1/organizations/{}/databases/{}/branches/{}/insights/anomalies/{}",
    "/v1/organizations/{}/databases/{}/branches/{}/insights/tags",
    "/v1/organizations/{}/databases/{}/branches/{}/insights/tags/summaries",
    "/v1/organizations/{}/databases/{}/branches/{}/insights/tags/{}",
    "/v1/user", "/v1/organizations", "/v1/organizations/{}", "/v1/organizations/{}/audit-log",
    "/v1/organizations/{}/members", "/v1/organizations/{}/teams", "/v1/organizations/{}/teams/{}",
    "/v1/organizations/{}/teams/{}/members", "/v1/organizations/{}/teams/{}/members/{}",
    "/v1/organizations/{}/databases", "/v1/organizations/{}/databases/{}", "/v1/organizations/{}/databases/{}/regions",
    "/v1/organizations/{}/cluster-size-skus",
    "/v1/organizations/{}/databases/{}/branches", "/v1/organizations/{}/databases/{}/branches/{}",
    "/v1/organizations/{}/databases/{}/branches/{}/backups", "/v1/organizations/{}/databases/{}/branches/{}/backups/{}",
    "/v1/organizations/{}/databases/{}/backup-policies", "/v1/organizations/{}/databases/{}/backup-policies/{}",
    "/v1/organizations/{}/databases/{}/branches/{}/passwords",
    "/v1/organizations/{}/databases/{}/branches/{}/passwords/{}",
    "/v1/organizations/{}/databases/{}/branches/{}/query-patterns",
    "/v1/organizations/{}/databases/{}/branches/{}/schema", "/v1/organizations/{}/databases/{}/branches/{}/schema/lint",
    "/v1/organizations/{}/databases/{}/deploy-requests", "/v1/organizations/{}/databases/{}/deploy-requests/{}",
    "/v1/organizations/{}/databases/{}/deploy-requests/{}/deployment",
    "/v1/organizations/{}/databases/{}/deploy-requests/{}/operations",
    "/v1/organizations/{}/databases/{}/deploy-requests/{}/reviews",
    "/v1/organizations/{}/databases/{}/webhooks", "/v1/organizations/{}/databases/{}/webhooks/{}",
    "/v1/organizations/{}/oauth-applications/{}/token", "/oauth/token", "/oauth/token/info",
    "/v1/organizations/{}/service-tokens", "/v1/organizations/{}/service-tokens/{}",
    "/v1/organizations/{}/service-tokens/{}/access", "/v1/organizations/{}/members/{}",
    "/v1/organizations/{}/databases/{}/branches/{}/roles", "/v1/organizations/{}/databases/{}/branches/{}/roles/{}",
    "/v1/organizations/{}/databases/{}/branches/{}/roles/default",
    "/v1/organizations/{}/databases/{}/branches/{}/changes", "/v1/organizations/{}/databases/{}/branches/{}/changes/{}",
    "/v1/organizations/{}/databases/{}/branches/{}/cluster", "/v1/organizations/{}/databases/{}/branches/{}/resizes",
    "/v1/organizations/{}/databases/{}/branches/{}/resizes/{}",
    "/v1/organizations/{}/databases/{}/branches/{}/parameters",
    "/v1/organizations/{}/databases/{}/branches/{}/extensions",
    "/v1/organizations/{}/databases/{}/read-only-regions",
    "/v1/organizations/{}/databases/{}/cidrs", "/v1/organizations/{}/databases/{}/cidrs/{}",
    "/v1/organizations/{}/databases/{}/throttler",
    "/v1/organizations/{}/databases/{}/branches/{}/bouncers",
    "/v1/organizations/{}/databases/{}/branches/{}/bouncers/{}",
    "/v1/organizations/{}/databases/{}/branches/{}/bouncers/{}/resizes",
    "/v1/organizations/{}/databases/{}/branches/{}/bouncer-resizes",
    "/v1/organizations/{}/databases/{}/branches/{}/traffic/budgets",
    "/v1/organizations/{}/databases/{}/branches/{}/traffic/budgets/{}",
    "/v1/organizations/{}/databases/{}/branches/{}/traffic/budgets/{}/rules",
    "/v1/organizations/{}/databases/{}/branches/{}/traffic/budgets/{}/rules/{}",
    "/v1/organizations/{}/databases/{}/branches/{}/insights/{}/traffic/budgets",
    "/v1/organizations/{}/databases/{}/schema-recommendations",
    "/v1/organizations/{}/databases/{}/schema-recommendations/{}",
    "/v1/organizations/{}/databases/{}/schema-recommendations/{}/dismiss",
    "/v1/organizations/{}/databases/{}/maintenance-schedules",
    "/v1/organizations/{}/databases/{}/maintenance-schedules/{}",
    "/v1/organizations/{}/databases/{}/maintenance-schedules/{}/windows",
    "/v1/organizations/{}/databases/{}/branches/{}/keyspaces",
    "/v1/organizations/{}/databases/{}/branches/{}/keyspaces/{}",
    "/v1/organizations/{}/databases/{}/branches/{}/keyspaces/{}/resizes",
    "/v1/organizations/{}/databases/{}/branches/{}/keyspaces/{}/resizes/{}",
    "/v1/organizations/{}/databases/{}/branches/{}/keyspaces/{}/rollout-status",
    "/v1/organizations/{}/databases/{}/branches/{}/keyspaces/{}/vschema",
    "/v1/organizations/{}/databases/{}/workflows", "/v1/organizations/{}/databases/{}/workflows/{}",
    "/v1/organizations/{}/databases/{}/workflows/{}/verify-data",
    "/v1/organizations/{}/databases/{}/workflows/{}/switch-replicas",
    "/v1/organizations/{}/databases/{}/workflows/{}/switch-primaries",
    "/v1/organizations/{}/databases/{}/workflows/{}/reverse-traffic",
    "/v1/organizations/{}/databases/{}/workflows/{}/cutover",
    "/v1/organizations/{}/databases/{}/workflows/{}/reverse-cutover",
    "/v1/organizations/{}/databases/{}/workflows/{}/complete",
    "/v1/organizations/{}/databases/{}/workflows/{}/retry")
PATTERNS = [re.compile("^" + re.escape(template).replace(re.escape("{}"), "[^/]+") + "$") for template in ENDPOINTS]
# The fixed segments of the endpoints' paths (every other segment of a request's path is a value of a case)
WORDS = set(segment for template in ENDPOINTS for segment in template.split("/") if segment and segment != "{}")


def test_names_only_the_api_can_judge_fail_with_a_message_and_reach_only_their_endpoint(emulator, direct, figures):
    cases = _cases("remote")
    emulator.clear_requests()
    run = _run_here(direct, emulator, "bad input judged by the API", cases, api_retries=1, api_timeout=10)
    log = emulator.requests()
    _check_failures(run, cases, figures, must_fail=False)
    values = set(str(value) for _module, _label, args in cases for value in args.values())
    known = set(["acme", "app", "main", "engineering", "pgapp"])
    strays = []
    for entry in log:
        match = next((m for m in (endpoint.match(entry["path"]) for endpoint in PATTERNS) if m), None)
        if match is None:
            strays.append(entry["path"])
            continue
        segments = [segment for segment in entry["path"].split("/")
                    if segment and segment not in WORDS and not segment.isdigit()]
        strays += [entry["path"] for segment in segments if segment not in values | known]
    assert strays == [], "requests outside the collection's endpoints: %s" % strays[:5]
    assert any(task.failed for task in run.tasks)
