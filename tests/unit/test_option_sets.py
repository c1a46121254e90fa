# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A module's shared options are declared once, in its option_sets: its argument spec, the doc fragments
its DOCUMENTATION extends follow from that; the action group's options it does not take are not its options."""

from __future__ import annotations

import importlib
import os
import re

import pytest
import yaml

from ansible_collections.planetscale.cloud.plugins.doc_fragments.api import ModuleDocFragment as ApiDocs
from ansible_collections.planetscale.cloud.plugins.module_utils import base
from ansible_collections.planetscale.cloud.plugins.module_utils import options as shared
from ansible_collections.planetscale.cloud.plugins.plugin_utils.in_process import module_class_of
from ansible_collections.planetscale.cloud.tests.unit.each import each

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODULES = sorted(f[:-3] for f in os.listdir(os.path.join(ROOT, "plugins", "modules"))
                 if f.endswith(".py") and not f.startswith("_"))
OPTION_SETS = sorted((value for value in vars(shared).values() if isinstance(value, shared.OptionSet)),
                     key=lambda option_set: option_set.name)
# Options whose value is a secret: a token (not a token's ID), a client secret, a password, an authorization code.
SECRET_NAME = re.compile(r"(?:\w+_)?(?:token|secret|password)|code")


def module_class(name):
    """The class the module and its in-process action both run."""
    return module_class_of(name)


def documentation(name):
    return yaml.safe_load(importlib.import_module("ansible_collections.planetscale.cloud.plugins.modules." + name).DOCUMENTATION)


def section(fragment):
    """The attribute of plugins/doc_fragments/api.py that a planetscale.cloud.api fragment names."""
    return "DOCUMENTATION" if fragment == shared.FRAGMENT else fragment[len(shared.FRAGMENT) + 1:].upper()


def fragment_options(fragment):
    """The options a planetscale.cloud.api fragment documents."""
    return yaml.safe_load(getattr(ApiDocs, section(fragment)))["options"]


# The declaration and the documentation -----------------------------------------------------------

@each(MODULES)
def test_documentation_extends_exactly_the_fragments_the_option_sets_imply(name):
    listed = [fragment for fragment in documentation(name).get("extends_documentation_fragment", [])
              if fragment == shared.FRAGMENT or fragment.startswith(shared.FRAGMENT + ".")]
    implied = module_class(name).doc_fragments()
    assert sorted(listed) == sorted(implied), (
        "%s: extends_documentation_fragment must list exactly the %s fragments of its option_sets; missing: %s; "
        "not implied: %s" % (name, shared.FRAGMENT, sorted(set(implied) - set(listed)) or "none",
                             sorted(set(listed) - set(implied)) or "none"))


@each(MODULES)
def test_every_module_names_its_option_sets_in_its_own_class(name):
    cls = module_class(name)
    assert "option_sets" in vars(cls), "%s: state option_sets in the class, not by inheritance" % cls.__name__


@each(MODULES)
def test_a_module_that_waits_takes_the_wait_set(name):
    """wait and wait_timeout are declared and documented once, in the set WAIT; a module refines wait_timeout's
    default in its own spec."""
    cls = module_class(name)
    own = sorted(set(cls.argument_spec) & set(shared.WAIT.options))
    assert cls.takes(shared.WAIT) or not own, "%s: %s belong to the option set wait: take it" % (cls.__name__, own)
    assert "wait" not in cls.argument_spec, "%s: wait is the set's; refine wait_timeout only" % cls.__name__


@pytest.mark.parametrize("option_set", [s for s in OPTION_SETS if s.fragment], ids=lambda s: s.name)
def test_a_set_s_fragment_documents_exactly_its_options_as_the_spec_has_them(option_set):
    documented = fragment_options(option_set.fragment)
    assert sorted(documented) == sorted(option_set.options)
    for name, spec in option_set.options.items():
        doc = documented[name]
        assert doc["type"] == spec["type"], name
        assert doc.get("default") == spec.get("default"), name
        assert bool(doc.get("required")) == bool(spec.get("required")), name
        for variable in spec.get("fallback", (None, []))[1]:
            assert "E(%s)" % variable in " ".join(doc["description"]), name


