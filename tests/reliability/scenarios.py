# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The playbook that uses every module of the collection, for the transient-fault test and the test of the
execution paths, and the end state they compare.

It walks each resource through create, update and delete, reads with every info module
(several of them across pages), and obtains, checks, refreshes and keeps valid OAuth tokens
through both token endpoints. Some tasks that return a secret by design show it (no no_log,
REVEALS in the name), so the secret scan of its -vvvv output meets secrets where they may be;
the others have no_log.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile

from harness import REVEALS, module_defaults, play, task

BRANCH = "rel-a"
TEAM = "Reliability"
TEAM_SLUG = "reliability"
REPORTS = 150  # query-pattern reports: two cursor pages
SCHEMA_BRANCH = "rel-schema"
BEARER = dict(service_token="{{ omit }}", service_token_id="{{ omit }}")
HOOK = "http://127.0.0.1:9/hooks"  # webhooks: nothing listens there, deliveries fail quickly
POSTGRES = dict(database="{{ world.postgres.database }}", branch="{{ world.postgres.branch }}")


def prepare(emulator, watch):
    """Fixtures the playbook reads, and its variables (two authorization codes, secrets to watch for)."""
    world = emulator.world
    emulator.seed(reports=dict(branch=world["branch"], count=REPORTS))
    # a development branch with a schema change, for the deploy-request tasks
    emulator.api("POST", "/organizations/%s/databases/%s/branches" % (world["organization"], world["database"]),
                 dict(name=SCHEMA_BRANCH, parent_branch=world["branch"]))
    emulator.advance(5)  # the branch is ready
    emulator.ddl(world["database"], SCHEMA_BRANCH, ["CREATE TABLE orders (id bigint NOT NULL, PRIMARY KEY (id))"])
    emulator.settings(workflow_copy_delay=0.3, workflow_step_delay=0.3)  # the workflow's steps, short
    codes = dict(code_1=emulator.code(), code_2=emulator.code())
    watch.learn(*codes.values())
    # where the query-pattern report is downloaded: the same path for every run of this process (the runs compare
    # their results), empty before each
    downloads = os.path.join(tempfile.gettempdir(), "planetscale-reliability-%d" % os.getpid())
    shutil.rmtree(downloads, ignore_errors=True)
    os.makedirs(downloads)
    return dict(codes, report_file=os.path.join(downloads, "query-patterns.csv.gz"))


