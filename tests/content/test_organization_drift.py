# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The drift of an organization from its data: after the export, one field of every kind the export writes changed
through the API (and a webhook the data purges) is exactly what the playbook organization_drift reports, in JSON and
Markdown (mode 0600), sending no write; converging the data writes exactly those changes; a drift run that fails on
drift then names only the one field changed since."""

from __future__ import annotations

import json

import yaml

from conftest import mode
from test_organization import APP, ORG, PG, add_one_of_each


def ordered(value):
    return json.dumps(value, sort_keys=True)


def entry(kind, name, field, in_file, on_platform):
    return dict(kind=kind, name=name, field=field, in_file=in_file, on_platform=on_platform)


def test_drift_names_the_fields_changed_outside_the_file(ansible, emulator, tmp_path):
    api = emulator.api
    secrets = add_one_of_each(emulator) + emulator.secrets()
    ansible.assert_no_secret(*secrets)
    exported = tmp_path / "acme.yml"
    ansible.run("planetscale.cloud.organization_export", extra_vars=dict(export_path=str(exported))).succeeded()
    text = exported.read_text()
    data = yaml.safe_load(text)["organization_data"]
    # the data purges the webhooks it does not name
    data["purge"] = dict(webhooks=True)
    exported.write_text(text.split("organization_data:")[0] + yaml.safe_dump(dict(organization_data=data)))

    app = next(d for d in data["databases"] if d["name"] == "app")
    dev = next(b for b in data["branches"] if (b["database"], b["name"]) == ("app", "dev"))
    sharded = next(k for k in data["keyspaces"] if (k["branch"], k["name"]) == ("main", "sharded"))
    flags = dict(sharded["vreplication_flags"], optimize_inserts=not sharded["vreplication_flags"]["optimize_inserts"])
    engineering = next(t for t in data["teams"] if t["name"] == "Engineering")
    hooks = api("GET", APP + "/webhooks")
    hook = next(h for h in hooks.get("data", hooks) if h["url"] == "https://hooks.example.com/deploys")
    password = api("GET", APP + "/branches/main/passwords")["data"][0]
    budget = api("GET", PG + "/branches/main/traffic/budgets")["data"][0]
    token = next(t for t in api("GET", ORG + "/service-tokens")["data"] if t["name"] == "ci")
    policy = next(p for p in api("GET", APP + "/backup-policies")["data"] if p["name"] == "nightly")
    office = next(c for c in api("GET", PG + "/cidrs")["data"] if c["role"] == "")
    team = next(t for t in api("GET", ORG + "/teams")["data"] if t["name"] == "Engineering")
    newcomer = emulator.world["users"][1]
    emulator.settings(change_step_delay=0)  # a bouncer's resize request completes at once
    # changes made outside the file: one field of every kind the export writes, and a webhook the data does not name
    api("PATCH", ORG, dict(billing_email="finance@acme.test"))
    api("PATCH", APP, dict(allow_data_branching=not app["allow_data_branching"]))
    api("PATCH", APP + "/branches/dev", dict(deletion_protected=not dev["deletion_protected"]))
    api("PATCH", APP + "/branches/main/keyspaces/sharded", dict(vreplication_flags=flags))
    api("PATCH", APP + "/branches/main/keyspaces/sharded/vschema",
        dict(vschema='{"sharded": true, "vindexes": {"hash": {"type": "hash"}}}'))
    api("PATCH", APP + "/throttler", dict(ratio=50))
    api("PATCH", PG + "/branches/main/bouncers/pool/resizes", dict(replicas_per_cell=2))
    api("PATCH", PG + "/branches/main/traffic/budgets/" + budget["id"], dict(capacity=80))
    api("PATCH", APP + "/branches/main/passwords/" + password["id"], dict(cidrs=["10.0.0.0/8", "192.0.2.0/24"]))
    api("PATCH", APP + "/backup-policies/" + policy["id"], dict(retention_value=14))
    api("PATCH", APP + "/webhooks/" + hook["id"], dict(events=["branch.ready", "deploy_request.opened"]))
    api("PATCH", PG + "/cidrs/" + office["id"], dict(cidrs=["10.0.0.0/8", "198.51.100.0/24"]))
    api("PATCH", ORG + "/teams/reviewers", dict(description="Changed in the dashboard"))
    api("POST", ORG + "/teams/%s/members" % team["slug"], dict(user_id=newcomer["id"]))
    api("POST", ORG + "/service-tokens/%s/access" % token["id"], dict(database="pgapp", access=["read_branch"]))
    stray = api("POST", APP + "/webhooks", dict(url="https://hooks.example.com/stray", events=["branch.ready"]))
    secrets.append(stray["secret"])
    ansible.assert_no_secret(stray["secret"])
    expected = sorted([
        entry("settings", "acme", "billing_email", "billing@acme.test", "finance@acme.test"),
        entry("databases", "app", "allow_data_branching", app["allow_data_branching"], not app["allow_data_branching"]),
        entry("branches", "app/dev", "deletion_protected", dev["deletion_protected"], not dev["deletion_protected"]),
        entry("keyspaces", "app/main/sharded", "vreplication_flags", sharded["vreplication_flags"], flags),
        entry("vschemas", "app/main/sharded", "vindexes", None, dict(hash=dict(type="hash"))),  # a key of the VSchema
        entry("throttlers", "app", "ratio (keyspace app)", 30, 50),
        entry("bouncers", "pgapp/main/pool", "replicas_per_cell", 1, 2),
        entry("traffic_budgets", "pgapp/main/reports", "capacity", 60, 80),
        entry("passwords", "app/main/ci", "cidrs", ["10.0.0.0/8"], ["10.0.0.0/8", "192.0.2.0/24"]),
        entry("backup_policies", "app/nightly", "retention_value", 7, 14),
        entry("ip_restrictions", "pgapp role= schema=", "cidrs", ["10.0.0.0/8"], ["10.0.0.0/8", "198.51.100.0/24"]),
        entry("webhooks", "app https://hooks.example.com/deploys", "events", ["deploy_request.opened"],
              ["branch.ready", "deploy_request.opened"]),
        entry("teams", "reviewers", "description", "People who review", "Changed in the dashboard"),
        entry("teams", "Engineering", "members", engineering["members"],
              sorted(engineering["members"] + [newcomer["email"]])),
        entry("service_tokens", "ci", "accesses", [dict(database="app", access=["connect_branch", "read_branch"])],
              [dict(database="app", access=["connect_branch", "read_branch"]),
               dict(database="pgapp", access=["read_branch"])]),
        entry("webhooks", "app https://hooks.example.com/stray", "state", "absent", "present"),
    ], key=ordered)

    # the drift: exactly those fields, in both files (0600), no write, no secret
    reports = tmp_path / "reports"
    drift = dict(drift_file=str(exported), drift_dir=str(reports))
    emulator.clear_requests()
    run = ansible.run("planetscale.cloud.organization_drift", extra_vars=drift).succeeded()
    assert emulator.writes() == []
    assert "16 field(s) of the organization differ" in run.output
    report = json.loads((reports / "organization-drift.json").read_text())
    assert sorted(report, key=ordered) == expected
    markdown = (reports / "organization-drift.md").read_text()
    assert mode(reports / "organization-drift.json") == mode(reports / "organization-drift.md") == "0o600"
    assert "| teams | reviewers | description | `\"People who review\"` | `\"Changed in the dashboard\"` |" in markdown
    assert markdown.count("\n| ") == 1 + 16  # the header and one row per field
    for secret in secrets:
        assert secret not in markdown and secret not in json.dumps(report)

    # converging the data writes exactly those changes
    play = [dict(name="Converge", hosts="localhost", connection="local", gather_facts=False,
                 vars_files=[str(exported)], roles=["planetscale.cloud.organization"])]
    emulator.clear_requests()
    ansible.run(play).succeeded(changed=15)  # one task per kind, and the purge of the webhooks
    assert sorted(emulator.writes()) == sorted("%s /v1%s" % write for write in [
        ("PATCH", ORG), ("PATCH", APP), ("PATCH", APP + "/branches/dev"),
        ("PATCH", APP + "/branches/main/keyspaces/sharded"),
        ("PATCH", APP + "/branches/main/keyspaces/sharded/vschema"),
        ("PATCH", APP + "/throttler"), ("PATCH", PG + "/branches/main/bouncers/pool/resizes"),
        ("PATCH", PG + "/branches/main/traffic/budgets/" + budget["id"]),
        ("PATCH", APP + "/branches/main/passwords/" + password["id"]), ("PATCH", APP + "/webhooks/" + hook["id"]),
        ("PATCH", APP + "/backup-policies/" + policy["id"]), ("PATCH", PG + "/cidrs/" + office["id"]),
        ("PATCH", ORG + "/teams/reviewers"), ("DELETE", ORG + "/teams/%s/members/%s" % (team["slug"], newcomer["id"])),
        ("DELETE", ORG + "/service-tokens/%s/access" % token["id"]), ("DELETE", APP + "/webhooks/" + stray["id"])])

    # one more change: the drift then names it alone, and fails the run when asked
    api("PATCH", ORG + "/teams/reviewers", dict(description="Changed again"))
    emulator.clear_requests()
    ansible.run("planetscale.cloud.organization_drift", extra_vars=dict(drift, drift_fail=True)).failed(
        "1 field of the organization differs from the data: teams reviewers description")
    assert emulator.writes() == []
    assert json.loads((reports / "organization-drift.json").read_text()) == [
        entry("teams", "reviewers", "description", "People who review", "Changed again")]
