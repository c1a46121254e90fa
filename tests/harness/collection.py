# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the collection's modules, playbooks and integration targets take from a running emulator:
playbooks as Python data with the emulator's credentials, the PLANETSCALE_* environment, the
integration targets' configuration and the demo playbook's variables.
"""

from __future__ import annotations

import ast
import atexit
import importlib
import pathlib
import sys
import tempfile

FQCN = "planetscale.cloud."
PLUGINS = pathlib.Path(__file__).resolve().parents[2] / "plugins"
# Every module of the collection, read from plugins/modules/, so that a new module is in every suite that
# walks MODULES (bad input, every-module playbook). Its cases there come from its class (module_classes());
# tests/unit/test_suite_tables.py names what a new module must be given by hand.
MODULES = tuple(sorted(path.stem for path in (PLUGINS / "modules").glob("*.py") if not path.stem.startswith("_")))


def option_sets(name):
    """The names of the option sets a module's class states (option_sets = (CREDENTIALS, ...)), read from its
    source: the harness also runs in the emulator's Python, which has no ansible-core to import the class with."""
    tree = ast.parse((PLUGINS / "modules" / (name + ".py")).read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            for statement in node.body:
                if isinstance(statement, ast.Assign) and [getattr(t, "id", None) for t in statement.targets] == [
                        "option_sets"] and isinstance(statement.value, ast.Tuple):
                    return tuple(element.id for element in statement.value.elts)
    raise ValueError("plugins/modules/%s.py: no class states option_sets as a tuple of option sets" % name)


OPTION_SETS = dict((name, option_sets(name)) for name in MODULES)
# The modules that take no organization (the OAuth modules and user_info), from their option sets.
NO_ORGANIZATION = tuple(name for name in MODULES if "ORGANIZATION" not in OPTION_SETS[name])
ORG_MODULES = tuple(name for name in MODULES if name not in NO_ORGANIZATION)


def module_classes():
    """Each module's class (name -> class), imported from this checkout: a suite derives its cases from the
    classes' options. Needs ansible-core (the suites' Python, not the emulator's)."""
    if "ansible_collections.planetscale.cloud" not in sys.modules:
        where = pathlib.Path(tempfile.mkdtemp(prefix="planetscale-cloud-"))
        link = where / "ansible_collections" / "planetscale" / "cloud"
        link.parent.mkdir(parents=True)
        link.symlink_to(PLUGINS.parent)
        atexit.register(lambda: (link.unlink(), link.parent.rmdir(), link.parent.parent.rmdir(), where.rmdir()))
        sys.path.insert(0, str(where))
    base = importlib.import_module("ansible_collections.planetscale.cloud.plugins.module_utils.base")
    classes = {}
    for name in MODULES:
        module = importlib.import_module("ansible_collections.planetscale.cloud.plugins.modules." + name)
        classes[name] = next(value for value in vars(module).values() if isinstance(value, type)
                             and issubclass(value, base.Module) and value.__module__ == module.__name__)
    return classes


def emulator_vars(emulator):
    """The variables module_defaults() refers to (Ansible.run(emulator=...) passes them)."""
    return dict(world=emulator.world, api_url=emulator.api_url, auth_url=emulator.auth_url)


def module_defaults(**connection):
    """module_defaults for every module: the emulator's URLs and credentials, plus connection options.

    Credentials are templated from emulator_vars(), never written into the playbook: Ansible quotes
    playbook lines around a failed task, as it would a user's playbook.
    """
    # what each option set takes from the emulator; a module gets those of the sets it takes (OPTION_SETS)
    given = dict(
        CREDENTIALS=dict(service_token_id="{{ world.service_token.id }}",
                         service_token="{{ world.service_token.token }}", api_url="{{ api_url }}"),
        ORGANIZATION=dict(organization="{{ world.organization }}"),
        OAUTH=dict(auth_url="{{ auth_url }}", client_id="{{ world.oauth_application.client_id }}",
                   client_secret="{{ world.oauth_application.client_secret }}"),
        AUTH_URL=dict(auth_url="{{ auth_url }}"))
    defaults = {}
    for name in MODULES:
        defaults[FQCN + name] = {}
        for option_set in OPTION_SETS[name]:
            defaults[FQCN + name].update(given.get(option_set, {}))
        defaults[FQCN + name].update(connection)
    return defaults


def task(title, module, /, register=None, no_log=False, **args):
    """A task of a module of the collection."""
    entry = {"name": title, FQCN + module: args}
    if register:
        entry["register"] = register
    if no_log:
        entry["no_log"] = True
    return entry


def play(tasks, hosts="localhost", defaults=None, **keywords):
    """A play (gather_facts off) of these tasks."""
    return dict(dict(name=keywords.pop("name", "play"), hosts=hosts, gather_facts=False,
                     module_defaults=defaults or {}, tasks=list(tasks)), **keywords)


def credentials_env(emulator, oauth_only=False):
    """The PLANETSCALE_* variables a user would set for this emulator (without the service token: oauth_only)."""
    world = emulator.world
    app = world["oauth_application"]
    env = dict(PLANETSCALE_API_URL=emulator.api_url, PLANETSCALE_AUTH_URL=emulator.auth_url,
               PLANETSCALE_ORG=world["organization"], PLANETSCALE_CLIENT_ID=app["client_id"],
               PLANETSCALE_CLIENT_SECRET=app["client_secret"])
    if not oauth_only:
        env.update(PLANETSCALE_SERVICE_TOKEN_ID=world["service_token"]["id"],
                   PLANETSCALE_SERVICE_TOKEN=world["service_token"]["token"])
    return env


def integration_vars(emulator, in_process=None):
    """The variables of the integration targets (tests/integration/integration_config.yml)."""
    config = dict(planetscale_api_url=emulator.api_url, planetscale_auth_url=emulator.auth_url,
                  planetscale_emulator_url=emulator.url, planetscale_world=emulator.world)
    if in_process is not None:
        config["planetscale_in_process"] = in_process
    return config


def write_integration_config(emulator, path, in_process):
    # the emulator's Python, which imports the harness too, need not have yaml
    import yaml  # pylint: disable=import-outside-toplevel

    with open(path, "w", encoding="utf-8") as handle:
        handle.write("# Generated by the test harness (python -m harness emulator exec); do not edit.\n")
        yaml.safe_dump(integration_vars(emulator, in_process), handle, sort_keys=False, default_flow_style=False)


def demo_vars(emulator, output_dir):
    """The variables of the demo playbook (playbooks/demo.yml), with a fresh authorization code."""
    world = emulator.world
    return dict(demo_organization=world["organization"], demo_database=world["database"], demo_branch=world["branch"],
                demo_members_team=world["teams"]["large"], demo_team_members=[world["users"][0]["email"]],
                demo_output_dir=str(output_dir), demo_oauth_code=emulator.code(),
                demo_oauth_redirect_uri=world["oauth_application"]["redirect_uri"],
                demo_ca_file=world["ca_file"])  # the emulator's CA: the data plane's servers show its certificates
