"""The access table of the service-token guide against the platform's published API description.

Every operation of ../shared/reference/platform-openapi.json names, in its description's "Authorization" section, the
service-token accesses that may call it ("at least one of the following"). OPERATIONS says, for every module of
plugins/modules (and the inventory plugin), the operations it calls and, where an operation takes any one of
several accesses, the one (or, for a choice the task makes, such as a production branch, the ones) the guide names.
The test checks that OPERATIONS covers every module, that each operation is published (or known to be unpublished)
with those accesses, and that the guide's row of each module names exactly the union of its operations' accesses.
"""

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "docsite" / "rst" / "guide_service_tokens.rst"
SPEC = ROOT.parent / "shared" / "reference" / "platform-openapi.json"

# Operations the published description lacks (platform-openapi-next.json's x-not-in-published-spec): no access known.
UNPUBLISHED = {"GET /service-tokens/{}/access", "POST /service-tokens/{}/access", "DELETE /service-tokens/{}/access"}
# What talks to the OAuth server, not to the API: no service token at all.
OAUTH_SERVER = {"POST /oauth/token", "GET /oauth/token/info"}

B = "/databases/{}/branches/{}"
DATABASE = "GET /databases/{}"
BRANCH = "GET " + B

# module: {"METHOD /path below /organizations/{organization}": the accesses the guide names for it, or None where the
# operation takes one access only (that one) or none}
OPERATIONS = {
    "audit_log_info": {"GET /audit-log": None},
    "backup": {"GET %s/backups" % B: None, "GET %s/backups/{}" % B: None, "POST %s/backups" % B: None,
               "PATCH %s/backups/{}" % B: None,
               "DELETE %s/backups/{}" % B: ("delete_backups", "delete_production_branch_backups")},
    "backup_info": {"GET %s/backups" % B: None, "GET %s/backups/{}" % B: None},
    "backup_policy": {"GET /databases/{}/backup-policies": None, "POST /databases/{}/backup-policies": None,
                      "GET /databases/{}/backup-policies/{}": None,
                      "PATCH /databases/{}/backup-policies/{}": None, "DELETE /databases/{}/backup-policies/{}": None},
    "backup_policy_info": {"GET /databases/{}/backup-policies": None, "GET /databases/{}/backup-policies/{}": None},
    "branch": {BRANCH: ("create_branch",), "GET /databases/{}/branches": ("create_branch",),
               "POST /databases/{}/branches": ("create_branch",), "PATCH " + B: None, "DELETE " + B: None,
               "POST %s/promote" % B: ("promote_branches",), "POST %s/demote" % B: ("demote_branches",),
               "POST %s/safe-migrations" % B: None, "DELETE %s/safe-migrations" % B: None,
               "PUT %s/safe-migrations" % B: None,
               DATABASE: ("read_database",), "GET %s/schema/lint" % B: ("create_branch",),
               "GET /cluster-size-skus": None, "GET %s/parameters" % B: ("create_branch",),
               "GET %s/changes" % B: ("create_branch",), "GET %s/changes/{}" % B: ("create_branch",),
               "PATCH %s/changes" % B: None, "PATCH %s/cluster" % B: None,
               "GET %s/resizes" % B: ("create_branch",), "GET %s/resizes/{}" % B: ("create_branch",),
               "PUT %s/resizes" % B: None, "DELETE %s/resizes" % B: None},
    "branch_change_info": {"GET %s/changes" % B: ("read_branch",), "GET %s/changes/{}" % B: ("read_branch",),
                           "GET %s/resizes" % B: ("read_branch",), "GET %s/resizes/{}" % B: ("read_branch",)},
    "branch_info": {"GET /databases/{}/branches": ("read_branch",), BRANCH: ("read_branch",),
                    DATABASE: ("read_branch",)},
    "branch_schema_info": {"GET %s/schema" % B: ("read_branch",), "GET %s/schema/lint" % B: ("read_branch",)},
    "cluster_size_info": {"GET /cluster-size-skus": None},
    "database": {DATABASE: ("read_database",), "POST /databases": None, "PATCH /databases/{}": None,
                 "DELETE /databases/{}": None, BRANCH: ("read_branch",)},
    "database_info": {"GET /databases": ("read_database",), DATABASE: ("read_database",)},
    "database_throttler": {"GET /databases/{}/throttler": ("read_deploy_request",),
                           "PATCH /databases/{}/throttler": None},
    "deploy_request": {"GET /databases/{}/deploy-requests": None, "GET /databases/{}/deploy-requests/{}": None,
                       "POST /databases/{}/deploy-requests": None, "PATCH /databases/{}/deploy-requests/{}": None,
                       "PUT /databases/{}/deploy-requests/{}/auto-apply": None,
                       "PUT /databases/{}/deploy-requests/{}/auto-delete-branch": None,
                       "POST /databases/{}/deploy-requests/{}/deploy": None,
                       "POST /databases/{}/deploy-requests/{}/apply-deploy": None,
                       "POST /databases/{}/deploy-requests/{}/revert": None,
                       "POST /databases/{}/deploy-requests/{}/skip-revert": None,
                       "POST /databases/{}/deploy-requests/{}/cancel": None,
                       "GET /databases/{}/deploy-requests/{}/storage-check": None,
                       "GET /databases/{}/deploy-requests/{}/throttler": None,
                       "PATCH /databases/{}/deploy-requests/{}/throttler": None,
                       "POST /databases/{}/deploy-requests/{}/force-cutover": None,
                       "POST /databases/{}/deploy-requests/{}/complete-deploy": None,
                       DATABASE: ("read_database",), BRANCH: ("read_branch",)},
    "deploy_request_info": {"GET /databases/{}/deploy-requests": None, "GET /databases/{}/deploy-requests/{}": None,
                            "GET /databases/{}/deploy-requests/{}/deployment": None,
                            "GET /databases/{}/deploy-requests/{}/operations": None,
                            "GET /databases/{}/deploy-queue": None,
                            "GET /databases/{}/deploy-requests/{}/throttler": None,
                            "GET /databases/{}/deploy-requests/{}/storage-check": None,
                            DATABASE: ("read_deploy_request",)},
    "deploy_request_review": {"GET /databases/{}/deploy-requests/{}/reviews": None,
                              "POST /databases/{}/deploy-requests/{}/reviews": ("approve_deploy_request",
                                                                                "review_deploy_request")},
    "maintenance_schedule_info": {"GET /databases/{}/maintenance-schedules": None,
                                  "GET /databases/{}/maintenance-schedules/{}": None,
                                  "GET /databases/{}/maintenance-schedules/{}/windows": None},
    "organization": {"GET ": None, "PATCH ": None},
    "organization_info": {"GET ": None, "GET /organizations": None},
    "organization_member": {"GET /members": None, "PATCH /members/{}": None, "DELETE /members/{}": None,
                            "GET /service-tokens/{}": None},
    "organization_member_info": {"GET /members": None, "GET /members/{}": None},
    "password": {"GET %s/passwords" % B: ("connect_branch", "connect_production_branch"),
                 "GET %s/passwords/{}" % B: ("connect_branch", "connect_production_branch"),
                 "POST %s/passwords" % B: ("connect_branch", "connect_production_branch"),
                 "PATCH %s/passwords/{}" % B: ("connect_branch", "connect_production_branch"),
                 "POST %s/passwords/{}/renew" % B: ("connect_branch", "connect_production_branch"),
                 "DELETE %s/passwords/{}" % B: ("delete_branch_password", "delete_production_branch_password")},
    "password_info": {"GET %s/passwords" % B: ("read_branch",), "GET %s/passwords/{}" % B: ("read_branch",)},
    "keyspace": {"GET %s/keyspaces/{}" % B: None, "POST %s/keyspaces" % B: None,
                 "DELETE %s/keyspaces/{}" % B: ("delete_branch", "delete_production_branch"),
                 "GET %s/keyspaces/{}/resizes" % B: None, "GET %s/keyspaces/{}/resizes/{}" % B: None,
                 "PUT %s/keyspaces/{}/resizes" % B: None, "DELETE %s/keyspaces/{}/resizes" % B: None,
                 "GET %s/keyspaces/{}/rollout-status" % B: None, "GET /cluster-size-skus": None,
                 "PATCH %s/keyspaces/{}" % B: None},
    "keyspace_info": {"GET %s/keyspaces" % B: None, "GET %s/keyspaces/{}" % B: None,
                      "GET %s/keyspaces/{}/resizes" % B: None, "GET %s/keyspaces/{}/rollout-status" % B: None},
    "vschema": {"GET %s/keyspaces/{}/vschema" % B: ("read_branch",),
                "PATCH %s/keyspaces/{}/vschema" % B: ("write_branch_vschema", "write_production_branch_vschema")},
    "workflow": {"GET /databases/{}/workflows": None, "GET /databases/{}/workflows/{}": None,
                 "POST /databases/{}/workflows": None, "DELETE /databases/{}/workflows/{}": None,
                 "PATCH /databases/{}/workflows/{}/verify-data": None,
                 "PATCH /databases/{}/workflows/{}/switch-replicas": None,
                 "PATCH /databases/{}/workflows/{}/switch-primaries": None,
                 "PATCH /databases/{}/workflows/{}/reverse-traffic": None,
                 "PATCH /databases/{}/workflows/{}/cutover": None,
                 "PATCH /databases/{}/workflows/{}/reverse-cutover": None,
                 "PATCH /databases/{}/workflows/{}/complete": None,
                 "PATCH /databases/{}/workflows/{}/retry": None},
    "workflow_info": {"GET /databases/{}/workflows": None, "GET /databases/{}/workflows/{}": None},
    "postgres_bouncer": {"GET %s/bouncers/{}" % B: ("read_branch",), "POST %s/bouncers" % B: None,
                         "DELETE %s/bouncers/{}" % B: None, "GET %s/bouncers/{}/resizes" % B: ("read_branch",),
                         "PATCH %s/bouncers/{}/resizes" % B: None, "DELETE %s/bouncers/{}/resizes" % B: None},
    "postgres_bouncer_info": {"GET %s/bouncers" % B: ("read_branch",), "GET %s/bouncers/{}" % B: ("read_branch",),
                              "GET %s/bouncer-resizes" % B: ("read_branch",),
                              "GET %s/bouncers/{}/resizes" % B: ("read_branch",)},
    "postgres_extension_info": {"GET %s/extensions" % B: ("read_branch",), BRANCH: ("read_branch",),
                                DATABASE: ("read_database",)},
    "postgres_ip_restriction": {"GET /databases/{}/cidrs": ("read_database",), "POST /databases/{}/cidrs": None,
                                "PATCH /databases/{}/cidrs/{}": None, "DELETE /databases/{}/cidrs/{}": None,
                                "GET /databases/{}/cidrs/{}": ("read_database",),
                                DATABASE: ("read_database",), BRANCH: ("read_branch",)},
    "postgres_ip_restriction_info": {"GET /databases/{}/cidrs": ("read_database",),
                                     "GET /databases/{}/cidrs/{}": ("read_database",), DATABASE: ("read_database",),
                                     BRANCH: ("read_branch",)},
    "postgres_parameter_info": {"GET %s/parameters" % B: ("read_branch",), BRANCH: ("read_branch",),
                                DATABASE: ("read_database",)},
    "postgres_role": {"GET %s/roles" % B: ("read_branch",), "GET %s/roles/{}" % B: ("read_branch",),
                      "POST %s/roles" % B: ("create_branch_password", "create_production_branch_password"),
                      "PATCH %s/roles/{}" % B: ("create_branch_password", "create_production_branch_password"),
                      "POST %s/roles/{}/renew" % B: ("create_branch_password", "create_production_branch_password"),
                      "POST %s/roles/{}/reset" % B: ("delete_branch_password", "delete_production_branch_password"),
                      "POST %s/roles/reset-default" % B: ("delete_branch_password",
                                                          "delete_production_branch_password"),
                      "DELETE %s/roles/{}" % B: ("delete_branch_password", "delete_production_branch_password"),
                      "POST %s/roles/{}/reassign" % B: ("delete_branch_password", "delete_production_branch_password"),
                      BRANCH: ("read_branch",)},
    "postgres_role_info": {"GET %s/roles" % B: ("read_branch",), "GET %s/roles/default" % B: ("read_branch",),
                           BRANCH: ("read_branch",)},
    "query_pattern_info": {"GET %s/query-patterns" % B: None},
    "read_only_region_info": {"GET /databases/{}/read-only-regions": ("read_database", "read_branch")},
    # the public GET /regions (scope: public) takes no access and is sent without credentials: its key would be the
    # organization's "GET /regions" (read_organization)
    "region_info": {"GET /databases/{}/regions": ("read_database",), "GET /regions": None},
    "schema_recommendation": {"GET /databases/{}/schema-recommendations/{}": None,
                              "POST /databases/{}/schema-recommendations/{}/dismiss": None},
    "schema_recommendation_info": {"GET /databases/{}/schema-recommendations": None,
                                   "GET /databases/{}/schema-recommendations/{}": None},
    "service_token": {"GET /service-tokens": None, "GET /service-tokens/{}": None, "POST /service-tokens": None,
                      "DELETE /service-tokens/{}": None, "GET /service-tokens/{}/access": None,
                      "POST /service-tokens/{}/access": None, "DELETE /service-tokens/{}/access": None},
    "service_token_info": {"GET /service-tokens": None, "GET /service-tokens/{}": None,
                           "GET /service-tokens/{}/access": None},
    "team": {"GET /teams": None, "GET /teams/{}": None, "POST /teams": None, "PATCH /teams/{}": None,
             "DELETE /teams/{}": None, "GET /members": None, "POST /teams/{}/members": None,
             "GET /teams/{}/members/{}": None, "DELETE /teams/{}/members/{}": None},
    "team_info": {"GET /teams": None, "GET /teams/{}": None},
    "team_member_info": {"GET /teams/{}/members": None},
    "token": {"POST /oauth/token": None, "POST /oauth-applications/{}/token": None},
    "token_info": {"GET /oauth/token/info": None},
    "traffic_budget": {"GET %s/traffic/budgets" % B: ("read_branch",),
                       "GET %s/traffic/budgets/{}" % B: ("read_branch",),
                       "POST %s/traffic/budgets" % B: None, "PATCH %s/traffic/budgets/{}" % B: None,
                       "DELETE %s/traffic/budgets/{}" % B: None, "POST %s/traffic/budgets/{}/rules" % B: None,
                       "DELETE %s/traffic/budgets/{}/rules/{}" % B: None},
    "traffic_budget_info": {"GET %s/traffic/budgets" % B: ("read_branch",),
                            "GET %s/insights/{}/traffic/budgets" % B: ("read_branch",)},
    "user_info": {"GET /user": None},
    "webhook": {"GET /databases/{}/webhooks": None, "GET /databases/{}/webhooks/{}": None,
                "POST /databases/{}/webhooks": None, "PATCH /databases/{}/webhooks/{}": None,
                "DELETE /databases/{}/webhooks/{}": None, "POST /databases/{}/webhooks/{}/test": None},
    "webhook_info": {"GET /databases/{}/webhooks": None, "GET /databases/{}/webhooks/{}": None},
    "invoice_info": {"GET /invoices": None, "GET /invoices/{}": None, "GET /invoices/{}/line-items": None},
    "branch_metrics_info": {"GET %s/metrics" % B: ("read_branch",), "GET %s/metrics/instant" % B: ("read_branch",),
                            "GET %s/metrics/tablets" % B: ("read_branch",),
                            "GET %s/metrics/tablets-instant" % B: ("read_branch",),
                            "GET %s/metrics/tables" % B: ("read_branch",),
                            "GET %s/metrics/keyspace-tables" % B: ("read_branch",),
                            "GET %s/metrics/query" % B: ("read_branch",), "GET %s/metrics/tag" % B: ("read_branch",)},
    "oauth_application_info": {"GET /oauth-applications": None, "GET /oauth-applications/{}": None,
                               "GET /oauth-applications/{}/tokens": None},
    "oauth_application_token": {"GET /oauth-applications/{}": None, "GET /oauth-applications/{}/tokens/{}": None,
                                "DELETE /oauth-applications/{}/tokens/{}": None},
    "query_pattern_report": {"POST %s/query-patterns" % B: None, "GET %s/query-patterns" % B: None,
                             "GET %s/query-patterns/{}" % B: None, "GET %s/query-patterns/{}/download" % B: None,
                             "DELETE %s/query-patterns/{}" % B: None},
    "query_insights_info": {"GET %s/insights" % B: ("read_database",), "GET %s/insights/{}" % B: ("read_database",),
                            "GET %s/insights/{}/summary" % B: ("read_database",),
                            "GET %s/insights/queries/{}" % B: ("read_database",),
                            "GET %s/insights/errors" % B: ("read_database",),
                            "GET %s/insights/errors/{}" % B: ("read_database",),
                            "GET %s/insights/anomalies" % B: ("read_database",),
                            "GET %s/insights/anomalies/{}" % B: ("read_database",),
                            "GET %s/insights/tags" % B: ("read_database",),
                            "GET %s/insights/tags/summaries" % B: ("read_database",),
                            "GET %s/insights/tags/{}" % B: ("read_database",)},
    "branches#inventory": {"GET /databases": ("read_branch",), "GET /databases/{}/branches": ("read_branch",),
                           "GET %s/roles/default" % B: ("read_branch",)},
}
ABOVE_ORGANIZATIONS = {"GET /user", "GET /organizations"}  # operations whose path is not below /organizations/{organization}


