"""Write a Sphinx inventory (objects.inv) of the Ansible documentation's targets that the site refers to.

Usage: python hack/docsite/ansible_inventory.py OUTPUT

The pages antsibull-docs writes refer to labels of the Ansible documentation (``action_plugins``,
``common_return_values``, ...), through ``M(ansible.builtin.X)`` and the like to the pages of
ansible-core's own plugins, and, through ansible-core's doc fragments (``inventory_cache``), to the
environment variables of its configuration. Sphinx resolves them with intersphinx, which would download the
inventory of docs.ansible.com at every build: the site is built offline and reproducibly instead,
from this inventory. Its plugin and variable entries come from the ansible-core that runs (the docs venv's);
the labels are the ones antsibull-docs' templates use. A label missing here fails the build with
"undefined label" (sphinx-build -W): add it to LABELS.
"""

from __future__ import annotations

import os
import sys
import zlib

import ansible
import yaml

# label -> (page of the Ansible documentation, title)
LABELS = {
    "action_plugins": ("plugins/action", "Action plugins"),
    "callback_plugins": ("plugins/callback", "Callback plugins"),
    "common_return_values": ("reference_appendices/common_return_values", "Return Values"),
    "ansible_configuration_settings": ("reference_appendices/config", "Ansible Configuration Settings"),
    "collections_keyword": ("collections_guide/collections_using_playbooks",
                            "Simplifying module names with the collections keyword"),
}
# ansible-core's plugin types whose pages antsibull-docs links to (the module type is ansible/modules)
PLUGIN_TYPES = ("become", "cache", "callback", "connection", "filter", "inventory", "lookup", "shell", "strategy",
                "test", "vars")


def anchor(label):
    """The HTML id Sphinx gives a label."""
    return "".join(char if char.isalnum() else "-" for char in label.lower())


def builtin_plugins():
    """(name, type) of every plugin ansible-core documents: a module or plugin file, or a filter's or test's YAML."""
    base = os.path.dirname(os.path.abspath(ansible.__file__))
    found = set()
    folders = [("module", "modules")] + [(kind, os.path.join("plugins", kind)) for kind in PLUGIN_TYPES]
    for plugin_type, folder in folders:
        for entry in os.listdir(os.path.join(base, folder)):
            name, extension = os.path.splitext(entry)
            if name.startswith("_") or extension not in (".py", ".yml"):
                continue
            if plugin_type in ("filter", "test") and extension != ".yml":
                continue  # a filter's or test's Python file holds several; each has its own YAML
            found.add((name, plugin_type))
    return sorted(found)


def config_env_vars():
    """The environment variables of ansible-core's configuration (ansible/config/base.yml), which the
    Ansible documentation describes on its configuration page, where the doc fragments point to them."""
    with open(os.path.join(os.path.dirname(os.path.abspath(ansible.__file__)), "config", "base.yml"),
              encoding="utf-8") as handle:
        settings = yaml.safe_load(handle)
    return sorted(set(entry["name"] for setting in settings.values() if isinstance(setting, dict)
                      for entry in setting.get("env") or () if isinstance(entry, dict) and "name" in entry))


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    lines = ["%s std:label -1 %s.html#%s %s" % (label, page, anchor(label), title)
             for label, (page, title) in sorted(LABELS.items())]
    for name, plugin_type in builtin_plugins():
        label = "ansible_collections.ansible.builtin.%s_%s" % (name, plugin_type)
        lines.append("%s std:label -1 collections/ansible/builtin/%s_%s.html#%s ansible.builtin.%s %s" % (
            label, name, plugin_type, anchor(label), name, plugin_type))
    variables = config_env_vars()
    lines += ["%s std:envvar -1 reference_appendices/config.html#envvar-%s -" % (name, name) for name in variables]
    header = ("# Sphinx inventory version 2\n# Project: Ansible\n# Version: %s\n"
              "# The remainder of this file is compressed using zlib.\n" % ansible.__version__)
    with open(sys.argv[1], "wb") as handle:
        handle.write(header.encode("utf-8") + zlib.compress(("\n".join(lines) + "\n").encode("utf-8")))
    print("wrote %s: %d labels, %d plugins and %d configuration variables of ansible-core %s" % (
        sys.argv[1], len(LABELS), len(lines) - len(LABELS) - len(variables), len(variables), ansible.__version__))


if __name__ == "__main__":
    main()
