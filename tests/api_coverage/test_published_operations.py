# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which of the platform's published operations the suite drives through a plugin, measured.

Every emulator make test starts notes each request a plugin of the collection sent (its User-Agent says so) that
the API answered without error or injected fault (EMULATOR_OPERATIONS_LOG: build/operations/emulator-PID.log, one
"METHOD PATH" a line). `make api-coverage`, make test's last step, reads those notes, maps each path to the published
operation it calls (../shared/reference/platform-openapi.json) and fails naming every published operation that no
test drove: there is no list of exceptions, so an operation added to the published description comes with the test
that drives it.
The README and the documentation site's front page state the count; this test checks that they state it right.
"""

from __future__ import annotations

import glob
import json
import os
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT.parent / "shared" / "reference" / "platform-openapi.json"
NOTES = Path(os.environ.get("EMULATOR_OPERATIONS_LOG") or ROOT / "build" / "operations")
STATEMENTS = (ROOT / "README.md", ROOT / "hack" / "docsite" / "index.rst")
STATED = re.compile(r"(\d+) of (\d+) published operations")
# What plugins call beside the published API: the OAuth server (auth_url), a service token's accesses (the
# platform's, unpublished: platform-openapi-next.json) and the presigned download a query-pattern report redirects to.
UNPUBLISHED = re.compile(r"(POST|GET) /oauth/|(GET|POST|DELETE) /v1/organizations/[^/]+/service-tokens/[^/]+/access$"
                         r"|GET /_emulator/signed/")


def published(spec=SPEC):
    """{"METHOD /template" ({} for each parameter): the operation's id} of the published description."""
    if not spec.is_file():
        pytest.fail("The platform's published OpenAPI description (../shared/reference/platform-openapi.json) is not "
                    "beside the project: the count needs it.")
    found = {}
    for template, operations in json.loads(spec.read_text(encoding="utf-8"))["paths"].items():
        for method, operation in operations.items():
            if method in ("get", "put", "post", "patch", "delete"):
                found["%s %s" % (method.upper(), re.sub(r"\{[^}]*\}", "{}", template))] = operation["operationId"]
    return found


def operation_of(method, path, operations):
    """The published operation a request calls: of the templates its path matches, the one with the most literal
    segments (/insights/tags before /insights/{}); None for a path no operation has."""
    segments = path.split("?", 1)[0].rstrip("/").split("/")
    if segments[1:2] == ["v1"]:
        segments = segments[:1] + segments[2:]
    best, literal = None, -1
    for key in operations:
        verb, template = key.split(" ", 1)
        parts = template.split("/")
        if verb != method or len(parts) != len(segments):
            continue
        if all(part in ("{}", segment) for part, segment in zip(parts, segments)):
            count = sum(part != "{}" for part in parts)
            if count > literal:
                best, literal = key, count
    return best


def driven(operations, notes=NOTES):
    """The published operations the notes show a plugin calling, and the noted requests no operation has."""
    files = sorted(glob.glob(str(Path(notes) / "*.log")))
    if not files:
        pytest.fail("No emulator noted a request in %s: run make test (its last step is this one), or the suites "
                    "with EMULATOR_OPERATIONS_LOG set." % notes)
    found, unknown = set(), set()
    for name in files:
        with open(name, encoding="utf-8") as handle:
            for line in handle:
                method, path = line.split()
                key = operation_of(method, path, operations)
                (found.add(key) if key else unknown.add("%s %s" % (method, path)))
    return found, unknown


def test_a_path_maps_to_its_operation_literal_segments_first():
    operations = {"GET /organizations/{}/databases/{}/branches/{}/insights/{}": "get_query_statistics",
                  "GET /organizations/{}/databases/{}/branches/{}/insights/tags": "list_branch_query_tags",
                  "DELETE /organizations/{}/databases/{}": "delete_database"}
    base = "/v1/organizations/acme/databases/app/branches/main/insights/"
    assert operation_of("GET", base + "tags", operations).endswith("/insights/tags")
    assert operation_of("GET", base + "a1b2?period=1h", operations).endswith("/insights/{}")
    assert operation_of("GET", "/v1/organizations/acme/databases/app", operations) is None  # no GET published here
    assert operation_of("DELETE", "/v1/organizations/acme/databases/app/", operations) == \
        "DELETE /organizations/{}/databases/{}"


def test_every_published_operation_is_driven_through_a_plugin():
    operations = published()
    assert len(operations) == 193
    found, unknown = driven(operations)
    strays = sorted(path for path in unknown if not UNPUBLISHED.match(path))
    assert not strays, "plugins called paths the published description does not have: %s" % strays
    missing = sorted(set(operations) - found)
    assert not missing, "published operations no test drove through a plugin:\n%s" % "\n".join(
        "%s (%s)" % (key, operations[key]) for key in missing)
    count = (str(len(found)), str(len(operations)))
    for statement in STATEMENTS:
        stated = STATED.findall(statement.read_text(encoding="utf-8"))
        assert stated == [count], "%s should say \"%s of %s published operations\" (once), as the suite measured; " \
            "it says %s" % ((statement.relative_to(ROOT),) + count + (stated,))
