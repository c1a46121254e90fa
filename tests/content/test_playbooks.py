# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The playbooks, run by name (ansible-playbook planetscale.cloud.NAME) as an installed collection's are; the demo
runs from the installed tarball (test_installed.py)."""

from __future__ import annotations

import json

import pytest

from conftest import mode

MAIN = "/organizations/acme/databases/app/branches/main"


def test_preview_branch(ansible, emulator, tmp_path):
    env_file = tmp_path / "pr-9.env"
    present = dict(preview_database="app", preview_pr=9, preview_connection_file=str(env_file),
                   preview_connection_file_format="env", preview_password_cidrs=["10.0.0.0/8"])

    emulator.clear_requests()
    ansible.run("planetscale.cloud.preview_branch", extra_vars=present, check=True).succeeded(changed=1)
    assert emulator.writes() == []

    ansible.run("planetscale.cloud.preview_branch", extra_vars=present).succeeded(changed=3)
    assert mode(env_file) == "0o600"
    password = emulator.api("GET", "/organizations/acme/databases/app/branches/pr-9/passwords")["data"][0]
    assert (password["name"], password["role"], password["cidrs"], password["ttl_seconds"]) == \
        ("preview", "readwriter", ["10.0.0.0/8"], 604800)

    emulator.clear_requests()
    ansible.run("planetscale.cloud.preview_branch", extra_vars=present).succeeded(changed=0)
    assert emulator.writes() == []

    absent = dict(present, preview_state="absent")
    ansible.run("planetscale.cloud.preview_branch", extra_vars=absent, check=True).succeeded(changed=3)
    assert emulator.writes() == []
    ansible.run("planetscale.cloud.preview_branch", extra_vars=absent).succeeded(changed=3)
    assert not env_file.exists()
    ansible.run("planetscale.cloud.preview_branch", extra_vars=absent).succeeded(changed=0)


def test_preview_branch_needs_its_variables(ansible, emulator, tmp_path):
    ansible.run("planetscale.cloud.preview_branch", extra_vars=dict(preview_database="app")).failed(
        "Set preview_database, and preview_pr (the pull request's number) or preview_name.")
    assert emulator.requests() == []


def test_rotate_password_renews(ansible, emulator, tmp_path):
    old = emulator.api("POST", MAIN + "/passwords", dict(name="app", role="reader", ttl=86400))
    connection_file = tmp_path / "app.json"
    rotate = dict(rotate_database="app", rotate_password_name="app", rotate_connection_file=str(connection_file))

    emulator.clear_requests()
    young = ansible.run("planetscale.cloud.rotate_password", extra_vars=rotate).succeeded(changed=0)
    assert 'The secret of password \\"app\\" is 0.0 days old; it is rotated after 30.0 days' in young.output
    assert emulator.writes() == [] and not connection_file.exists()

    forced = dict(rotate, rotate_force=True)
    ansible.run("planetscale.cloud.rotate_password", extra_vars=forced, check=True).succeeded(changed=1)
    assert emulator.writes() == []

    renewed = ansible.run("planetscale.cloud.rotate_password", extra_vars=forced).succeeded(changed=2)
    assert 'The password \\"app\\" was renewed; the new connection details are in %s.' % connection_file in renewed.output
    assert emulator.writes() == ["POST %s/passwords/%s/renew" % ("/v1" + MAIN, old["id"])]
    assert mode(connection_file) == "0o600"
    connection = json.loads(connection_file.read_text())
    assert connection["username"] == old["username"] and connection["password"] != old["plain_text"]

    emulator.clear_requests()
    ansible.run("planetscale.cloud.rotate_password", extra_vars=rotate).succeeded(changed=0)
    assert emulator.writes() == []
    ansible.assert_no_secret(old["plain_text"], connection["password"])


def test_rotate_password_replaces_one_without_ttl(ansible, emulator, tmp_path):
    old = emulator.api("POST", MAIN + "/passwords", dict(name="app", role="writer", cidrs=["10.0.0.0/8"]))
    rotate = dict(rotate_database="app", rotate_password_name="app", rotate_max_age=0)

    emulator.clear_requests()
    check = ansible.run("planetscale.cloud.rotate_password", extra_vars=rotate, check=True).succeeded(changed=1)
    assert 'The password \\"app\\" would be replaced.' in check.output
    assert emulator.writes() == []
    replaced = ansible.run("planetscale.cloud.rotate_password", extra_vars=rotate).succeeded(changed=2)
    assert 'The password \\"app\\" was replaced; the new secret is in the fact rotate_connection.' in replaced.output
    assert [write.split()[0] for write in emulator.writes()] == ["DELETE", "POST"]
    new = emulator.api("GET", MAIN + "/passwords")["data"]
    assert [(p["name"], p["role"], p["cidrs"]) for p in new] == [("app", "writer", ["10.0.0.0/8"])]
    assert new[0]["id"] != old["id"]
    ansible.assert_no_secret(old["plain_text"])


def test_rotate_password_needs_exactly_one(ansible, emulator, tmp_path):
    rotate = dict(rotate_database="app", rotate_password_name="app")
    ansible.run("planetscale.cloud.rotate_password", extra_vars=rotate).failed(
        'No password is named \\"app\\" on branch main of database app; rotate_password rotates exactly one.')
    emulator.api("POST", MAIN + "/passwords", dict(name="app", role="reader"))
    emulator.api("POST", MAIN + "/passwords", dict(name="app", role="writer"))
    ansible.run("planetscale.cloud.rotate_password", extra_vars=rotate).failed(
        '2 passwords are named \\"app\\"')
    assert [write.split()[0] for write in emulator.writes()] == ["POST", "POST"]  # the two made here


def test_audit(ansible, emulator, tmp_path):
    emulator.seed(reports=dict(branch="main", count=2))
    emulator.api("POST", MAIN + "/passwords", dict(name="ci", role="reader", cidrs=["192.0.2.0/24"]))
    report_path, json_path = tmp_path / "audit.md", tmp_path / "audit.json"
    audit = dict(audit_database="app", audit_report_path="audit.md")  # relative to where it runs

    access_path, access_json_path = tmp_path / "audit-access.md", tmp_path / "audit-access.json"

    emulator.clear_requests()
    ansible.run("planetscale.cloud.audit", extra_vars=audit, check=True).succeeded(changed=4)
    assert emulator.writes() == [] and not report_path.exists() and not json_path.exists()
    assert not access_path.exists() and not access_json_path.exists()

    done = ansible.run("planetscale.cloud.audit", extra_vars=audit).succeeded(changed=4)
    assert "The audit of acme is in %s and %s" % (report_path, json_path) in done.output
    assert mode(report_path) == mode(json_path) == mode(access_path) == mode(access_json_path) == "0o600"
    assert "The access review of acme is in %s and %s" % (access_path, access_json_path) in done.output
    access = access_path.read_text()
    members = emulator.list("/organizations/acme/members")
    assert access.startswith("# PlanetScale access review: acme\n") and "## Members (%d)" % len(members) in access
    assert "| emulator-admin | `%s` | never |" % emulator.world["service_token"]["id"] in access
    assert len(json.loads(access_json_path.read_text())["teams"]) == 3
    report = report_path.read_text()
    for line in ("# PlanetScale audit: acme",
                 "The audit ran as **admin@acme.test**",
                 "| SSO Admins | `sso-admins` | yes | 2 | - |",
                 "| Everyone | `everyone` | no | 260 | - |",
                 "- and 240 more",
                 "| `us-east` | AWS us-east-1 (N. Virginia) | AWS | Ashburn, Virginia | yes | yes |",
                 "| `main` | - | yes | ready | us-east |",
                 "| ci | reader | 192.0.2.0/24 | never | never |",
                 "## Query-pattern reports of branch main (2)"):
        assert line in report, line
    assert "pscale_" not in report
    records = json.loads(json_path.read_text())
    assert (records["organization"], records["database"], records["branch"]) == ("acme", "app", "main")
    assert sorted(team["slug"] for team in records["teams"]) == ["engineering", "everyone", "sso-admins"]
    assert len(records["team_members"]["everyone"]) == 260
    assert [p["name"] for p in records["passwords"]] == ["ci"] and len(records["query_pattern_reports"]) == 2
    assert "pscale_" not in json_path.read_text()

    emulator.clear_requests()
    ansible.run("planetscale.cloud.audit", extra_vars=audit).succeeded(changed=0)
    assert emulator.writes() == []


FORGED = "x\n# Forged\n| a |"


def test_audit_writes_api_text_into_markdown_as_text_and_verbatim_into_json(ansible, emulator, tmp_path):
    emulator.api("POST", "/organizations/acme/teams", dict(name="Forgers *bold* [link](http://x) <b>", description=(
        FORGED + "\n\n## Forged section\n- forged item\n<script>alert(1)</script>\n```\nfenced")))
    audit = dict(audit_database="app", audit_report_path="audit.md", audit_access_review=False)
    ansible.run("planetscale.cloud.audit", extra_vars=audit).succeeded(changed=2)
    assert not (tmp_path / "audit-access.md").exists()
    report = (tmp_path / "audit.md").read_text()
    lines = report.splitlines()
    assert not [line for line in lines if "Forged" in line and line.lstrip().startswith(("#", "|", "-"))]
    assert "| a |" not in report and "<script>" not in report and "```" not in report
    assert "x<br>\\# Forged<br>\\| a \\|<br><br>\\#\\# Forged section<br>- forged item<br>" in report
    assert "### Forgers \\*bold\\* \\[link\\](http://x) \\<b\\>" in lines
    assert [line for line in lines if line.startswith("## ")] == [
        "## Credentials", "## Teams (4)", "## Regions of database app (4)", "## Branches of database app (1)",
        "## Passwords of branch main (0)", "## Query-pattern reports of branch main (0)"]
    markdown_it = pytest.importorskip("markdown_it")  # .venv/new has it (through ansible-lint's rich)
    tokens = markdown_it.MarkdownIt("commonmark").enable("table").parse(report)
    assert len([t for t in tokens if t.type == "tr_open"]) == 5 + 5 + 2  # the teams, regions and branches tables
    assert not [t for t in tokens if t.type in ("html_block", "fence", "code_block")]
    blocks = []  # the block that holds each text of the forging team: its table cell, its heading, its paragraph
    for index, token in enumerate(tokens):
        if token.type == "inline" and "Forge" in token.content:
            blocks.append(next(t.type for t in reversed(tokens[:index]) if t.nesting == 1 and t.level < token.level))
            assert not [c for c in token.children if c.type in ("html_inline", "link_open", "strong_open", "em_open")
                        and c.content != "<br>"]
    assert blocks == ["td_open", "heading_open", "paragraph_open"]

    records = json.loads((tmp_path / "audit.json").read_text())
    forgers = next(team for team in records["teams"] if team["name"].startswith("Forgers"))
    assert forgers["description"].startswith(FORGED) and forgers["description"].endswith("```\nfenced")
