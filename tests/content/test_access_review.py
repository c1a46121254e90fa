# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The access_review role against an organization with more than one page of members, teams, service tokens
and webhooks: every record in the report and the JSON, compared with the emulator's; the flags; no secret."""

from __future__ import annotations

import json
import os

import pytest

from conftest import mode, role_play
from harness import ROOT

ORG = "/organizations/acme"
PAGE = 10  # the emulator's largest page here (max_per_page; the platform's is 100, which the modules ask for)


def seed_more_than_a_page(emulator):
    """More than one page of each: members (the seeded world has 270), databases, teams, service tokens, webhooks."""
    emulator.settings(max_per_page=PAGE)
    emulator.seed(databases=dict(count=PAGE, branches=1), teams=dict(count=PAGE),
                  service_tokens=dict(count=PAGE + 1), members=dict(count=5, directory_managed=2),
                  webhooks=dict(count=PAGE + 10, per_database=5))


def everything(emulator):
    """What the emulator holds: members, teams (with their members), tokens (with accesses), webhooks by database."""
    teams = emulator.list(ORG + "/teams")
    return dict(
        members=emulator.list(ORG + "/members"),
        teams=teams,
        team_members=dict((team["slug"], emulator.list("%s/teams/%s/members" % (ORG, team["slug"]))) for team in teams),
        tokens=emulator.list(ORG + "/service-tokens"),
        webhooks=dict((db["name"], emulator.list("%s/databases/%s/webhooks" % (ORG, db["name"])))
                      for db in emulator.list(ORG + "/databases")))


def grants(emulator, token_id):
    """{resource: sorted access names} of a token, from the grants endpoint (None: the organization)."""
    return dict((None if grant["resource_type"] == "Organization" else grant["resource_name"],
                 sorted(access["access"] for access in grant["accesses"]))
                for grant in emulator.api("GET", "%s/service-tokens/%s/grants" % (ORG, token_id))["data"])


def section(report, heading):
    """The cells of the table rows of the section whose heading starts with this text."""
    lines = report.split("\n## " + heading, 1)[1].split("\n## ", 1)[0].splitlines()
    rows = [line for line in lines if line.startswith("| ") and not line.startswith("| ---")][1:]  # no header
    return [[cell.strip() for cell in row.strip("|").split(" | ")] for row in rows]


def review_vars(tmp_path, **more):
    role_vars = dict(access_review_organization="acme", access_review_report_path=str(tmp_path / "review.md"))
    role_vars.update(more)
    return role_vars