def test_every_section_of_the_api_fragment_belongs_to_an_option_set():
    sections = sorted(name for name, value in vars(ApiDocs).items() if name.isupper() and isinstance(value, str))
    named = set(section(option_set.fragment) for option_set in OPTION_SETS if option_set.fragment)
    assert sections == sorted(named)


def test_the_action_group_s_sets_share_no_option():
    names = [name for option_set in shared.GROUP for name in option_set.options]
    assert len(names) == len(set(names)) == len(shared.GROUP_OPTIONS)


def test_a_declaration_that_takes_part_of_a_group_set_is_refused():
    class Partial(base.Module):
        option_sets = (shared.ACCESS_TOKEN, shared.ORGANIZATION, shared.AUTH_URL, shared.OAUTH_CLIENT,
                       shared.CONNECTION)
        argument_spec = dict(service_token_id=dict(type="str"))

    with pytest.raises(ValueError, match="Partial takes part of the option set service_token, not service_token, "
                                         "api_url: take all of it or none of it"):
        Partial.doc_fragments()


def test_a_set_taken_within_a_larger_one_is_taken():
    class OAuthClient(base.Module):
        option_sets = (shared.OAUTH, shared.CONNECTION)

    assert OAuthClient.takes(shared.AUTH_URL) and OAuthClient.takes(shared.OAUTH)
    assert not OAuthClient.takes(shared.CREDENTIALS) and not OAuthClient.takes(shared.ORGANIZATION)


# What users see: the argument specs keep their options ----------------------------------------------

@each(MODULES)
def test_a_module_s_spec_holds_the_options_it_takes_and_no_other_option_of_the_action_group(name):
    """module_defaults for group/planetscale.cloud.all sets the group's options on every module; the action plugin
    leaves out those a module does not take (tests/unit/plugins/plugin_utils/test_in_process.py), so the module
    neither declares nor documents them."""
    cls = module_class(name)
    options, taken = cls.spec()["argument_spec"], cls.taken_options()
    assert set(taken) <= set(options)
    assert not [option for option in shared.GROUP_OPTIONS if option in options and option not in taken]


@each(MODULES)
def test_a_module_s_documentation_lists_exactly_its_options_none_of_them_unused(name):
    """The documentation users read, fragments applied as ansible-doc applies them."""
    from ansible.plugins.loader import fragment_loader
    from ansible.utils.plugin_docs import get_docstring

    path = importlib.import_module("ansible_collections.planetscale.cloud.plugins.modules." + name).__file__
    doc = get_docstring(path, fragment_loader, collection_name="planetscale.cloud")[0]
    assert sorted(doc["options"]) == sorted(module_class(name).spec()["argument_spec"])
    assert not [option for option, entry in doc["options"].items()
                if "not used by this module" in " ".join(entry["description"]).lower()]


@each(MODULES)
def test_a_group_option_a_module_takes_keeps_its_type_default_fallback_and_no_log(name):
    """A module may make a shared option required (token_info's access_token) or optional, nothing else."""
    options = module_class(name).spec()["argument_spec"]
    for option in module_class(name).taken_options():
        if option in shared.GROUP_OPTIONS:
            group = shared.GROUP_OPTIONS[option]
            for key in ("type", "default", "fallback"):
                assert options[option].get(key) == group.get(key), (option, key)
            assert bool(options[option].get("no_log")) == bool(group.get("no_log")), option


@each(MODULES)
def test_no_log_is_on_exactly_the_options_that_hold_a_secret(name):
    options = module_class(name).spec()["argument_spec"]
    hidden = sorted(option for option, spec in options.items() if spec.get("no_log"))
    # a boolean is a flag about a secret (webhook's return_secret), never one: ansible-test's no-log-needed agrees
    assert hidden == sorted(option for option, spec in options.items()
                            if SECRET_NAME.fullmatch(option) and spec.get("type") != "bool")