def every_module(emulator, **connection):
    """One play that uses every module; the list of (task name, module) it runs."""
    database, users = "{{ world.database }}", emulator.world["users"]
    app = "{{ world.oauth_application.%s }}"
    tasks = [
        task("Read the user", "user_info"),
        task("List the regions", "region_info", database=database),
        task("List the organization's regions", "region_info", scope="organization"),
        task("List the public regions", "region_info", scope="public"),
        task("List the branches", "branch_info", database=database),
        task("Create branch rel-a", "branch", database=database, name=BRANCH, parent_branch="main"),
        task("Create branch rel-b", "branch", database=database, name="rel-b", parent_branch=BRANCH, wait=False),
        task("Delete branch rel-b", "branch", database=database, name="rel-b", state="absent"),
        task("Read branch rel-a, a no-op", "branch", database=database, name=BRANCH, parent_branch="main"),
        task("Give branch rel-a two VTGates", "branch", database=database, name=BRANCH, vtgate=dict(count=2)),
        task("Read branch rel-a", "branch_info", database=database, name=BRANCH),
        task("Create database rel-db", "database", name="rel-db", cluster_size="PS_10",
             require_approval_for_deploy=True),
        task("Ensure database rel-db, a no-op", "database", name="rel-db", require_approval_for_deploy=True),
        task("List the databases", "database_info"),
        task("List the cluster sizes", "cluster_size_info", enabled=True),
        task("Take backup rel-backup", "backup", database=database, branch=BRANCH, name="rel-backup", protected=True),
        task("Ensure backup rel-backup, a no-op", "backup", database=database, branch=BRANCH, name="rel-backup",
             protected=True),
        task("Unprotect backup rel-backup", "backup", database=database, branch=BRANCH, name="rel-backup",
             protected=False),
        task("Delete backup rel-backup", "backup", database=database, branch=BRANCH, name="rel-backup",
             state="absent"),
        task("List the backups of main", "backup_info", database=database, branch="{{ world.branch }}", state="success"),
        task("Declare policy rel-weekly", "backup_policy", database=database, name="rel-weekly", frequency_value=1,
             frequency_unit="week", retention_value=4, retention_unit="week", schedule_day=0, schedule_time="03:30"),
        task("Change policy rel-weekly", "backup_policy", database=database, name="rel-weekly", retention_value=8),
        task("Declare policy rel-weekly, a no-op", "backup_policy", database=database, name="rel-weekly",
             retention_value=8),
        task("List the backup policies", "backup_policy_info", database=database),
        task("Delete policy rel-weekly", "backup_policy", database=database, name="rel-weekly", state="absent"),
        task("Delete database rel-db", "database", name="rel-db", state="absent"),
        task("Create webhook rel-hook", "webhook", database=database, url=HOOK + "/rel",
             events=["deploy_request.opened", "branch.ready"]),
        task("Disable webhook rel-hook and test it", "webhook", database=database, url=HOOK + "/rel", enabled=False,
             send_test=True),
        task("Ensure webhook rel-hook, a no-op", "webhook", database=database, url=HOOK + "/rel", enabled=False,
             events=["branch.ready", "deploy_request.opened"]),
        task("Create webhook rel-gone", "webhook", database=database, url=HOOK + "/gone"),
        task("Delete webhook rel-gone", "webhook", database=database, url=HOOK + "/gone", state="absent"),
        task("List the webhooks", "webhook_info", database=database),
        task("Create password app " + REVEALS, "password", database=database, branch=BRANCH, name="app",
             role="reader", ttl=3600, cidrs=["10.0.0.0/8"]),
        task("Add a CIDR to password app", "password", database=database, branch=BRANCH, name="app",
             cidrs=["192.168.0.0/16", "10.0.0.0/8"]),
        task("Renew password app " + REVEALS, "password", database=database, branch=BRANCH, name="app", renew=True),
        task("Create password tmp", "password", no_log=True, database=database, branch=BRANCH, name="tmp"),
        task("Delete password tmp", "password", database=database, branch=BRANCH, name="tmp", state="absent"),
        task("Ensure password app, a no-op", "password", no_log=True, database=database, branch=BRANCH, name="app",
             role="reader", ttl=3600, cidrs=["10.0.0.0/8", "192.168.0.0/16"]),
        task("List the passwords of rel-a", "password_info", database=database, branch=BRANCH),
        task("Create role app " + REVEALS, "postgres_role", register="pg_app", name="app", ttl=3600,
             inherited_roles=["pg_read_all_data", "pg_write_all_data"], **POSTGRES),
        task("Renew role app " + REVEALS, "postgres_role", name="app", renew=True, **POSTGRES),
        task("Create role tmp", "postgres_role", no_log=True, name="tmp", **POSTGRES),
        task("Reset role tmp", "postgres_role", no_log=True, name="tmp", reset=True, **POSTGRES),
        task("Hand role tmp's objects to app", "postgres_role", name="tmp",
             reassign_objects_to="{{ pg_app.role.username }}", **POSTGRES),
        task("Delete role tmp, handing its objects to app", "postgres_role", name="tmp", state="absent",
             successor="{{ pg_app.role.id }}", **POSTGRES),
        task("Ensure role app, a no-op", "postgres_role", no_log=True, name="app", ttl=3600,
             inherited_roles=["pg_write_all_data", "pg_read_all_data"], **POSTGRES),
        task("List the roles of pgapp", "postgres_role_info", **POSTGRES),
        task("Restrict logins to pgapp", "postgres_ip_restriction", database=POSTGRES["database"],
             cidrs=["10.0.0.0/8", "127.0.0.1"], description="reliability"),
        task("Let role app in from another network", "postgres_ip_restriction", database=POSTGRES["database"],
             role="app", cidrs=["192.168.0.0/16"]),
        task("Ensure the restriction of pgapp, a no-op", "postgres_ip_restriction", database=POSTGRES["database"],
             cidrs=["127.0.0.1/32", "10.0.0.0/255.0.0.0"], description="reliability"),
        task("List the IP restrictions of pgapp", "postgres_ip_restriction_info", database=POSTGRES["database"]),
        task("Lift the restriction of role app", "postgres_ip_restriction", database=POSTGRES["database"],
             role="app", state="absent"),
        task("Throttle the migrations of app", "database_throttler", database=database, ratio=20),
        task("Throttle keyspace app harder", "database_throttler", database=database,
             keyspaces=[dict(name=database, ratio=40)]),
        task("Throttle keyspace app, a no-op", "database_throttler", database=database,
             keyspaces=[dict(name=database, ratio=40)]),
        task("Create keyspace rel-ks of two shards", "keyspace", database=database, branch="{{ world.branch }}",
             name="rel-ks", shards=2, cluster_size="PS_10"),
        task("Ensure keyspace rel-ks, a no-op", "keyspace", database=database, branch="{{ world.branch }}",
             name="rel-ks", shards=2, cluster_size="PS_10"),
        task("Declare the VSchema of rel-ks", "vschema", database=database, branch="{{ world.branch }}",
             keyspace="rel-ks", vschema=dict(sharded=True, vindexes=dict(hash=dict(type="hash")))),
        task("Declare it again as JSON text, a no-op", "vschema", database=database, branch="{{ world.branch }}",
             keyspace="rel-ks", vschema='{"vindexes": {"hash": {"type": "hash"}}, "sharded": true}'),
        task("Create keyspace rel-ks-gone", "keyspace", database=database, branch="{{ world.branch }}",
             name="rel-ks-gone", cluster_size="PS_10", wait=False),
        task("Delete keyspace rel-ks-gone", "keyspace", database=database, branch="{{ world.branch }}",
             name="rel-ks-gone", state="absent"),
        task("List the keyspaces of main", "keyspace_info", database=database, branch="{{ world.branch }}"),
        task("Read the parameters of pgapp", "postgres_parameter_info", namespace="pgconf", **POSTGRES),
        task("Read the extensions of pgapp", "postgres_extension_info", available=True, **POSTGRES),
        task("Create bouncer rel-pool", "postgres_bouncer", name="rel-pool", target="replica", replicas_per_cell=2,
             parameters=dict(default_pool_size=40), **POSTGRES),
        task("Resize bouncer rel-pool", "postgres_bouncer", name="rel-pool", size="PGB_10", **POSTGRES),
        task("Ensure bouncer rel-pool, a no-op", "postgres_bouncer", name="rel-pool", size="PGB_10",
             target="replica", parameters=dict(default_pool_size="40"), **POSTGRES),
        task("Create bouncer rel-gone", "postgres_bouncer", name="rel-gone", **POSTGRES),
        task("Delete bouncer rel-gone", "postgres_bouncer", name="rel-gone", state="absent", **POSTGRES),
        task("List the bouncers of pgapp", "postgres_bouncer_info", resize_requests=True, **POSTGRES),
        task("Declare traffic budget rel-budget", "traffic_budget", name="rel-budget", mode="warn", rate=20,
             rules=[dict(tags=["route=/reports"]), dict(kind="each", tags=["job"])], **POSTGRES),
        task("Enforce rel-budget and purge a rule", "traffic_budget", name="rel-budget", mode="enforce",
             rules=[dict(tags=["route=/reports"]), dict(fingerprint="7a3d2c1b0e9f8a76")], **POSTGRES),
        task("Ensure traffic budget rel-budget, a no-op", "traffic_budget", name="rel-budget", mode="enforce",
             rules=[dict(fingerprint="7a3d2c1b0e9f8a76"), dict(tags=["route = /reports"])], **POSTGRES),
        task("Create traffic budget rel-gone", "traffic_budget", name="rel-gone", **POSTGRES),
        task("Delete traffic budget rel-gone", "traffic_budget", name="rel-gone", state="absent", **POSTGRES),
        task("List the traffic budgets of a query pattern", "traffic_budget_info", fingerprint="7a3d2c1b0e9f8a76",
             **POSTGRES),
        task("List the change and resize requests of main", "branch_change_info", database=database,
             branch="{{ world.branch }}"),
        task("List the read-only regions", "read_only_region_info", database=database),
        task("List the open schema recommendations", "schema_recommendation_info", database=database, state="open"),
        task("Dismiss schema recommendation 1", "schema_recommendation", database=database, number=1,
             reason="Reports read users by id only"),
        task("Dismiss schema recommendation 1 again, a no-op", "schema_recommendation", database=database, number=1,
             reason="Reports read users by id only"),
        task("Read the maintenance schedules with their windows", "maintenance_schedule_info", database=database),
        task("Protect branch rel-a", "branch", database=database, name=BRANCH, deletion_protected=True),
        task("Read the schema of rel-schema", "branch_schema_info", database=database, branch=SCHEMA_BRANCH),
        task("Open the deploy request from rel-schema", "deploy_request", register="opened", database=database,
             branch=SCHEMA_BRANCH, into_branch="main", notes="Adds orders"),
        task("Approve the deploy request", "deploy_request_review", database=database,
             number="{{ opened.deploy_request.number }}"),
        task("Deploy it and skip the revert window", "deploy_request", database=database,
             number="{{ opened.deploy_request.number }}", state="deployed", revert_window="skip"),
        task("Deploy it again, a no-op", "deploy_request", database=database,
             number="{{ opened.deploy_request.number }}", state="deployed", revert_window="skip"),
        task("Read the deploy request", "deploy_request_info", database=database,
             number="{{ opened.deploy_request.number }}"),
        task("List the deploy requests", "deploy_request_info", database=database),
        task("Move orders into rel-ks, up to the primaries", "workflow", database=database, name="rel-move",
             source_keyspace=database, target_keyspace="rel-ks", tables=["orders"], phase="primaries_switched"),
        task("Move orders again, a no-op", "workflow", database=database, name="rel-move",
             phase="primaries_switched"),
        task("Cut over and complete rel-move", "workflow", database=database, name="rel-move", phase="completed"),
        task("List the workflows", "workflow_info", database=database),
        task("Read workflow rel-move", "workflow_info", database=database, name="rel-move"),
        task("Create team Reliability", "team", name=TEAM, description="Runs at night",
             members=[users[0]["email"], users[1]["id"]]),
        task("Change team Reliability", "team", team=TEAM_SLUG, description="Runs at night, with faults",
             members=[users[1]["id"], users[2]["email"]], purge_members=True),
        task("Ensure team Reliability, a no-op", "team", team=TEAM_SLUG, description="Runs at night, with faults",
             members=[users[2]["email"]]),
        task("Create team Doomed", "team", name="Doomed"),
        task("Delete team Doomed", "team", team="doomed", state="absent"),
        task("List the teams", "team_info"),
        task("Read team Reliability", "team_info", team=TEAM_SLUG),
        task("List the members of everyone", "team_member_info", team="{{ world.teams.large }}"),
        task("Create service token rel-ci " + REVEALS, "service_token", name="rel-ci", ttl=86400, accesses=[
            dict(database=database, access=["read_branch", "create_branch"]), dict(access=["read_organization"])]),
        task("Add an access to service token rel-ci", "service_token", name="rel-ci",
             accesses=[dict(database=database, access=["create_deploy_request"])]),
        task("Purge the accesses of service token rel-ci", "service_token", name="rel-ci", purge_accesses=True,
             accesses=[dict(database=database, access=["read_branch"])]),
        task("Ensure service token rel-ci, a no-op", "service_token", name="rel-ci", purge_accesses=True,
             accesses=[dict(database=database, access=["read_branch"])]),
        task("Create service token rel-tmp", "service_token", no_log=True, name="rel-tmp"),
        task("Delete service token rel-tmp", "service_token", name="rel-tmp", state="absent"),
        task("List the service tokens", "service_token_info"),
        task("Make a member an administrator", "organization_member", member=users[3]["email"], role="admin"),
        task("Make them a member again", "organization_member", member=users[3]["id"], role="member"),
        task("Ensure their role, a no-op", "organization_member", member=users[3]["email"], role="member"),
        task("Remove a member", "organization_member", member=users[4]["email"], state="absent"),
        task("List the members of the organization", "organization_member_info"),
        task("Set the organization's billing email and budget", "organization", billing_email="finance@acme.test",
             invoice_budget_amount=5000),
        task("Ensure them, a no-op", "organization", billing_email="finance@acme.test", invoice_budget_amount=5000),
        task("Read the organization and list every one", "organization_info", all_organizations=True),
        task("Read the day's changes to service tokens and members", "audit_log_info", since="1d",
             events=["service_token.*", "organization_membership.*"]),
        task("List the query-pattern reports", "query_pattern_info", database=database, branch="{{ world.branch }}"),
        task("The queries of main that used the most time in the last hour", "query_insights_info",
             database=database, branch="{{ world.branch }}", period="1h", sort="total_time", limit=20),
        task("Read the queries of main in the last hour", "branch_metrics_info", database=database,
             branch="{{ world.branch }}", metrics=["queries", "rows_read"], period="1h"),
        task("Read the table sizes of main", "branch_metrics_info", database=database, branch="{{ world.branch }}",
             scope="tables"),
        task("Make a query-pattern report and download it", "query_pattern_report", register="qp_report",
             database=database, branch="{{ world.branch }}", dest="{{ report_file }}"),
        task("Ensure the report's file, a no-op", "query_pattern_report", database=database,
             branch="{{ world.branch }}", dest="{{ report_file }}"),
        task("Delete the report", "query_pattern_report", database=database, branch="{{ world.branch }}",
             id="{{ qp_report.report.id }}", state="absent"),
        task("Exchange code 1 " + REVEALS, "token", register="issued", grant_type="authorization_code",
             code="{{ code_1 }}", redirect_uri=app % "redirect_uri"),
        task("Check the access token", "token_info", access_token="{{ issued.token.access_token }}"),
        task("Read the user with the access token", "user_info", access_token="{{ issued.token.access_token }}",
             **BEARER),
        task("Refresh the tokens " + REVEALS, "token", register="refreshed", grant_type="refresh_token",
             refresh_token="{{ issued.token.refresh_token }}"),
        task("Keep the access token valid, a no-op", "token", no_log=True, register="kept",
             grant_type="refresh_token", refresh_token="{{ refreshed.token.refresh_token }}",
             access_token="{{ refreshed.token.access_token }}", min_ttl=60),
        task("Exchange code 2 at the application endpoint", "token", no_log=True, register="application",
             grant_type="authorization_code", code="{{ code_2 }}", redirect_uri=app % "redirect_uri",
             application_id=app % "id", organization="{{ world.organization }}",
             service_token_id="{{ world.service_token.id }}", service_token="{{ world.service_token.token }}",
             api_url="{{ api_url }}"),
        task("Check the application's access token", "token_info",
             access_token="{{ application.token.access_token }}"),
        task("List the invoices since 2020", "invoice_info", since="2020-01-01"),
        task("List the OAuth applications and their tokens", "oauth_application_info"),
        task("Revoke the application endpoint's token", "oauth_application_token", application_id=app % "id",
             id="{{ application.token_record.id }}", state="absent"),
        task("Revoke it again, a no-op", "oauth_application_token", application_id=app % "id",
             id="{{ application.token_record.id }}", state="absent"),
    ]
    modules = sorted(set(key.rsplit(".", 1)[1] for entry in tasks for key in entry if key.startswith("planetscale.")))
    return play(tasks, defaults=module_defaults(**connection)), modules


