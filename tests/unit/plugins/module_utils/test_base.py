# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

import importlib
import os

import pytest
from ansible.module_utils.common.arg_spec import ArgumentSpecValidator

from ansible_collections.planetscale.cloud.plugins.module_utils.base import (
    InfoModule, Module, ModuleFailure, TaskContext, booleans_as_integers)
from ansible_collections.planetscale.cloud.plugins.module_utils.options import AUTH_URL, CONNECTION, CREDENTIALS

SECRET = "pscale_tkn_s3cret"


class Probe(InfoModule):
    argument_spec = dict(database=dict(type="str", required=True), limit=dict(type="int"))
    path_options = ("database",)

    def run(self):
        return dict(items=self.items(self.org_path("databases", self.params["database"], "regions"),
                                     limit=self.params["limit"]))


def validated(module_class, args, environ=None, monkeypatch=None):
    for key, value in (environ or {}).items():
        monkeypatch.setenv(key, value)
    spec = module_class.spec()
    spec.pop("supports_check_mode")
    result = ArgumentSpecValidator(**spec).validate(args)
    return result


def params(server=None, **overrides):
    values = dict(api_url=(server.url if server else "http://127.0.0.1:9") + "/v1", service_token_id="id1",
                  service_token=SECRET, access_token=None, api_timeout=5, api_retries=0, validate_certs=True,
                  ca_path=None, organization="acme", database="shop", limit=None)
    values.update(overrides)
    return values


def test_spec_has_shared_options_with_env_fallbacks(monkeypatch):
    result = validated(Probe, {"database": "shop"}, monkeypatch=monkeypatch, environ={
        "PLANETSCALE_SERVICE_TOKEN_ID": "id1", "PLANETSCALE_SERVICE_TOKEN": SECRET, "PLANETSCALE_ORG": "acme",
        "PLANETSCALE_API_URL": "http://emulator/v1", "PLANETSCALE_API_RETRIES": "2"})
    assert not result.error_messages
    got = result.validated_parameters
    assert (got["service_token_id"], got["organization"], got["api_url"], got["api_retries"]) == (
        "id1", "acme", "http://emulator/v1", 2)
    assert SECRET in result._no_log_values


def test_credentials_given_in_the_task_are_mutually_exclusive(server):
    with pytest.raises(ModuleFailure) as caught:
        Probe(params(server, access_token="a")).execute()
    assert caught.value.msg.startswith("parameters are mutually exclusive: access_token|service_token_id")
    assert SECRET not in caught.value.msg
    assert server.requests == []


def test_both_kinds_only_in_the_environment_fail_naming_the_variables(server, monkeypatch):
    monkeypatch.setenv("PLANETSCALE_ACCESS_TOKEN", "env-access")
    monkeypatch.setenv("PLANETSCALE_SERVICE_TOKEN_ID", "env-id")
    monkeypatch.setenv("PLANETSCALE_SERVICE_TOKEN", SECRET)
    result = validated(Probe, {"database": "shop", "organization": "acme"})
    assert result.error_messages == []
    values = dict(result.validated_parameters, api_url=server.url + "/v1", api_retries=0)
    with pytest.raises(ModuleFailure) as caught:
        Probe(values).execute()
    assert caught.value.msg.startswith("Both kinds of credential come from the environment (PLANETSCALE_ACCESS_TOKEN")
    assert SECRET not in caught.value.msg and "env-access" not in caught.value.msg
    assert server.requests == []


@pytest.mark.parametrize("kind", ["access_token", "service_token"])
def test_a_credential_given_in_the_task_wins_over_the_other_kind_in_the_environment(server, monkeypatch, kind):
    if kind == "access_token":
        monkeypatch.setenv("PLANETSCALE_SERVICE_TOKEN_ID", "env-id")
        monkeypatch.setenv("PLANETSCALE_SERVICE_TOKEN", "env-secret")
        args, expected = dict(access_token="task-access"), "Bearer task-access"
    else:
        monkeypatch.setenv("PLANETSCALE_ACCESS_TOKEN", "env-access")
        args, expected = dict(service_token_id="task-id", service_token=SECRET), "task-id:" + SECRET
    result = validated(Probe, dict(database="shop", organization="acme", **args))
    assert result.error_messages == []
    values = dict(result.validated_parameters, api_url=server.url + "/v1", api_retries=0)
    server.default = (200, dict(type="list", current_page=1, next_page=None, data=[]))
    Probe(values).execute()
    assert [r["headers"]["Authorization"] for r in server.requests] == [expected]


def test_service_token_parts_are_required_together(server):
    with pytest.raises(ModuleFailure) as caught:
        Probe(params(server, service_token=None)).execute()
    assert caught.value.msg == ("service_token_id is set but service_token is not, and a service token needs both: set "
                                "service_token (or the environment variable PLANETSCALE_SERVICE_TOKEN) to the token's "
                                "secret.")
    assert server.requests == []


