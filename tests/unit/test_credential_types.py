# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The AWX / Automation Platform credential types shipped in extensions/credential_types/: every environment
variable their injectors set is one the modules read (an option's env fallback, plugins/module_utils/options.py)
and, for an option the inventory also takes, the inventory plugin reads too; each field lands in the option of
its name; a secret option's field is secret. Injectors are rendered as AWX renders them: Jinja2 in a sandbox,
with the credential's inputs as variables.

The Event-Driven Ansible controller's credential type for the webhook secret (webhook_secret.yml) injects extra
variables, the only way the EDA controller gives a credential to a rulebook: each field is an option of the event
source planetscale.cloud.webhook_deliveries (its DOCUMENTATION), and the variable it sets is the one the shipped
rulebooks give that option."""

from __future__ import annotations

import ast
import os

import pytest
import yaml
from jinja2.sandbox import ImmutableSandboxedEnvironment

from ansible_collections.planetscale.cloud.plugins.inventory import branches
from ansible_collections.planetscale.cloud.plugins.module_utils import options

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FOLDER = os.path.join(ROOT, "extensions", "credential_types")
TYPES = ("oauth_application", "service_token")
EDA_TYPES = ("webhook_secret",)
SOURCE = os.path.join(ROOT, "extensions", "eda", "plugins", "event_source", "webhook_deliveries.py")
RULEBOOKS = os.path.join(ROOT, "extensions", "eda", "rulebooks")

# environment variable -> the module option that reads it (every module takes its options from these sets)
MODULE_ENV = dict((option["fallback"][1][0], name) for name, option in options.GROUP_OPTIONS.items()
                  if option.get("fallback"))
INVENTORY_OPTIONS = yaml.safe_load(branches.DOCUMENTATION)["options"]
INVENTORY_ENV = dict((entry["name"], name) for name, option in INVENTORY_OPTIONS.items()
                     for entry in option.get("env") or ())


def load(name):
    with open(os.path.join(FOLDER, name + ".yml"), encoding="utf-8") as handle:
        return yaml.safe_load(handle)


def render(kind, inputs):
    """The environment AWX gives a job with a credential of this type and these inputs."""
    sandbox = ImmutableSandboxedEnvironment()
    return dict((variable, sandbox.from_string(template).render(**inputs))
                for variable, template in kind["injectors"]["env"].items())


def source_options():
    """The options of the event source, from its DOCUMENTATION (read without importing it: it needs aiohttp)."""
    with open(SOURCE, encoding="utf-8") as handle:
        tree = ast.parse(handle.read())
    documentation = next(node.value.value for node in tree.body if isinstance(node, ast.Assign)
                         and [target.id for target in node.targets] == ["DOCUMENTATION"])
    return yaml.safe_load(documentation)["options"]


def test_the_collection_ships_exactly_the_credential_types():
    assert sorted(name[:-4] for name in os.listdir(FOLDER) if name.endswith(".yml")) == sorted(TYPES + EDA_TYPES)


@pytest.mark.parametrize("name", EDA_TYPES)
def test_an_eda_credential_type_gives_the_event_source_its_options_as_extra_variables(name):
    """What the EDA controller takes (name, description, inputs, injectors; no kind), extra variables only and none
    of the names it reserves (eda, ansible, EDA_...); each field is a source option, secret where the option is a
    secret, and the variable it sets is what every shipped rulebook gives that option."""
    kind = load(name)
    assert set(kind) == {"name", "description", "inputs", "injectors"}
    assert kind["name"].startswith("PlanetScale ") and set(kind["injectors"]) == {"extra_vars"}
    fields = dict((field["id"], field) for field in kind["inputs"]["fields"])
    assert set(kind["inputs"]["required"]) <= set(fields)
    options = source_options()
    assert set(fields) <= set(options)
    assert all(field["secret"] for field_id, field in fields.items() if "secret" in field_id)
    inputs = dict((field_id, "value of %s" % field_id) for field_id in fields)
    extra_vars = render(dict(injectors=dict(env=kind["injectors"]["extra_vars"])), inputs)
    assert not [variable for variable in extra_vars if variable.lower().startswith(("eda", "ansible"))]
    given = dict((value, variable) for variable, value in extra_vars.items())  # field value -> its variable
    rulebooks = sorted(name for name in os.listdir(RULEBOOKS) if name.endswith(".yml"))
    assert len(rulebooks) >= 2
    for rulebook in rulebooks:
        with open(os.path.join(RULEBOOKS, rulebook), encoding="utf-8") as handle:
            sources = [source for ruleset in yaml.safe_load(handle) for source in ruleset["sources"]]
        arguments = next(source["planetscale.cloud.webhook_deliveries"] for source in sources
                         if "planetscale.cloud.webhook_deliveries" in source)
        for field_id in fields:
            assert arguments[field_id] == "{{ %s }}" % given["value of %s" % field_id], (rulebook, field_id)


@pytest.mark.parametrize("name", TYPES)
def test_a_credential_type_is_what_awx_takes(name):  # the automation controller's types
    """name, kind cloud (a custom type's), inputs with unique field ids, required fields among them, injectors
    that only set environment variables (no extra_vars: a playbook variable shows in the job's events)."""
    kind = load(name)
    assert set(kind) == {"name", "description", "kind", "inputs", "injectors"}
    assert kind["kind"] == "cloud" and kind["name"].startswith("PlanetScale ")
    ids = [field["id"] for field in kind["inputs"]["fields"]]
    assert len(ids) == len(set(ids))
    assert set(kind["inputs"]["required"]) <= set(ids)
    assert all(field["type"] == "string" and field["label"] for field in kind["inputs"]["fields"])
    assert set(kind["injectors"]) == {"env"}


@pytest.mark.parametrize("name", TYPES)
def test_every_injected_variable_is_read_by_the_modules_and_the_inventory(name):
    kind = load(name)
    unread = sorted(set(kind["injectors"]["env"]) - set(MODULE_ENV))
    assert unread == [], "%s sets environment variables no module reads: %s" % (name, unread)
    for variable in kind["injectors"]["env"]:
        option = MODULE_ENV[variable]
        if option in INVENTORY_OPTIONS:
            assert INVENTORY_ENV.get(variable) == option, (
                "the inventory's %s does not read %s, which the modules' %s reads" % (option, variable, option))


@pytest.mark.parametrize("name", TYPES)
def test_each_field_lands_in_the_option_of_its_name(name):
    """Each field's value reaches the environment variable of the module option of the same name, and every
    field is injected."""
    kind = load(name)
    inputs = dict((field["id"], "value of %s" % field["id"]) for field in kind["inputs"]["fields"])
    environment = render(kind, inputs)
    assert dict((MODULE_ENV[variable], value) for variable, value in environment.items()) == inputs


@pytest.mark.parametrize("name", TYPES)
def test_a_secret_option_comes_from_a_secret_field(name):
    """AWX encrypts a secret field and shows it to nobody; the options with no_log are exactly those."""
    for field in load(name)["inputs"]["fields"]:
        option = options.GROUP_OPTIONS[field["id"]]
        assert bool(field.get("secret")) is bool(option.get("no_log")), field["id"]


@pytest.mark.parametrize("name", TYPES)
def test_an_optional_field_defaults_as_its_option_does(name):
    """A field that may be left out has the option's default, and a credential saved without it (AWX renders a
    missing input empty) still injects that default, never an empty URL."""
    kind = load(name)
    optional = [field for field in kind["inputs"]["fields"] if field["id"] not in kind["inputs"]["required"]]
    assert optional
    inputs = dict((field["id"], "given") for field in kind["inputs"]["fields"] if field not in optional)
    environment = render(kind, inputs)
    for field in optional:
        default = options.GROUP_OPTIONS[field["id"]]["default"]
        assert field.get("default") == default
        variable = options.GROUP_OPTIONS[field["id"]]["fallback"][1][0]
        assert environment[variable] == default
        assert render(kind, dict(inputs, **{field["id"]: ""}))[variable] == default


def test_the_service_token_type_is_all_the_inventory_needs():
    """A job's inventory source with the service token credential alone: the organization and a whole credential."""
    environment = set(load("service_token")["injectors"]["env"])
    assert {"PLANETSCALE_ORG", "PLANETSCALE_SERVICE_TOKEN_ID", "PLANETSCALE_SERVICE_TOKEN"} <= environment
    assert environment <= set(INVENTORY_ENV)
