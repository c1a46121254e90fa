#!/usr/bin/env python3
# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The front page of the documentation site, its list of contents generated from the collection itself.

hack/docsite/index.rst is the page; its line `.. contents-of-the-collection` becomes what the collection
ships, read from the same sources antsibull-docs documents: galaxy.yml (version, description), every module,
inventory and filter (DOCUMENTATION's short_description), every role (meta/argument_specs.yml) and every
playbook (its first comment sentence); whether the version is released, from changelogs/changelog.yaml. Each
plugin and role links to its page, so a Sphinx build with -W fails on one without a page. No list is kept by
hand: a new module appears on the front page by being there.

Usage: hack/docsite/front_page.py COLLECTION_DIR TEMPLATE OUTPUT
"""

from __future__ import annotations

import ast
import os
import re
import sys

import yaml

MARKER = ".. contents-of-the-collection"
FQCN = "planetscale.cloud"
# plugins/<folder>: the plugin type in antsibull-docs' page labels, and the heading of its list
PLUGIN_TYPES = (("inventory", "inventory", "Inventory"), ("filter", "filter", "Filters"))


def documentation(path):
    """DOCUMENTATION of a plugin file, parsed."""
    with open(path, encoding="utf-8") as handle:
        tree = ast.parse(handle.read(), path)
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "DOCUMENTATION"
                                                for t in node.targets):
            return yaml.safe_load(node.value.value)
    return None


def plugins(root, folder):
    """[(name, short_description)] of the plugins in plugins/<folder>, by name."""
    found = []
    directory = os.path.join(root, "plugins", folder)
    for entry in sorted(os.listdir(directory)) if os.path.isdir(directory) else ():
        if entry.endswith(".py") and not entry.startswith("_"):
            doc = documentation(os.path.join(directory, entry))
            if doc:
                found.append((entry[:-3] if folder == "modules" else doc.get("name", entry[:-3]),
                              doc["short_description"]))
    return found


def roles(root):
    found = []
    for role in sorted(os.listdir(os.path.join(root, "roles"))):
        with open(os.path.join(root, "roles", role, "meta", "argument_specs.yml"), encoding="utf-8") as handle:
            found.append((role, yaml.safe_load(handle)["argument_specs"]["main"]["short_description"]))
    return found


def playbooks(root):
    """[(name, the first sentence of the comment at its top)] of playbooks/*.yml."""
    found = []
    directory = os.path.join(root, "playbooks")
    for entry in sorted(os.listdir(directory)):
        if entry.endswith(".yml"):
            with open(os.path.join(directory, entry), encoding="utf-8") as handle:
                comment = []
                for line in handle:
                    if line.startswith("---"):
                        continue
                    if not line.startswith("#") or not line[1:].strip():
                        break
                    comment.append(line[1:].strip())
            text = " ".join(comment)
            found.append((entry[:-4], re.split(r"(?<=\.)\s", text, maxsplit=1)[0].rstrip(".")))
    return found


def _version(value):
    return tuple(int(part) if part.isdigit() else 0 for part in re.split(r"[.+-]", value))


def text(value):
    """Plain text for reStructuredText: no markup character taken as markup."""
    return re.sub(r"([\\*`|_])", r"\\\1", " ".join(value.split()))


def listing(entries, plugin_type=None):
    lines = []
    for name, description in entries:
        if plugin_type:
            title = ":ref:`%s.%s <ansible_collections.%s.%s_%s>`" % (FQCN, name, FQCN, name, plugin_type)
        else:
            title = "``%s.%s``" % (FQCN, name)
        lines.append("- %s: %s" % (title, text(description)))
    return lines


def section(title, lines):
    return [title, "-" * len(title), ""] + lines + [""]


def contents(root):
    with open(os.path.join(root, "galaxy.yml"), encoding="utf-8") as handle:
        galaxy = yaml.safe_load(handle)
    with open(os.path.join(root, "changelogs", "changelog.yaml"), encoding="utf-8") as handle:
        releases = yaml.safe_load(handle).get("releases") or {}
    version = str(galaxy["version"])
    if version in releases:
        status = "released %s" % releases[version]["release_date"]
    else:  # galaxy.yml names the release being prepared
        status = "not released yet" + ("; the newest release is %s" % max(releases, key=_version) if releases else "")
    modules = plugins(root, "modules")
    lines = ["Version %s (%s): %s" % (version, status, text(galaxy["description"])), ""]
    lines += ["What it ships, read from the collection itself: %d modules, %d roles, %d playbooks, the inventory "
              "and the filters. The :doc:`changelog` says what each release changed." % (
                  len(modules), len(roles(root)), len(playbooks(root))), ""]
    lines += section("Modules that manage", listing([m for m in modules if not m[0].endswith("_info")], "module"))
    lines += section("Modules that read", listing([m for m in modules if m[0].endswith("_info")], "module"))
    lines += section("Roles", listing(roles(root), "role"))
    lines += section("Playbooks", listing(playbooks(root)) + [
        "", "Run one by name, for example ``ansible-playbook planetscale.cloud.audit``; each says at its top which "
        "variables it takes."])
    for folder, plugin_type, title in PLUGIN_TYPES:
        lines += section(title, listing(plugins(root, folder), plugin_type))
    return "\n".join(lines)


def main(root, template, output):
    with open(template, encoding="utf-8") as handle:
        page = handle.read()
    if page.count(MARKER + "\n") != 1:
        print("error: %s must hold the line %r once" % (template, MARKER), file=sys.stderr)
        return 2
    with open(output, "w", encoding="utf-8") as handle:
        handle.write(page.replace(MARKER + "\n", contents(root) + "\n"))
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    sys.exit(main(*sys.argv[1:]))