@pytest.mark.parametrize("variable", ["PLANETSCALE_SERVICE_TOKEN_ID", "PLANETSCALE_SERVICE_TOKEN"])
def test_half_a_service_token_in_the_environment_does_not_stop_an_access_token(server, monkeypatch, variable):
    monkeypatch.setenv(variable, "env-value")
    result = validated(Probe, dict(database="shop", organization="acme", access_token="task-access"))
    assert result.error_messages == []
    values = dict(result.validated_parameters, api_url=server.url + "/v1", api_retries=0)
    server.default = (200, dict(type="list", current_page=1, next_page=None, data=[]))
    Probe(values).execute()
    assert [r["headers"]["Authorization"] for r in server.requests] == ["Bearer task-access"]


def test_missing_credentials_fail_before_any_request(server):
    with pytest.raises(ModuleFailure) as caught:
        Probe(params(server, service_token_id=None, service_token=None)).execute()
    assert "No credentials" in caught.value.msg
    assert "PLANETSCALE_SERVICE_TOKEN" in caught.value.msg
    assert server.requests == []


@pytest.mark.parametrize("name", ["", "..", ".", "a\nb"])
def test_names_that_cannot_be_path_segments_fail_before_any_request(server, name):
    with pytest.raises(ModuleFailure) as caught:
        Probe(params(server, database=name)).execute()
    assert caught.value.msg.startswith("database must be a name")
    assert server.requests == []


def test_limit_below_one_is_refused(server):
    with pytest.raises(ModuleFailure):
        Probe(params(server, limit=0)).execute()
    assert server.requests == []


def test_api_error_becomes_one_failure_shape_without_secrets(server):
    server.default = (401, {"code": "unauthorized", "message": "bad token %s" % SECRET})
    with pytest.raises(ModuleFailure) as caught:
        Probe(params(server)).execute()
    failure = caught.value
    assert failure.result["status"] == 401
    assert failure.result["error"]["code"] == "unauthorized"
    assert failure.msg.startswith("GET /organizations/acme/databases/shop/regions failed with HTTP 401")
    assert "Check the credentials" in failure.msg
    assert SECRET not in failure.msg and SECRET not in repr(failure.result)


class Writer(Module):
    """A module whose one write loses its answer: the API may have applied it."""
    argument_spec = dict(database=dict(type="str"), name=dict(type="str"))
    required_one_of = (("database", "name"),)

    def run(self):
        return dict(changed=True, branch=self.client.post(self.org_path("databases", "shop", "branches"), dict(name="x")))


def test_a_write_of_unknown_outcome_says_that_running_again_continues(server):
    server.default = (502, {"code": "bad_gateway", "message": "Bad Gateway"})
    with pytest.raises(ModuleFailure) as caught:
        Writer(params(server, name="x")).execute()
    assert "HTTP 502" in caught.value.msg
    assert caught.value.msg.endswith("running the task again reads what exists and continues from there.")


def test_a_read_that_fails_does_not_claim_an_unknown_outcome(server):
    server.default = (502, {"code": "bad_gateway", "message": "Bad Gateway"})
    with pytest.raises(ModuleFailure) as caught:
        Probe(params(server)).execute()
    assert "may have applied" not in caught.value.msg


def test_required_one_of_given_as_null_fails_before_any_request(server):
    given = dict(database=None, name=None, organization="acme", service_token_id="id1", service_token=SECRET)
    result = validated(Writer, given)
    assert not result.error_messages  # Ansible's check counts a null as given
    with pytest.raises(ModuleFailure) as caught:
        Writer(params(server, database=None, name=None)).execute()
    assert caught.value.msg == "one of the following is required: database, name."
    assert server.requests == []


def test_not_found_names_the_organization(server):
    server.default = (404, {"code": "not_found", "message": "Not Found"})
    with pytest.raises(ModuleFailure) as caught:
        Probe(params(server, organization="nope")).execute()
    assert "organization 'nope'" in caught.value.msg


@pytest.mark.parametrize("must_exist, extra, hint", [
    (None, {}, "Check that organization 'nope' and the names given exist and that the credentials can see them."),
    ((), {}, "Check that organization 'nope' exists and that the credentials can see it."),
    (("database",), {}, "Check that organization 'nope' and database 'shop' exist and that the credentials can see "
                        "them."),
    (("database", "branch", "keyspace"), dict(branch="dev", keyspace=None),
     "Check that organization 'nope', database 'shop' and branch 'dev' exist and that the credentials can see them."),
    (("database", ("number", "deploy request")), dict(number=12),
     "Check that organization 'nope', database 'shop' and deploy request 12 exist and that the credentials can see "
     "them."),
])
def test_not_found_names_what_the_module_says_must_exist(server, must_exist, extra, hint):
    class Named(Probe):
        pass

    Named.must_exist = must_exist
    server.default = (404, {"code": "not_found", "message": "Not Found"})
    with pytest.raises(ModuleFailure) as caught:
        Named(params(server, organization="nope", **extra)).execute()
    assert caught.value.msg.endswith(" " + hint)