def test_access_review_lists_everything_and_flags_the_tokens(ansible, emulator, tmp_path):
    seed_more_than_a_page(emulator)
    wide = emulator.api("POST", ORG + "/service-tokens", dict(name="ci-admin", ttl=86400))
    emulator.api("POST", "%s/service-tokens/%s/access" % (ORG, wide["id"]), dict(access=["create_databases"]))
    forever = emulator.api("POST", ORG + "/service-tokens", dict(name="ci-forever"))
    emulator.api("POST", "%s/service-tokens/%s/access" % (ORG, forever["id"]),
                 dict(database="app", access=["read_branch"]))
    scoped = emulator.api("POST", ORG + "/service-tokens", dict(name="ci-preview", ttl=86400))
    emulator.api("POST", "%s/service-tokens/%s/access" % (ORG, scoped["id"]),
                 dict(database="app", access=["create_branch", "connect_branch"]))
    world = everything(emulator)
    assert min(len(world[key]) for key in ("members", "teams", "tokens")) > PAGE
    hooks = [dict(hook, database=name) for name, listed in world["webhooks"].items() for hook in listed]
    assert len(hooks) > PAGE and all(hook["secret"] for hook in hooks)
    secrets = [wide["token"], forever["token"], scoped["token"]] + [hook["secret"] for hook in hooks]

    play = role_play(tmp_path, "access_review", review_vars(tmp_path))
    report_path, json_path = tmp_path / "review.md", tmp_path / "review.json"

    emulator.clear_requests()
    checked = ansible.run(play, check=True, args=["-vvv"]).succeeded(changed=2)  # every record shown, no secret
    assert emulator.writes() == [] and not report_path.exists() and not json_path.exists()
    assert wide["id"] in checked.output and hooks[0]["url"] in checked.output

    run = ansible.run(play).succeeded(changed=2)
    assert emulator.writes() == []
    assert mode(report_path) == "0o600" and mode(json_path) == "0o600"
    report, text = report_path.read_text(), json_path.read_text()
    records = json.loads(text)
    for secret in secrets:
        assert secret not in report and secret not in text
    assert "pscale_" not in report and "pscale_" not in text and '"secret"' not in text and '"token"' not in text
    ansible.assert_no_secret(*secrets)

    # every member, with the role and the teams the emulator has
    teams_of = {}
    for slug, members in world["team_members"].items():
        for member in members:
            teams_of.setdefault(member["user"]["id"], []).append(slug)
    assert [m["id"] for m in records["members"]] == [m["id"] for m in sorted(
        world["members"], key=lambda m: (m["user"]["email"].lower(), m["id"]))]
    rows = dict((row[0], row) for row in section(report, "Members ("))
    assert len(rows) == len(world["members"])
    for member in world["members"]:
        user = member["user"]
        row = rows[user["email"]]
        assert row[2] == member["role"] and row[3] == ("yes" if user["directory_managed"] else "no"), row
        assert row[4] == (", ".join("`%s`" % slug for slug in sorted(teams_of.get(user["id"], []))) or "-"), row
    assert sum(1 for row in rows.values() if row[3] == "yes") >= 2 + 2  # the seeded SSO team's and the seeded ones

    # every team, with every member
    assert [t["slug"] for t in records["teams"]] == sorted(t["slug"] for t in world["teams"])
    for team in records["teams"]:
        assert sorted(u["id"] for u in team["members"]) == sorted(
            m["user"]["id"] for m in world["team_members"][team["slug"]])
    team_rows = section(report, "Teams (")
    assert [(row[1], int(row[3])) for row in team_rows] == [
        ("`%s`" % t["slug"], len(world["team_members"][t["slug"]])) for t in records["teams"]]

    # every token, with its accesses and the flags the emulator's grants call for
    assert sorted(t["id"] for t in records["service_tokens"]) == sorted(t["id"] for t in world["tokens"])
    expected = []
    for token in world["tokens"]:
        granted = grants(emulator, token["id"])
        listed = next(t for t in records["service_tokens"] if t["id"] == token["id"])
        assert dict((a.get("database"), sorted(a["access"])) for a in listed["accesses"]) == granted
        flags = (["organization_wide_access"] if None in granted else []) + \
            (["no_expiry"] if token["expires_at"] is None else [])
        assert listed["review_flags"] == flags, listed
        expected += [(token["id"], flag) for flag in flags]
    assert sorted((f["service_token"], f["finding"]) for f in records["findings"]) == sorted(expected)
    assert {"organization_wide_access", "no_expiry"} == set(flag for token_id, flag in expected)
    token_rows = dict((row[1].strip("`"), row) for row in section(report, "Service tokens ("))
    assert sorted(token_rows) == sorted(t["id"] for t in world["tokens"])
    assert token_rows[wide["id"]][4:] == ["the organization: `create_databases`", "**organization-wide access**"]
    assert token_rows[forever["id"]][4:] == ["`app`: `read_branch`", "**no expiry**"]
    assert token_rows[scoped["id"]][4:] == ["`app`: `connect_branch`, `create_branch`", "-"]
    assert "Service token **ci-admin** (`%s`) has organization-wide access: `create_databases`." % wide["id"] in report
    assert "Service token **ci-forever** (`%s`) never expires." % forever["id"] in report
    assert "## Findings (%d)" % len(expected) in report

    # every webhook of every database
    assert [(h["database"], h["url"], h["id"]) for h in records["webhooks"]] == sorted(
        (h["database"], h["url"], h["id"]) for h in hooks)
    assert records["databases"] == sorted(world["webhooks"])
    hook_rows = section(report, "Webhooks (")
    assert [(row[0], row[1], row[3]) for row in hook_rows] == [
        ("`%s`" % h["database"], "`%s`" % h["url"], "yes" if h["enabled"] else "no") for h in records["webhooks"]]
    assert "(%d members, %d teams, %d service tokens, %d webhooks of %d databases)" % (
        len(world["members"]), len(world["teams"]), len(world["tokens"]), len(hooks), len(world["webhooks"])) \
        in " ".join(run.output.split())

    # the changes to credentials within the window: the tokens this test created and gave accesses, from the log
    log = emulator.api("GET", ORG + "/audit-log?limit=100")["data"]
    audited = [e for e in log if e["audit_action"].split(".")[0] in (
        "database_branch_password", "database_branch_role", "service_token", "organization_membership",
        "team_membership")]
    assert len(audited) == 6 and len(log) == len(audited)  # three created, three given accesses
    assert [e["id"] for e in records["audit_events"]] == [e["id"] for e in audited]
    assert records["audit_window_days"] == 30
    assert {e["target_display_name"] for e in records["audit_events"]} == {"ci-admin", "ci-forever", "ci-preview"}
    audit_rows = section(report, "Changes to credentials and members in the last 30 days (6)")
    assert len(audit_rows) == 6 and all(row[1] == "emulator-admin (ServiceToken)" for row in audit_rows)
    assert sorted(row[2] for row in audit_rows) == ["`service_token.created`"] * 3 + ["`service_token.updated`"] * 3
    assert "Changes to credentials and members in the last 30 days: 6." in " ".join(run.output.split())
    # (a second run writing the same files, changed=0: the role README's example, run twice by test_examples.py)