def end_state(emulator):
    """The end state the suite compares: the organization's settings, branches, passwords, teams, deploy requests,
    tables, webhooks, service tokens, members, Postgres roles, IP restrictions, the throttler, bouncers, traffic
    budgets, the states of schema recommendations, keyspaces, their VSchema and workflows, without ids, times or
    secrets."""
    org, database = emulator.world["organization"], emulator.world["database"]
    base = "/organizations/%s/databases/%s" % (org, database)
    branches = sorted(emulator.list(base + "/branches"), key=lambda b: b["name"])
    passwords = {}
    for branch in branches:
        found = emulator.list("%s/branches/%s/passwords" % (base, branch["name"]))
        passwords[branch["name"]] = sorted(
            (p["name"], p["role"], p.get("replica"), p.get("ttl_seconds"), sorted(p.get("cidrs") or []))
            for p in found)
    teams = {}
    for team in emulator.list("/organizations/%s/teams" % org):
        members = emulator.list("/organizations/%s/teams/%s/members" % (org, team["slug"]))
        teams[team["slug"]] = dict(name=team["name"], description=team.get("description"),
                                   members=sorted(m["user"]["id"] for m in members))
    deploys = sorted((d["branch"], d["into_branch"], d["state"], d["deployment_state"], d.get("notes"))
                     for d in emulator.list(base + "/deploy-requests"))
    tables = sorted(table["name"] for table in emulator.api("GET", base + "/branches/main/schema")["data"])
    webhooks = sorted((h["url"], h["enabled"], sorted(h["events"])) for h in emulator.list(base + "/webhooks"))
    recommendations = sorted((r["number"], r["state"]) for r in emulator.list(base + "/schema-recommendations"))
    tokens = sorted((t.get("name") or "", sorted((a["resource_name"], a["access"])
                                                 for a in t.get("service_token_accesses") or []))
                    for t in emulator.list("/organizations/%s/service-tokens" % org))
    members = sorted((m["user"]["email"], m["role"]) for m in emulator.list("/organizations/%s/members" % org))
    postgres = emulator.world["postgres"]
    roles = sorted((r["name"], r.get("ttl"), sorted(r.get("inherited_roles") or []), r.get("default"))
                   for r in emulator.list("/organizations/%s/databases/%s/branches/%s/roles" % (
                       org, postgres["database"], postgres["branch"])))
    restrictions = sorted((c["role"], c["schema"], sorted(c["cidrs"]), c.get("description"))
                          for c in emulator.list("/organizations/%s/databases/%s/cidrs" % (org, postgres["database"])))
    throttler = emulator.api("GET", base + "/throttler")["configurations"]
    bouncers = sorted((b["name"], b["target"], b["sku"]["name"], b["replicas_per_cell"],
                       sorted((p["name"], p["value"]) for p in b["parameters"]))
                      for b in emulator.list("/organizations/%s/databases/%s/branches/%s/bouncers" % (
                          org, postgres["database"], postgres["branch"])))
    budgets = sorted((b["name"], b["mode"], b.get("rate"), sorted(
        (r["kind"], r.get("fingerprint") or "", sorted((t["key"], t["value"]) for t in r["tags"])) for r in b["rules"]))
        for b in emulator.list("/organizations/%s/databases/%s/branches/%s/traffic/budgets" % (
            org, postgres["database"], postgres["branch"])))
    keyspaces = sorted((k["name"], k["shards"], k["sharded"]) for k in emulator.list(base + "/branches/main/keyspaces"))
    vschemas = dict((k[0], json.loads(emulator.api("GET", base + "/branches/main/keyspaces/%s/vschema" % k[0])["raw"]
                                      or "{}")) for k in keyspaces)
    workflows = sorted((w["name"], w["state"]) for w in emulator.list(base + "/workflows"))
    settings = emulator.api("GET", "/organizations/%s" % org)
    organization = (settings["billing_email"], settings["idp_managed_roles"], settings["invoice_budget_amount"])
    return dict(organization=organization,
                branches=[(b["name"], b.get("parent_branch"), (b.get("region") or {}).get("slug"),
                           b.get("deletion_protected"), emulator.control("GET", "/branches/%s/%s/%s/capacity" % (
                               org, database, b["name"]))["vtgate_count"]) for b in branches],
                passwords=passwords, teams=teams, deploys=deploys, production_tables=tables, webhooks=webhooks,
                service_tokens=tokens, members=members, roles=roles, ip_restrictions=restrictions,
                throttler=sorted((c["keyspace_name"], c["ratio"]) for c in throttler), bouncers=bouncers,
                traffic_budgets=budgets, schema_recommendations=recommendations, keyspaces=keyspaces,
                vschemas=vschemas, workflows=workflows)