def test_result_is_never_changed_for_info_modules(server):
    server.default = (200, {"data": [{"id": 1}], "next_page": None})
    assert Probe(params(server)).execute() == {"items": [{"id": 1}], "changed": False}


def test_bearer_token_is_sent_for_access_token(server):
    server.default = (200, {"data": [], "next_page": None})
    Probe(params(server, service_token_id=None, service_token=None, access_token="tok")).execute()
    assert server.requests[0]["headers"]["Authorization"] == "Bearer tok"


def test_disabled_certificate_checks_warn(server):
    server.default = (200, {"data": [], "next_page": None})
    ctx = TaskContext()
    Probe(params(server, validate_certs=False), ctx).execute()
    assert ctx.warnings == ["validate_certs has no effect on api_url: plain http has no TLS."]


def test_task_context_forwards_warnings_and_deprecations():
    seen = []
    ctx = TaskContext(warn=seen.append, deprecate=lambda msg, **kwargs: seen.append((msg, kwargs["version"])))
    ctx.warn("w")
    ctx.deprecate("d", version="2.0.0", collection_name="planetscale.cloud")
    assert seen == ["w", ("d", "2.0.0")]


def test_task_context_shows_progress_where_it_is_told_and_keeps_it_otherwise():
    shown = []
    live = TaskContext(progress=shown.append)
    live.progress("Waiting for branch 'dev' to be ready: 'pending' after 0 s.")
    assert shown == ["Waiting for branch 'dev' to be ready: 'pending' after 0 s."] and live.waited == []
    kept = TaskContext()  # the module process: it cannot print while it runs
    kept.progress("one")
    kept.progress("two")
    assert kept.waited == ["one", "two"]


def test_module_without_organization_has_no_organization_option():
    class NoOrg(Module):
        option_sets = (CREDENTIALS, CONNECTION)

    assert "organization" not in NoOrg.spec()["argument_spec"]


# A boolean given for an integer option -------------------------------------------------------------

PLUGINS = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), os.pardir,
                       os.pardir, "plugins")


def module_class_of(name):
    """The Module subclass a module file defines (its action plugin's module_class)."""
    module = importlib.import_module("ansible_collections.planetscale.cloud.plugins.modules." + name)
    return next(value for value in vars(module).values() if isinstance(value, type) and issubclass(value, Module)
                and value.__module__ == module.__name__)


MODULE_CLASSES = dict((name, module_class_of(name)) for name in sorted(
    f[:-3] for f in os.listdir(os.path.join(PLUGINS, "modules")) if f.endswith(".py") and not f.startswith("_")))
INTEGER_OPTIONS = [(module, option) for module, module_class in MODULE_CLASSES.items()
                   for option, spec in sorted(module_class.spec()["argument_spec"].items()) if spec["type"] == "int"]


def test_the_integer_options_are_found_in_every_modules_spec():
    found = set(option for _module, option in INTEGER_OPTIONS)
    assert found >= {"api_timeout", "api_retries", "limit", "wait_timeout", "ttl", "min_ttl", "number", "replicas",
                     "retention_value", "frequency_value", "schedule_day", "schedule_week"}
    assert len(set(module for module, _option in INTEGER_OPTIONS)) == len(MODULE_CLASSES) >= 22


@pytest.mark.parametrize("module", sorted(MODULE_CLASSES))
def test_a_boolean_for_an_integer_option_is_refused_before_any_request(server, module):
    """Each integer option of the module, given true or false, in a run and in check mode (one process a module)."""
    module_class = MODULE_CLASSES[module]
    spec = module_class.spec()
    spec.pop("supports_check_mode")
    options = [option for option, option_spec in sorted(spec["argument_spec"].items()) if option_spec["type"] == "int"]
    assert options, module  # api_timeout and api_retries at least
    for option in options:
        for value in (True, False):
            validation = ArgumentSpecValidator(**spec).validate({option: value})
            assert validation.validated_parameters[option] is value  # what the argument spec lets through
            values = dict((name, option_spec.get("default")) for name, option_spec in spec["argument_spec"].items())
            values.update(api_url=server.url + "/v1", auth_url=server.url)
            values[option] = value
            for check_mode in (False, True):
                with pytest.raises(ModuleFailure) as caught:
                    module_class(dict(values), TaskContext(check_mode=check_mode)).execute()
                assert caught.value.msg == "%s must be a whole number, not a boolean (true or false)." % option, (
                    option, value, check_mode)
    assert server.requests == []


