# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The YAML examples of the collection's documents: the README, the role READMEs, the modules' EXAMPLES and the
guides (docs/docsite/rst). test_examples.py runs them against the emulator; `make lint` lints them with the
collection, from the tree this script writes:

    python tests/content/examples.py DIRECTORY

writes, for each document, DIRECTORY/<document>/example-<n>.yml (its plays, a fragment of tasks wrapped into a play
as it runs), its named tasks files in tasks/ (where ansible-lint takes them for tasks), its named vars files in vars/
and its rulebooks in rulebooks/ (where ansible-lint takes them for rulebooks). The modules of collections that are not installed here (the
guide's awx.awx tasks) are mock_modules of the collection's .ansible-lint; ansible.mysql, community.mysql and
community.postgresql are those of make db-collections, on ANSIBLE_COLLECTIONS_PATH.
"""

from __future__ import annotations

import ast
import glob
import os
import re
import sys
import textwrap

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

PLAY = """\
- name: The example of {document}
  hosts: localhost
  gather_facts: false
  tasks:
{tasks}"""


def markdown_blocks(path):
    """(text, file name or None) of every yaml block of a Markdown file."""
    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    blocks = []
    for match in re.finditer(r"```yaml\n(.*?)```", text, re.S):
        before = text[:match.start()].rstrip().rsplit("\n\n", 1)[-1]
        named = re.match(r"`([\w.-]+\.ya?ml)`", before)
        blocks.append((match.group(1), named.group(1) if named else None))
    return blocks


def module_examples(path):
    with open(path, encoding="utf-8") as handle:
        tree = ast.parse(handle.read())
    return next(node.value.value for node in tree.body
                if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", None) == "EXAMPLES")


GUIDE_FILES = sorted(glob.glob(os.path.join(ROOT, "docs", "docsite", "rst", "*.rst")))
# a code block of reStructuredText: the directive, its options, a blank line, then the indented lines (and blank ones)
CODE_BLOCK = re.compile(r"^(?P<indent>[ \t]*)\.\. code-block:: *yaml(?:\+jinja)? *\n(?:(?P=indent)[ \t]+:.*\n)*\n"
                        r"(?P<body>(?:(?P=indent)[ \t]+\S.*\n|[ \t]*\n)*)", re.M)


def rst_blocks(path):
    """(text, None) of every YAML block of a guide (``.. code-block:: yaml`` or ``yaml+jinja``), dedented."""
    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    return [(textwrap.dedent(match.group("body")).strip("\n") + "\n", None) for match in CODE_BLOCK.finditer(text)]


def guide(path):
    """The document name of a guide: guides/authentication for guide_authentication.rst."""
    return "guides/" + re.sub(r"^guide_", "", os.path.basename(path)[:-4])


def documents():
    """{document: [(text, file name or None)]}: the README, each role's README, each module's EXAMPLES, each
    guide's blocks."""
    found = {"README.md": markdown_blocks(os.path.join(ROOT, "README.md"))}
    for path in sorted(glob.glob(os.path.join(ROOT, "roles", "*", "README.md"))):
        found["roles/%s" % os.path.basename(os.path.dirname(path))] = markdown_blocks(path)
    for path in sorted(glob.glob(os.path.join(ROOT, "plugins", "modules", "*.py"))):
        found["modules/%s" % os.path.basename(path)[:-3]] = [(module_examples(path), None)]
    for path in GUIDE_FILES:
        found[guide(path)] = rst_blocks(path)
    return found


DOCUMENTS = documents()
GUIDES = sorted(document for document in DOCUMENTS if document.startswith("guides/") and DOCUMENTS[document])


def kind(data):
    """What a block is: plays, tasks, a rulebook (plays with sources and rules) or a mapping (no playbook)."""
    if not isinstance(data, list):
        return "mapping"
    if "sources" in data[0]:
        return "rulebook"
    return "plays" if "hosts" in data[0] else "tasks"


def label(data):
    """A block's name: the name of its first play or task, or its own."""
    return (data[0] if isinstance(data, list) else data).get("name")


def as_play(document, text):
    """The block as a playbook: plays as they are, tasks wrapped into a play on localhost."""
    if kind(yaml.safe_load(text)) == "plays":
        return text
    return PLAY.format(document=document, tasks=textwrap.indent(textwrap.dedent(text), "    "))


def playbooks(document):
    """(plays, files): the document's runnable playbooks (YAML text, in order) and its named tasks files."""
    plays, files = [], {}
    for text, name in DOCUMENTS[document]:
        if name:
            files[name] = text
        elif kind(yaml.safe_load(text)) in ("plays", "tasks"):
            plays.append(as_play(document, text))
    return plays, files


def write_lint_tree(target):
    """Write every document's blocks under target, as ansible-lint takes them; answer the number of files."""
    count = 0
    for document in DOCUMENTS:
        plays, files = playbooks(document)
        folder = os.path.join(target, re.sub(r"[^a-z0-9_]+", "-", document.lower()))
        os.makedirs(os.path.join(folder, "tasks"))
        written = [("example-%d.yml" % index, play) for index, play in enumerate(plays)]
        written += [(os.path.join("vars" if kind(yaml.safe_load(text)) == "mapping" else "tasks", name), text)
                    for name, text in files.items()]
        written += [(os.path.join("rulebooks", "rulebook-%d.yml" % index), text)
                    for index, (text, unused_name) in enumerate(DOCUMENTS[document])
                    if kind(yaml.safe_load(text)) == "rulebook"]
        for name, text in written:
            os.makedirs(os.path.dirname(os.path.join(folder, name)), exist_ok=True)
            with open(os.path.join(folder, name), "w", encoding="utf-8") as handle:
                handle.write(text)
        count += len(written)
    return count


def main(argv):
    if len(argv) != 2 or os.path.exists(argv[1]):
        print("usage: %s DIRECTORY (a new one): writes the examples of the documents there, for ansible-lint"
              % argv[0], file=sys.stderr)
        return 2
    print("wrote %d examples of %d documents to %s" % (write_lint_tree(argv[1]), len(DOCUMENTS), argv[1]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