def published():
    """METHOD /template ({} for every parameter): the service-token accesses its description names (() for none)."""
    if not SPEC.is_file():
        pytest.skip("the platform's published OpenAPI (../shared/reference/platform-openapi.json) is not beside the "
                    "project")
    found = {}
    for template, operations in json.loads(SPEC.read_text())["paths"].items():
        for method, operation in operations.items():
            section = re.search(r"\*\*Service Token Accesses\*\*\s*\n(.*?)(?:\n\s*\n|\Z)",
                                operation.get("description") or "", re.S)
            found["%s %s" % (method.upper(), re.sub(r"\{[^}]*\}", "{}", template))] = tuple(
                re.findall(r"`(\w+)`", section.group(1))) if section else ()
    return found


def key(operation):
    """The published key of an operation of OPERATIONS."""
    method, path = operation.split(" ", 1)
    if operation in ABOVE_ORGANIZATIONS:
        return operation
    return "%s /organizations/{}%s" % (method, path)


def guide_rows(known):
    """module (or name#inventory): the accesses its row of the guide's table names (the words in ``...`` of its
    Accesses cell that are accesses, of known; the others name options and values)."""
    text = GUIDE.read_text()
    table = text[text.index(".. list-table::", text.index("The accesses each module needs")):]
    table = table.split("\n\nThe roles")[0]
    rows = {}
    for row in re.split(r"\n  \* - ", table)[2:]:
        cells = re.split(r"\n    - ", row)
        names = re.findall(r"planetscale\.cloud\.(\w+)#(module|inventory)", cells[0])
        accesses = set(re.findall(r"``([a-z_]+)``", cells[1] if len(cells) > 1 else "")) & known
        for name, kind in names:
            rows[name if kind == "module" else name + "#inventory"] = accesses
    return rows


