# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Where code lives (CONTRIBUTING.md, "The class"): a resource's rules live in its module's file, whose code stays
within 250 lines (its documentation aside), and plugins/module_utils keeps what two or more plugins share, and a
module's cohesive piece that would take it past that, in a file named for what it is (EXCEPTED_FILES says which).

The files are read as syntax trees, not imported, so the check sees every import, including one inside a function.
"""

from __future__ import annotations

import ast
import os

from ansible_collections.planetscale.cloud.tests.unit.each import each

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PLUGINS = os.path.join(ROOT, "plugins")
PACKAGE = "ansible_collections.planetscale.cloud.plugins"
UTILS = ("module_utils", "plugin_utils")  # code for plugins to share; every other directory holds plugins
DOCUMENTATION = ("DOCUMENTATION", "EXAMPLES", "RETURN")
MAX_CODE_LINES = 250
# Modules whose own rules are longer than MAX_CODE_LINES, each with the length it must not grow past: none since
# issue 45. A module that grows past it gives a cohesive piece (a state machine, a protocol) its own file in
# plugins/module_utils, named for what it is and listed in EXCEPTED_FILES (an entry whose module fits fails).
LONGER = {}

# Public names of plugins/module_utils that fewer than two plugins use, each with the reason it stays there. An entry
# that is no longer needed fails test_every_exception_is_still_needed, so that these lists only shrink.
EXCEPTIONS = {
    # The modules' own checks of credentials and connection settings, offered to a plugin that is not a module (the
    # branches inventory, today the only one): it runs Module's validation, so it lives beside Module.
    ("module_utils/base.py", "check_connection"): "the modules' checks, for plugins that are not modules",
    # options.py holds every option set beside the doc fragment that documents it; token alone takes OAUTH today.
    ("module_utils/options.py", "OAUTH"): "an option set, with the others",
    # The action group's options, made from the option sets above it: the one action leaves out those a module
    # does not take, and the tests of the option sets hold the group to them.
    ("module_utils/options.py", "GROUP_OPTIONS"): "the action group's options, beside the sets they come from",
    # The vocabulary status() maps from (a record's deployment state) and to (the words the deploy_request_status
    # filter and the deploy_request module report); named here, beside status(), for the tests that hold it to them.
    ("module_utils/deploy_requests.py", "DEPLOYMENT_STATES"): "the states status() maps from",
    ("module_utils/deploy_requests.py", "STATUSES"): "the words status() answers",
}
# Whole files that stay although fewer than two plugins use them: a module's cohesive piece, named for what it is,
# that would take its module past MAX_CODE_LINES (issue 45).
EXCEPTED_FILES = {
    "module_utils/deploy_machine.py": "deploy_request's state machine: settings, deploy, cutover, revert, waits",
    "module_utils/workflow_machine.py": "workflow's phases: copy, verify, switch, cutover, complete, reverse, cancel",
    "module_utils/grants.py": "token's grants: the form, the tokens and their lifetime, a hint for each refusal",
    "module_utils/branch_capacity.py": "branch's capacity: engines, sizes, parameters, storage, VTGates, requests",
    "module_utils/branch_lifecycle.py": "branch's lifecycle: promote, demote, safe migrations, deletion protection",
}


def _files():
    """Every Python file of plugins/, by its path below plugins/ (module_utils/branches.py)."""
    found = {}
    for directory, _subdirectories, names in os.walk(PLUGINS):
        for name in names:
            if name.endswith(".py") and name != "__init__.py":
                path = os.path.join(directory, name)
                with open(path, encoding="utf-8") as handle:
                    found[os.path.relpath(path, PLUGINS).replace(os.sep, "/")] = ast.parse(handle.read(), path)
    return found


FILES = _files()
MODULES = sorted(path for path in FILES if path.startswith("modules/"))


def _is_utils(path):
    return path.split("/")[0] in UTILS


def _plugin(path):
    """The plugin a file belongs to: a module and its action plugin of the same name are one plugin."""
    kind, name = path.split("/", 1)
    return "module " + name[:-3] if kind in ("modules", "action") else "%s plugin %s" % (kind, name[:-3])


def _path_of(dotted):
    """plugins/<x>/<y>.py for an import of ansible_collections.planetscale.cloud.plugins.<x>.<y>, else None."""
    if dotted.startswith(PACKAGE + "."):
        path = dotted[len(PACKAGE) + 1:].replace(".", "/") + ".py"
        return path if path in FILES else None
    return None


def _defined(tree):
    """The names a file defines at its top level (functions, classes, assigned names): name -> statement."""
    names = {}
    for statement in tree.body:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names[statement.name] = statement
        elif isinstance(statement, (ast.Assign, ast.AnnAssign)):
            for target in statement.targets if isinstance(statement, ast.Assign) else [statement.target]:
                for node in ast.walk(target):
                    if isinstance(node, ast.Name):
                        names[node.id] = statement
    return names


DEFINED = dict((path, _defined(tree)) for path, tree in FILES.items())


def _imports(tree):
    """What a file imports from the collection, anywhere in it: (local names -> (path, name)) for imported names,
    (local names -> path) for imported files."""
    names, files = {}, {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            source = _path_of(node.module)
            for alias in node.names:
                if source:
                    names[alias.asname or alias.name] = (source, alias.name)
                elif _path_of(node.module + "." + alias.name):
                    files[alias.asname or alias.name] = _path_of(node.module + "." + alias.name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if _path_of(alias.name) and alias.asname:
                    files[alias.asname] = _path_of(alias.name)
        assert not (isinstance(node, ast.ImportFrom) and node.level), "a relative import: this test cannot read it"
    return names, files


IMPORTS = dict((path, _imports(tree)) for path, tree in FILES.items())


def _origin(path, name):
    """Where a name a file offers is defined: itself, or the file it imports it from (a re-export)."""
    while name not in DEFINED[path] and name in IMPORTS[path][0]:
        path, name = IMPORTS[path][0][name]
    return path, name


def _uses(path, node):
    """The names of the collection a piece of a file's code refers to, as (file, name) where each is defined."""
    names, files = IMPORTS[path]
    used = set()
    for child in ast.walk(node):
        if isinstance(child, ast.Name):
            if child.id in names:
                used.add(_origin(*names[child.id]))
            elif child.id in DEFINED[path] and DEFINED[path][child.id] is not node:
                used.add((path, child.id))
        elif isinstance(child, ast.Attribute) and isinstance(child.value, ast.Name) and child.value.id in files:
            used.add(_origin(files[child.value.id], child.attr))
    return used