def test_access_review_lists_who_changed_credentials_and_members_within_the_window(ansible, emulator, tmp_path):
    """The audit log's evidence: who created, changed or removed a credential or a member in the window; older
    changes and changes of other things are left out; the window is the role's variable."""
    emulator.control("POST", "/audit-log/acme", dict(count=3, audit_action="service_token.deleted", hours_ago=24 * 40))
    users = emulator.world["users"]
    password = emulator.api("POST", ORG + "/databases/app/branches/main/passwords", dict(name="review-pw"))
    emulator.api("DELETE", ORG + "/databases/app/branches/main/passwords/" + password["id"])
    emulator.api("PATCH", "%s/members/%s" % (ORG, users[0]["id"]), dict(role="admin"))
    emulator.api("DELETE", "%s/members/%s" % (ORG, users[1]["id"]))
    emulator.api("POST", ORG + "/teams/engineering/members", dict(user_id=users[2]["id"]))
    emulator.api("POST", ORG + "/teams", dict(name="Not A Credential"))  # a change of another kind: left out
    play = role_play(tmp_path, "access_review", review_vars(tmp_path))

    run = ansible.run(play).succeeded(changed=2)
    report = (tmp_path / "review.md").read_text()
    records = json.loads((tmp_path / "review.json").read_text())
    assert [(e["audit_action"], e["target_display_name"]) for e in records["audit_events"]] == [
        ("team_membership.created", users[2]["email"]), ("organization_membership.deleted", users[1]["email"]),
        ("organization_membership.updated", users[0]["email"]), ("database_branch_password.deleted", "review-pw"),
        ("database_branch_password.created", "review-pw")]
    assert all(e["actor_display_name"] == "emulator-admin" for e in records["audit_events"])
    assert password["plain_text"] not in report and password["plain_text"] not in json.dumps(records)
    rows = section(report, "Changes to credentials and members in the last 30 days (5)")
    assert rows[3] == [rows[3][0], "emulator-admin (ServiceToken)", "`database_branch_password.deleted`",
                       "review-pw (DatabaseBranchPassword)", "app"]
    assert "Changes to credentials and members in the last 30 days: 5." in " ".join(run.output.split())

    wider = role_play(tmp_path, "access_review", review_vars(tmp_path, access_review_window_days=60), name="wide.yml")
    ansible.run(wider).succeeded(changed=2)
    records = json.loads((tmp_path / "review.json").read_text())
    assert len(records["audit_events"]) == 8 and records["audit_window_days"] == 60
    assert [e["audit_action"] for e in records["audit_events"][-3:]] == ["service_token.deleted"] * 3

    emulator.clear_requests()
    off = role_play(tmp_path, "access_review", review_vars(tmp_path, access_review_audit_log=False), name="off.yml")
    ansible.run(off).succeeded(changed=2)
    assert not [r for r in emulator.requests() if r["path"].endswith("/audit-log")]
    records = json.loads((tmp_path / "review.json").read_text())
    assert records["audit_events"] is None and records["audit_window_days"] is None
    assert "## Changes to credentials" not in (tmp_path / "review.md").read_text()


