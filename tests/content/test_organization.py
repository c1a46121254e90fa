# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The organization as code: the playbook organization_export writes the seeded organization (with one of every kind
added) as data, with no secret and mode 0600; the role organization converges that file without a write, in check mode
too; a purge in check mode predicts the deletions and writes nothing."""

from __future__ import annotations

import yaml

from conftest import mode

ORG = "/organizations/acme"
APP, PG = ORG + "/databases/app", ORG + "/databases/pgapp"
# the kinds the export writes
EXPORTED = ["backup_policies", "bouncers", "branches", "databases", "ip_restrictions", "keyspaces", "name", "passwords",
            "service_tokens", "settings", "teams", "throttlers", "traffic_budgets", "vschemas", "webhooks"]
# the platform's required backup policy (the emulator's; its seeded PostgreSQL database has none)
REQUIRED_POLICY = dict(name="default", target="production", frequency_value=12, frequency_unit="hour", retention_value=2,
                       retention_unit="day", schedule_time="00:00")


def add_one_of_each(emulator):
    """One of every kind beside the seeded ones, through the API; the secrets the platform answered."""
    api = emulator.api
    api("POST", APP + "/branches", dict(name="dev", parent_branch="main"))
    password = api("POST", APP + "/branches/main/passwords", dict(name="ci", role="reader", cidrs=["10.0.0.0/8"]))
    hook = api("POST", APP + "/webhooks", dict(url="https://hooks.example.com/deploys", events=["deploy_request.opened"]))
    api("POST", APP + "/backup-policies", dict(name="nightly", target="production", frequency_value=1, frequency_unit="day",
                                               retention_value=7, retention_unit="day", schedule_time="02:00"))
    api("POST", PG + "/cidrs", dict(role="", schema="", cidrs=["10.0.0.0/8"], description="office"))
    api("POST", PG + "/cidrs", dict(role="reporting", schema="", cidrs=["192.0.2.0/28", "127.0.0.1/32"]))
    api("POST", PG + "/branches/main/bouncers", dict(name="pool", target="primary", bouncer_size="PGB_5"))
    api("POST", PG + "/branches/main/traffic/budgets", dict(name="reports", mode="warn", capacity=60, rate=50))
    api("PATCH", APP + "/throttler", dict(ratio=30))
    api("POST", APP + "/branches/main/keyspaces", dict(name="sharded", cluster_size="PS_10", shards=2))
    api("PATCH", APP + "/branches/main/keyspaces/sharded/vschema", dict(vschema='{"sharded": true}'))
    team = api("POST", ORG + "/teams", dict(name="reviewers", description="People who review"))
    api("POST", ORG + "/teams/%s/members" % team["slug"], dict(user_id=emulator.world["users"][0]["id"]))
    token = api("POST", ORG + "/service-tokens", dict(name="ci", ttl=86400))
    api("POST", ORG + "/service-tokens/%s/access" % token["id"], dict(database="app", access=["read_branch", "connect_branch"]))
    return [password["plain_text"], hook["secret"], token["token"]]


def converge_play(data_file):
    return [dict(name="Converge the organization", hosts="localhost", connection="local", gather_facts=False,
                 vars_files=[str(data_file)], roles=["planetscale.cloud.organization"])]


def test_export_then_converge_writes_nothing(ansible, emulator, tmp_path):
    secrets = add_one_of_each(emulator) + emulator.secrets()
    ansible.assert_no_secret(*secrets)
    exported = tmp_path / "acme.yml"

    emulator.clear_requests()
    ansible.run("planetscale.cloud.organization_export", extra_vars=dict(export_path=str(exported))).succeeded(changed=1)
    assert emulator.writes() == []
    assert mode(exported) == "0o600"
    text = exported.read_text()
    for secret in secrets:
        assert secret not in text
    assert "their secrets\n# are not recoverable" in text
    data = yaml.safe_load(text)["organization_data"]
    assert sorted(data) == EXPORTED
    assert data["name"] == "acme" and data["settings"] == dict(billing_email="billing@acme.test", idp_managed_roles=False,
                                                               invoice_budget_amount=0)
    assert [(b["database"], b["name"]) for b in data["branches"]] == [("app", "dev"), ("app", "main"), ("pgapp", "main")]
    assert data["passwords"] == [dict(database="app", branch="main", name="ci", role="reader", replica=False,
                                      cidrs=["10.0.0.0/8"])]
    assert data["webhooks"] == [dict(database="app", url="https://hooks.example.com/deploys",
                                     events=["deploy_request.opened"], enabled=True)]
    assert data["backup_policies"] == [
        dict(REQUIRED_POLICY, database="app"),
        dict(database="app", name="nightly", target="production", frequency_value=1, frequency_unit="day",
             retention_value=7, retention_unit="day", schedule_time="02:00")]
    assert data["ip_restrictions"] == [
        dict(database="pgapp", role="", schema="", cidrs=["10.0.0.0/8"], description="office"),
        dict(database="pgapp", role="reporting", schema="", cidrs=["127.0.0.1/32", "192.0.2.0/28"])]
    assert data["throttlers"] == [dict(database="app", keyspaces=[dict(name="app", ratio=30)])]
    assert data["vschemas"] == [dict(database="app", branch="main", keyspace="sharded", vschema=dict(sharded=True))]
    assert [(k["branch"], k["name"], k["shards"]) for k in data["keyspaces"]] == [
        ("dev", "app", 1), ("main", "app", 1), ("main", "sharded", 2)]
    assert data["bouncers"] == [dict(database="pgapp", branch="main", name="pool", size="PGB_5", replicas_per_cell=1,
                                     target="primary")]
    assert data["traffic_budgets"] == [dict(database="pgapp", branch="main", name="reports", mode="warn", capacity=60,
                                            rate=50, unlimited=["burst", "concurrency"])]
    # single sign-on's team is left out; members by e-mail address, sorted
    assert [t["name"] for t in data["teams"]] == ["Engineering", "Everyone", "reviewers"]
    assert data["teams"][2] == dict(name="reviewers", description="People who review", members=["member1@acme.test"],
                                    purge_members=True)
    assert data["service_tokens"] == [
        dict(name="ci", ttl=86400, accesses=[dict(database="app", access=["connect_branch", "read_branch"])],
             purge_accesses=True),
        dict(name="emulator-admin", accesses=[], purge_accesses=True)]

    # converged right away: nothing to change, no write, in check mode with diff too
    play = converge_play(exported)
    emulator.clear_requests()
    ansible.run(play, check=True, diff=True).succeeded(changed=0)
    assert emulator.writes() == []
    ansible.run(play).succeeded(changed=0)
    assert emulator.writes() == [] and len(emulator.requests()) > 0
    # a second export is the same file, byte for byte
    again = tmp_path / "again.yml"
    ansible.run("planetscale.cloud.organization_export", extra_vars=dict(export_path=str(again))).succeeded(changed=1)
    assert again.read_text() == text


def test_purge_in_check_mode_names_the_deletions_and_writes_nothing(ansible, emulator, tmp_path):
    api = emulator.api
    api("POST", ORG + "/databases", dict(name="stray", cluster_size="PS_10"))
    api("POST", APP + "/branches/main/passwords", dict(name="stray", role="reader"))
    api("POST", APP + "/webhooks", dict(url="https://hooks.example.com/stray", events=["branch.ready"]))
    api("POST", ORG + "/teams", dict(name="stray", description="Not in the file"))
    api("POST", APP + "/backup-policies", dict(name="stray", frequency_value=1, frequency_unit="day", retention_value=1,
                                               retention_unit="day"))
    api("POST", APP + "/backup-policies", dict(name="kept", frequency_value=1, frequency_unit="week", retention_value=1,
                                               retention_unit="month"))
    api("POST", PG + "/cidrs", dict(role="stray", schema="", cidrs=["10.0.0.0/8"]))
    api("POST", PG + "/cidrs", dict(role="", schema="", cidrs=["10.0.0.0/8"]))
    data = dict(databases=[dict(name="app"), dict(name="pgapp")], branches=[dict(database="app", name="main")],
                passwords=[], webhooks=[], teams=[dict(name="Engineering"), dict(name="Everyone")],
                backup_policies=[dict(database="app", name="kept")], ip_restrictions=[dict(database="pgapp")],
                purge=dict(databases=True, passwords=True, webhooks=True, teams=True, backup_policies=True,
                           ip_restrictions=True))
    data_file = tmp_path / "data.yml"
    data_file.write_text(yaml.safe_dump(dict(organization_data=data)))

    emulator.clear_requests()
    run = ansible.run(converge_play(data_file), check=True, diff=True).succeeded(changed=6)
    assert emulator.writes() == []
    for deleted in ("(item=stray)", "(item=app/main/stray)", "(item=app https://hooks.example.com/stray)",
                    "(item=app/stray)", "(item=pgapp role=stray schema=)"):
        assert deleted in run.output, deleted
    for kept in ("(item=app/kept)", "(item=app/default)", "(item=pgapp role= schema=)"):  # named, or required
        assert "skipping: [localhost] => " + kept in run.output, kept
    assert "changed: [localhost] => (item=SSO Admins)" not in run.output  # single sign-on's team is never purged