def _dependencies():
    """(file, name) -> the (file, name) pairs its code uses; for a plugin's file, (file, None) -> all it uses."""
    graph = {}
    for path, tree in FILES.items():
        if not _is_utils(path):
            graph[(path, None)] = _uses(path, tree)
            continue
        toplevel = set()  # what code outside any definition uses: every name of the file depends on it
        for statement in tree.body:
            if not isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Assign,
                                          ast.AnnAssign, ast.Import, ast.ImportFrom)):
                toplevel |= _uses(path, statement)
        for name, statement in DEFINED[path].items():
            graph[(path, name)] = (_uses(path, statement) | toplevel) - {(path, name)}
    return graph


def _users():
    """(file, name) of plugins/module_utils and plugins/plugin_utils -> the plugins whose code uses it, directly or
    through other shared code."""
    graph, users = _dependencies(), {}
    for path in FILES:
        if _is_utils(path):
            continue
        seen, todo = set(), list(graph[(path, None)])
        while todo:
            item = todo.pop()
            if item in seen or item not in graph:
                continue
            seen.add(item)
            users.setdefault(item, set()).add(_plugin(path))
            todo.extend(graph[item])
    return users


USERS = _users()
PUBLIC = sorted((path, name) for path in FILES if path.startswith("module_utils/") for name in DEFINED[path]
                if not name.startswith("_"))