FORGED = "x\n# Forged\n| a | {{ 7 * 7 }} *bold* [link](http://x) <b>"


def test_access_review_writes_api_text_into_markdown_as_text_and_verbatim_into_json(ansible, emulator, tmp_path):
    emulator.api("POST", ORG + "/teams", dict(name="Forgers " + FORGED.replace("\n", " ")))
    token = emulator.api("POST", ORG + "/service-tokens", dict(name=FORGED, ttl=3600))
    emulator.seed(databases=dict(count=2, branches=1), webhooks=dict(count=3, per_database=1))
    play = role_play(tmp_path, "access_review", review_vars(tmp_path, access_review_databases=["db-1"]))

    emulator.clear_requests()
    ansible.run(play).succeeded(changed=2)
    # only the database named: its webhooks, and no list of databases
    assert [r["path"] for r in emulator.requests() if r["path"].endswith(("/databases", "/webhooks"))] == [
        "/v1%s/databases/db-1/webhooks" % ORG]
    report = (tmp_path / "review.md").read_text()
    records = json.loads((tmp_path / "review.json").read_text())
    assert records["databases"] == ["db-1"] and [h["database"] for h in records["webhooks"]] == ["db-1"]
    assert "## Webhooks (1, of 1 databases)" in report

    assert next(t for t in records["service_tokens"] if t["id"] == token["id"])["name"] == FORGED
    assert any(t["name"] == "Forgers " + FORGED.replace("\n", " ") for t in records["teams"])
    lines = report.splitlines()
    assert not [line for line in lines if "Forged" in line and line.lstrip().startswith(("#", "- x", "| a"))]
    markdown_it = pytest.importorskip("markdown_it")  # .venv/new has it (through ansible-lint's rich)
    tokens = markdown_it.MarkdownIt("commonmark").enable("table").parse(report)
    assert not [t for t in tokens if t.type in ("html_block", "fence", "code_block")]
    assert not [c for t in tokens if t.type == "inline" for c in t.children
                if c.type in ("html_inline", "link_open", "strong_open", "em_open") and "Forged" in t.content]
    escaped = "x \\# Forged \\| a \\| {{ 7 \\* 7 }} \\*bold\\* \\[link\\](http://x) \\<b\\>"
    assert "| %s | `%s` |" % (escaped, token["id"]) in report  # the token's row: one cell for the name
    assert "| Forgers %s | `forgers-" % escaped in report  # the team's row


def test_access_review_never_writes_a_secret_a_record_carries(ansible, emulator, tmp_path):
    """Should a module ever return a secret, the role drops it: the records template, fed such records."""
    play = """
- name: The records of the access review, from records that carry secrets
  hosts: localhost
  connection: local
  gather_facts: false
  vars_files:
    - {root}/roles/access_review/vars/main.yml
  vars:
    access_review_organization: acme
    access_review__members: {{members: []}}
    access_review__team_members: {{results: []}}
    access_review__tokens:
      service_tokens:
        - {{id: t1, name: ci, expires_at: null, last_used_at: "2026-11-24T10:11:12.000Z", token: pscale_tkn_leak1,
           plain_text_refresh_token: pscale_ref_leak2, accesses: [{{access: [create_databases]}}]}}
    access_review__webhooks:
      results:
        - {{access_review__database: app, webhooks: [{{id: w1, url: "https://h.example/1", secret: hooksecretleak3}}]}}
  tasks:
    - name: Write the records
      ansible.builtin.copy:
        content: "{{{{ lookup('ansible.builtin.template', '{template}') }}}}"
        dest: "{out}"
        mode: "0600"
""".format(root=ROOT, template=os.path.join(ROOT, "roles", "access_review", "templates", "access_review.json.j2"),
           out=tmp_path / "records.json")
    ansible.run(play).succeeded(changed=1)
    text = (tmp_path / "records.json").read_text()
    assert "leak" not in text
    records = json.loads(text)
    assert records["service_tokens"] == [dict(id="t1", name="ci", expires_at=None, last_used_at="2026-11-24",
                                              accesses=[dict(access=["create_databases"])],
                                              review_flags=["organization_wide_access", "no_expiry"])]
    assert records["webhooks"] == [dict(id="w1", url="https://h.example/1", database="app")]