def test_booleans_are_found_in_lists_of_integers_and_in_suboptions():
    spec = dict(ports=dict(type="list", elements="int"), rule=dict(type="dict", options=dict(size=dict(type="int"))),
                rules=dict(type="list", elements="dict", options=dict(weight=dict(type="int"))),
                flag=dict(type="bool"), count=dict(type="int"))
    given = dict(ports=[1, True], rule=dict(size=False), rules=[dict(weight=2), dict(weight=True)], flag=True, count=3)
    assert list(booleans_as_integers(spec, given)) == ["ports", "rule.size", "rules.weight"]
    assert list(booleans_as_integers(spec, dict(ports=[1], rule=None, rules=None, flag=False, count=0))) == []


# URLs ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("option", ["api_url", "auth_url"])
@pytest.mark.parametrize("url", ["https://ci-user:pw-s3cret@api.example.com/v1", "https://pw-s3cret@api.example.com/v1",
                                 "http://:pw-s3cret@127.0.0.1:9/v1", "http://ci-user:pw-s3cret@api.example.com:99999/v1",
                                 "ci-user:pw-s3cret@api.example.com/v1", "https://ci-user:pw%2Fs3cret@[::1/v1"])
def test_a_url_with_a_user_or_password_is_refused_without_echoing_it(server, option, url):
    with pytest.raises(ModuleFailure) as caught:
        Probe(params(server, **{option: url})).execute()
    msg = caught.value.msg
    assert msg.startswith("%s must not carry a user name or password (user:password@host)" % option)
    for part in ("s3cret", "ci-user", "api.example.com", "127.0.0.1", "::1"):
        assert part not in msg
    assert server.requests == []


@pytest.mark.parametrize("url", ["ftp://h/v1", "http://h:99999/v1", "http://h/v1?x=1"])
def test_a_url_that_is_not_an_api_url_is_quoted_in_the_sentence(server, url):
    with pytest.raises(ModuleFailure) as caught:
        Probe(params(server, api_url=url)).execute()
    assert caught.value.msg == "api_url must be an http or https URL without a query, such as %s, not %r." % (
        "https://api.planetscale.com/v1", url)


def transport_warnings(module_class=Probe, **overrides):
    ctx = TaskContext()
    module_class(params(**overrides), ctx).warn_about_transport()
    return ctx.warnings


@pytest.mark.parametrize("url, host", [("http://api.example.com/v1", "api.example.com"),
                                       ("http://10.0.0.5:8080/v1", "10.0.0.5"), ("http://[2001:db8::1]/v1", "2001:db8::1"),
                                       ("http://localhost.example.com/v1", "localhost.example.com")])
def test_plain_http_to_another_host_warns_that_credentials_cross_in_clear_text(url, host):
    assert transport_warnings(api_url=url) == [
        "api_url is plain http to %s, which is not this machine: credentials and tokens would cross the network in "
        "clear text. Use https (plain http is for a server on localhost)." % host]


@pytest.mark.parametrize("url", ["http://localhost:8080/v1", "http://LOCALHOST/v1", "http://127.0.0.1/v1",
                                 "http://127.1.2.3:9/v1", "http://[::1]:9/v1", "https://api.example.com/v1"])
def test_https_or_plain_http_on_this_machine_does_not_warn(url):
    assert transport_warnings(api_url=url) == []


def test_tls_settings_with_a_plain_http_url_warn_that_they_have_no_effect(tmp_path):
    assert transport_warnings(api_url="http://127.0.0.1/v1", ca_path=str(tmp_path)) == [
        "ca_path has no effect on api_url: plain http has no TLS."]
    assert transport_warnings(api_url="http://127.0.0.1/v1", ca_path=str(tmp_path), validate_certs=False) == [
        "ca_path and validate_certs have no effect on api_url: plain http has no TLS."]
    assert transport_warnings(api_url="https://api.example.com/v1", ca_path=str(tmp_path)) == []
    assert transport_warnings(api_url="https://api.example.com/v1", validate_certs=False) == [
        "validate_certs is false: the server's TLS certificate is not checked."]


def test_only_the_urls_a_module_sends_to_are_judged():
    class OAuthOnly(Module):
        option_sets = (AUTH_URL, CONNECTION)

    warned = transport_warnings(OAuthOnly, api_url="http://api.example.com/v1", auth_url="http://auth.example.com")
    assert [w.split(" ")[0] for w in warned] == ["auth_url"]
    assert transport_warnings(OAuthOnly, api_url="http://api.example.com/v1", auth_url="http://127.0.0.1:9",
                              validate_certs=False) == ["validate_certs has no effect on auth_url: plain http has no TLS."]