def expected(spec, module):
    """The accesses the guide's row of the module must name, and the problems of OPERATIONS against spec."""
    names, problems = set(), []
    for operation, chosen in OPERATIONS[module].items():
        if operation in UNPUBLISHED or operation in OAUTH_SERVER:
            if chosen:
                problems.append("%s: %s is not in the published description: no access to name" % (module, operation))
            continue
        published_key = key(operation)
        if published_key not in spec:
            problems.append("%s: %s is not an operation of the published description" % (module, operation))
            continue
        accepted = spec[published_key]
        if chosen is None:
            if len(accepted) > 1:
                problems.append("%s: %s takes any of %s: say which the guide names" % (module, operation, accepted))
            names.update(accepted)
            continue
        wrong = [name for name in chosen if name not in accepted]
        if wrong:
            problems.append("%s: %s takes %s, not %s" % (module, operation, accepted or "no service token access",
                                                         wrong))
        names.update(chosen)
    return names, problems


def test_every_module_says_which_operations_it_calls():
    modules = set(path.stem for path in (ROOT / "plugins" / "modules").glob("*.py") if path.stem != "__init__")
    listed = set(name for name in OPERATIONS if "#" not in name)
    assert sorted(modules - listed) == [], "add the operations these modules call to OPERATIONS"
    assert sorted(listed - modules) == [], "OPERATIONS names modules that do not exist"


def test_each_operation_is_published_with_the_accesses_named_for_it():
    spec = published()
    problems = [problem for module in sorted(OPERATIONS) for problem in expected(spec, module)[1]]
    assert problems == []


def test_the_guide_names_for_every_module_exactly_the_accesses_of_its_operations():
    spec = published()
    rows = guide_rows(set(name for names in spec.values() for name in names))
    assert sorted(set(OPERATIONS) - set(rows)) == [], "modules without a row in the guide's access table"
    assert sorted(set(rows) - set(OPERATIONS)) == [], "rows of the guide's access table for no module"
    wrong = dict((module, dict(guide=sorted(rows[module]), published=sorted(expected(spec, module)[0])))
                 for module in sorted(OPERATIONS) if rows[module] != expected(spec, module)[0])
    assert wrong == {}