def _code_lines(path):
    """The lines of a module file outside its DOCUMENTATION, EXAMPLES and RETURN strings."""
    tree = FILES[path]
    with open(os.path.join(PLUGINS, path), encoding="utf-8") as handle:
        lines = len(handle.read().splitlines())
    for statement in tree.body:
        if isinstance(statement, ast.Assign) and [getattr(t, "id", None) for t in statement.targets][0] in DOCUMENTATION:
            lines -= statement.end_lineno - statement.lineno + 1
    return lines


@each(MODULES)
def test_a_module_file_has_at_most_250_lines_of_code_besides_its_documentation(path):
    lines, most = _code_lines(path), LONGER.get(path, MAX_CODE_LINES)
    assert lines <= most, (
        "plugins/%s has %d lines of code outside DOCUMENTATION, EXAMPLES and RETURN, more than %d: the shared code "
        "is missing a piece (CONTRIBUTING.md, \"The class\")." % (path, lines, most))
    assert path not in LONGER or lines > MAX_CODE_LINES, (
        "plugins/%s has %d lines of code now: remove it from LONGER" % (path, lines))


def test_the_documentation_is_found_in_every_module_file():
    """What the size check subtracts is there: a module file that lost a string would be measured whole."""
    for path in MODULES:
        assigned = set(name for name, statement in DEFINED[path].items() if isinstance(statement, ast.Assign))
        assert set(DOCUMENTATION) <= assigned, path


def test_module_utils_keeps_only_what_two_plugins_share():
    """A public name of plugins/module_utils is used by two plugins or more (a module and its action plugin are
    one), directly or through shared code; what one plugin alone uses moves into that plugin's file."""
    alone = []
    for path, name in PUBLIC:
        if (path, name) in EXCEPTIONS or path in EXCEPTED_FILES:
            continue
        users = sorted(USERS.get((path, name), ()))
        if len(users) < 2:
            alone.append("plugins/%s: %s is used by %s" % (path, name, " ".join(users) or "no plugin"))
    assert not alone, ("What one plugin alone uses belongs in that plugin's file (CONTRIBUTING.md, \"The class\"); "
                       "move it, or delete what no plugin uses:\n" + "\n".join(alone))


def test_every_exception_is_still_needed():
    for (path, name), reason in EXCEPTIONS.items():
        assert (path, name) in PUBLIC, "EXCEPTIONS names plugins/%s: %s, which is not there (%s)" % (path, name, reason)
        assert len(USERS.get((path, name), ())) < 2, (
            "plugins/%s: %s is shared now: remove it from EXCEPTIONS" % (path, name))
    for path, reason in EXCEPTED_FILES.items():
        assert any(len(USERS.get((path, name), ())) < 2 for name in DEFINED.get(path, ()) if not name.startswith("_")), (
            "plugins/%s keeps only what two plugins share now (or is gone): remove it from EXCEPTED_FILES (%s)" % (
                path, reason))


def test_the_check_counts_the_plugins_that_use_a_name_not_those_of_its_file():
    """The walk itself: a name counts for the plugins whose code reaches it, directly (Resource, which every resource
    module subclasses), through other shared code (parse_iso8601 reaches webhook_info through webhooks.shown and
    webhooks.is_zero_time), and no others (base.py is used by every plugin; check_connection by the inventory alone)."""
    assert {"module branch", "module database", "module webhook"} <= USERS[("module_utils/resource.py", "Resource")]
    assert "module webhook_info" in USERS[("module_utils/timestamps.py", "parse_iso8601")]
    assert USERS[("module_utils/base.py", "check_connection")] == {"inventory plugin branches"}
    assert USERS[("module_utils/deploy_requests.py", "status")] == {
        "module deploy_request", "filter plugin deploy_request_status"}
