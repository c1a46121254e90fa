"""Deploy requests: the state machine on the emulator clock (every path), the production rules,
approvals, the list filters, and the simple endpoints (throttler, storage check, force cutover).

Timings come from the settings (deploy_check_delay 1 s, deploy_step_delay 1 s, revert_window 1800 s
by default); the tests move the emulator clock. Every answer is validated against the published
OpenAPI after the test (conftest.openapi_check)."""

import pytest

from emulator.__main__ import parse_args, settings_of

from .conftest import DB, MAIN

DRS = f"{DB}/deploy-requests"
ADD_TABLE = "CREATE TABLE `posts` (`id` bigint NOT NULL AUTO_INCREMENT, `title` varchar(255), PRIMARY KEY (`id`))"
KEYLESS = "CREATE TABLE `events` (`name` varchar(64), `at` datetime)"


def error_of(response, status, code="unprocessable"):
    assert response.status_code == status, response.text
    body = response.json()
    assert body["code"] == code and body["message"], body
    return body["message"]


def settings(api, **values):
    response = api.control("POST", "/settings", json=values)
    assert response.status_code == 200, response.text
    return response.json()


def ddl(api, branch, *statements):
    response = api.control("POST", f"/branches/acme/app/{branch}/ddl", json={"statements": list(statements)})
    assert response.status_code == 200, response.text


def dev_branch(api, name="dev", *statements):
    assert api.post(f"{DB}/branches", json={"name": name, "parent_branch": "main"}).status_code == 201
    api.advance(settings(api)["ready_delay"])
    if statements:
        ddl(api, name, *statements)


def open_request(api, branch="dev", status=201, **body):
    response = api.post(DRS, json={"branch": branch, "into_branch": "main", **body})
    assert response.status_code == status, response.text
    return response.json()


def get(api, number):
    response = api.get(f"{DRS}/{number}")
    assert response.status_code == 200, response.text
    return response.json()


def act(api, number, action, status=200, method="POST", **kwargs):
    response = api.call(method, f"{DRS}/{number}/{action}", **kwargs)
    assert response.status_code == status, response.text
    return response.json()


def main_tables(api):
    return [table["name"] for table in api.get(f"{MAIN}/schema").json()["data"]]


def ready_request(api, *statements, **body):
    """A development branch with the statements (a new table by default) and its request, checked."""
    dev_branch(api, "dev", *(statements or (ADD_TABLE,)))
    number = open_request(api, **body)["number"]
    api.advance(1)
    assert get(api, number)["deployment_state"] == "ready"
    return number


def states_while_advancing(api, number, steps, seconds=1):
    seen = []
    for _ in range(steps):
        api.advance(seconds)
        seen.append(get(api, number)["deployment_state"])
    return seen


# ---------------------------------------------------------------- the deploy check


def test_a_new_request_is_pending_until_its_check(api):
    dev_branch(api, "dev", ADD_TABLE)
    created = open_request(api, notes="Add posts")
    assert (created["number"], created["state"], created["deployment_state"]) == (1, "open", "pending")
    assert created["deployment"]["deployable"] is False and created["notes"] == "Add posts"
    assert created["html_body"] == "<p>Add posts</p>" and created["branch"] == "dev"
    api.advance(0.5)
    assert get(api, 1)["deployment_state"] == "pending"
    api.advance(0.5)
    checked = get(api, 1)
    assert checked["deployment_state"] == checked["deployment"]["state"] == "ready"
    assert checked["deployment"]["deployable"] is True and checked["deployment"]["lint_errors"] == []
    operations = checked["deployment"]["deploy_operations"]
    assert [(op["table_name"], op["operation_name"], op["state"]) for op in operations] == [
        ("posts", "CREATE", "pending")]
    assert operations[0]["ddl_statement"].startswith("CREATE TABLE `posts`")


def test_no_schema_difference_gives_no_changes(api):
    dev_branch(api)
    number = open_request(api)["number"]
    api.advance(1)
    body = get(api, number)
    assert body["deployment_state"] == "no_changes" and body["deployment"]["deployable"] is False
    assert "no schema changes" in error_of(api.post(f"{DRS}/{number}/deploy"), 422)


def test_a_table_without_a_unique_key_is_an_error_with_lint_errors(api):
    dev_branch(api, "dev", KEYLESS, ADD_TABLE)
    number = open_request(api)["number"]
    api.advance(1)
    deployment = get(api, number)["deployment"]
    assert deployment["state"] == "error" and deployment["deployable"] is False
    assert [(e["table_name"], e["lint_error"], e["subject_type"]) for e in deployment["lint_errors"]] == [
        ("events", "NO_UNIQUE_KEY", "table")]
    assert deployment["lint_errors"][0]["docs_url"].startswith("https://")
    assert "events" in deployment["deploy_check_errors"]
    assert "NO_UNIQUE_KEY" in error_of(api.post(f"{DRS}/{number}/deploy"), 422)


def test_a_schema_change_on_the_branch_checks_the_request_again(api):
    dev_branch(api)
    number = open_request(api)["number"]
    api.advance(1)
    assert get(api, number)["deployment_state"] == "no_changes"
    ddl(api, "dev", ADD_TABLE)
    assert get(api, number)["deployment_state"] == "pending"
    api.advance(1)
    assert get(api, number)["deployment_state"] == "ready"


def test_the_timings_from_the_command_line():
    chosen = settings_of(parse_args(["--deploy-check-delay", "0.2", "--deploy-step-delay", "0.3",
                                     "--revert-window", "60"]))
    assert (chosen.deploy_check_delay, chosen.deploy_step_delay, chosen.revert_window) == (0.2, 0.3, 60)
    default = settings_of(parse_args([]))
    assert (default.deploy_check_delay, default.deploy_step_delay, default.revert_window) == (1, 1, 1800)


def test_the_check_delay_is_a_setting(api):
    settings(api, deploy_check_delay=10)
    dev_branch(api, "dev", ADD_TABLE)
    number = open_request(api)["number"]
    api.advance(9)
    assert get(api, number)["deployment_state"] == "pending"
    api.advance(1)
    assert get(api, number)["deployment_state"] == "ready"


# ---------------------------------------------------------------- deploying


def test_deploy_runs_to_the_revert_window_then_complete(api):
    number = ready_request(api)
    queued = act(api, number, "deploy")
    assert queued["deployment_state"] == "queued" and queued["deployment"]["queued_at"]
    queue = api.get(f"{DB}/deploy-queue").json()["data"]
    assert [d["deploy_request_number"] for d in queue] == [number]
    assert states_while_advancing(api, number, 2) == ["in_progress", "complete_pending_revert"]
    deployed = get(api, number)
    assert deployed["state"] == "closed" and deployed["deployed_at"] and deployed["closed_at"]
    assert "posts" in main_tables(api)  # live on production
    assert all(op["state"] == "complete" for op in deployed["deployment"]["deploy_operations"])
    assert api.get(f"{DB}/deploy-queue").json()["data"] == []
    api.advance(1799)
    assert get(api, number)["deployment_state"] == "complete_pending_revert"
    api.advance(1)
    assert get(api, number)["deployment_state"] == "complete"
    error_of(api.post(f"{DRS}/{number}/deploy"), 422)  # closed: not deployed twice


def test_a_deploy_twice_is_refused(api):
    number = ready_request(api)
    act(api, number, "deploy")
    assert "queued" in error_of(api.post(f"{DRS}/{number}/deploy"), 422)


def test_a_gated_deploy_waits_at_pending_cutover_until_apply_deploy(api):
    number = ready_request(api, auto_cutover=False)
    act(api, number, "deploy")
    assert states_while_advancing(api, number, 2) == ["in_progress", "pending_cutover"]
    api.advance(3600)
    waiting = get(api, number)
    assert waiting["deployment_state"] == "pending_cutover" and waiting["deployment"]["ready_to_cutover_at"]
    assert "posts" not in main_tables(api)
    assert act(api, number, "apply-deploy")["deployment_state"] == "in_progress_cutover"
    assert states_while_advancing(api, number, 1) == ["complete_pending_revert"]
    assert "posts" in main_tables(api)
    assert get(api, number)["deployment"]["cutover_actor"]["id"] == api.world["user"]["id"]


def test_apply_deploy_outside_pending_cutover_is_refused(api):
    number = ready_request(api)
    assert "ready" in error_of(api.post(f"{DRS}/{number}/apply-deploy"), 422)


def test_auto_apply_turned_on_at_pending_cutover_cuts_over(api):
    number = ready_request(api, auto_cutover=False)
    act(api, number, "deploy")
    api.advance(2)
    applied = act(api, number, "auto-apply", method="PUT", json={"enable": True})
    assert applied["deployment"]["auto_cutover"] is True and applied["deployment_state"] == "in_progress_cutover"
    assert states_while_advancing(api, number, 1) == ["complete_pending_revert"]


def test_auto_apply_off_gates_a_deploy_not_yet_cut_over(api):
    number = ready_request(api)
    assert act(api, number, "auto-apply", method="PUT", json={"enable": False})["deployment"]["auto_cutover"] is False
    act(api, number, "deploy")
    assert states_while_advancing(api, number, 3) == ["in_progress", "pending_cutover", "pending_cutover"]


def test_skip_revert_ends_the_window(api):
    number = ready_request(api)
    error_of(api.post(f"{DRS}/{number}/skip-revert"), 422)  # no window yet
    act(api, number, "deploy")
    api.advance(2)
    assert act(api, number, "skip-revert")["deployment_state"] == "complete"
    assert "posts" in main_tables(api)


def test_revert_puts_the_schema_back(api):
    number = ready_request(api, ADD_TABLE, "ALTER TABLE users ADD COLUMN nick varchar(32)")
    before = api.get(f"{MAIN}/schema").json()["data"]
    act(api, number, "deploy")
    api.advance(2)
    assert set(main_tables(api)) == {"posts", "users"}
    assert act(api, number, "revert")["deployment_state"] == "in_progress_revert"
    assert states_while_advancing(api, number, 1) == ["complete_revert"]
    assert api.get(f"{MAIN}/schema").json()["data"] == before
    error_of(api.post(f"{DRS}/{number}/revert"), 422)


def test_the_revert_window_is_a_setting(api):
    settings(api, revert_window=5)
    number = ready_request(api)
    act(api, number, "deploy")
    # deployed 2 s after the deploy (two steps), complete 5 s later
    assert states_while_advancing(api, number, 4, seconds=2) == ["complete_pending_revert", "complete_pending_revert",
                                                                 "complete_pending_revert", "complete"]


def test_the_step_delay_is_a_setting(api):
    settings(api, deploy_step_delay=5)
    number = ready_request(api)
    act(api, number, "deploy")
    assert states_while_advancing(api, number, 4, seconds=2.5) == ["queued", "in_progress", "in_progress",
                                                                   "complete_pending_revert"]


def test_instant_ddl_skips_the_revert_window(api):
    number = ready_request(api, "ALTER TABLE users ADD COLUMN nick varchar(32)")
    assert get(api, number)["deployment"]["instant_ddl_eligible"] is True
    assert act(api, number, "deploy", json={"instant_ddl": True})["deployment"]["instant_ddl"] is True
    assert states_while_advancing(api, number, 2) == ["in_progress", "complete"]


def test_instant_ddl_needs_an_eligible_change(api):
    number = ready_request(api)  # a new table: not instant
    assert "instant" in error_of(api.post(f"{DRS}/{number}/deploy", json={"instant_ddl": True}), 422)
    error_of(api.post(f"{DRS}/{number}/deploy", json={"instant_ddl": "yes"}), 422, "invalid_params")


# ---------------------------------------------------------------- cancel and failures


def test_cancel_a_queued_deploy(api):
    number = ready_request(api)
    act(api, number, "deploy")
    cancelled = act(api, number, "cancel")
    assert cancelled["deployment_state"] == "cancelled"
    assert cancelled["deployment"]["cancelled_actor"]["id"] == api.world["user"]["id"]
    api.advance(10)
    assert get(api, number)["deployment_state"] == "cancelled" and "posts" not in main_tables(api)
    assert act(api, number, "deploy")["deployment_state"] == "queued"  # deployable again


def test_cancel_a_running_deploy(api):
    number = ready_request(api, auto_cutover=False)
    act(api, number, "deploy")
    api.advance(2)
    assert act(api, number, "cancel")["deployment_state"] == "in_progress_cancel"
    assert states_while_advancing(api, number, 1) == ["complete_cancel"]
    assert "posts" not in main_tables(api)
    assert get(api, number)["state"] == "open"


def test_cancel_when_nothing_runs_is_refused(api):
    number = ready_request(api)
    assert "ready" in error_of(api.post(f"{DRS}/{number}/cancel"), 422)


@pytest.mark.parametrize("fail_state", ["complete_error", "error", "cancelled"])
def test_deploy_fail_state_makes_deploys_started_while_set_fail(api, fail_state):
    number = ready_request(api)
    settings(api, deploy_fail_state=fail_state)
    act(api, number, "deploy")
    settings(api, deploy_fail_state=None)  # applies to the deploys started while it was set
    assert states_while_advancing(api, number, 3) == ["in_progress", fail_state, fail_state]
    failed = get(api, number)
    assert "posts" not in main_tables(api) and failed["deployed_at"] is None and failed["state"] == "open"
    if fail_state != "cancelled":
        assert all(op["state"] == "error" and op["deploy_errors"] for op in failed["deployment"]["deploy_operations"])


def test_a_deploy_queued_before_the_setting_succeeds(api):
    number = ready_request(api)
    act(api, number, "deploy")
    settings(api, deploy_fail_state="complete_error")
    assert states_while_advancing(api, number, 2) == ["in_progress", "complete_pending_revert"]


def test_complete_deploy_finishes_an_errored_deploy(api):
    number = ready_request(api)
    error_of(api.post(f"{DRS}/{number}/complete-deploy"), 422)
    settings(api, deploy_fail_state="complete_error")
    act(api, number, "deploy")
    api.advance(2)
    assert act(api, number, "complete-deploy")["deployment_state"] == "complete"
    assert "posts" in main_tables(api)


def test_a_revert_started_with_complete_revert_error_fails(api):
    number = ready_request(api)
    act(api, number, "deploy")
    api.advance(2)
    settings(api, deploy_fail_state="complete_revert_error")
    act(api, number, "revert")
    assert states_while_advancing(api, number, 1) == ["complete_revert_error"]
    assert "posts" in main_tables(api)  # nothing put back


def test_deploy_fail_state_takes_known_states_only(api):
    assert api.control("POST", "/settings", json={"deploy_fail_state": "complete"}).status_code == 422
    assert settings(api)["deploy_fail_state"] is None


# ---------------------------------------------------------------- production rules


def test_a_request_into_a_development_branch_is_refused(api):
    dev_branch(api, "dev", ADD_TABLE)
    dev_branch(api, "other")
    response = api.post(DRS, json={"branch": "dev", "into_branch": "other"})
    assert "not a production branch" in error_of(response, 422)


def test_a_request_from_a_production_branch_is_refused(api):
    dev_branch(api, "staging")
    api.post(f"{DB}/branches/staging/promote")
    assert "production branch" in error_of(api.post(DRS, json={"branch": "staging", "into_branch": "main"}), 422)


def test_a_promoted_branch_takes_requests(api):
    dev_branch(api, "dev", ADD_TABLE)
    dev_branch(api, "staging")
    api.post(f"{DB}/branches/staging/promote")
    assert api.post(DRS, json={"branch": "dev", "into_branch": "staging"}).status_code == 201


def test_create_needs_known_ready_branches_and_one_open_request_per_branch(api):
    error_of(api.post(DRS, json={"branch": "nope", "into_branch": "main"}), 422)
    error_of(api.post(DRS, json={"branch": "main", "into_branch": "main"}), 422)
    error_of(api.post(DRS, json={"branch": "main"}), 422, "invalid_params")
    assert api.post(f"{DB}/branches", json={"name": "slow", "parent_branch": "main"}).status_code == 201
    assert "not ready" in error_of(api.post(DRS, json={"branch": "slow", "into_branch": "main"}), 422)
    dev_branch(api, "dev", ADD_TABLE)
    open_request(api)
    assert "#1" in error_of(api.post(DRS, json={"branch": "dev", "into_branch": "main"}), 422)


def test_deploy_into_a_branch_demoted_since_is_refused(api):
    dev_branch(api, "dev", ADD_TABLE)
    dev_branch(api, "staging")
    api.post(f"{DB}/branches/staging/promote")
    number = api.post(DRS, json={"branch": "dev", "into_branch": "staging"}).json()["number"]
    api.advance(1)
    api.post(f"{DB}/branches/staging/demote")
    assert "not a production branch" in error_of(api.post(f"{DRS}/{number}/deploy"), 422)


# ---------------------------------------------------------------- approvals


def test_approval_required_blocks_deploy_until_an_approving_review(api):
    number = ready_request(api)
    control = api.control("POST", "/databases/acme/app", json={"require_approval_for_deploy": True})
    assert control.status_code == 200 and control.json() == {"require_approval_for_deploy": True}
    assert api.get(DB).json()["require_approval_for_deploy"] is True
    assert "approved" in error_of(api.post(f"{DRS}/{number}/deploy"), 422)
    comment = act(api, number, "reviews", 201, json={"state": "commented", "body": "Looks fine"})
    assert (comment["state"], comment["body"], comment["html_body"]) == ("commented", "Looks fine", "<p>Looks fine</p>")
    error_of(api.post(f"{DRS}/{number}/deploy"), 422)
    assert get(api, number)["approved"] is False
    approval = act(api, number, "reviews", 201, json={"state": "approved"})
    assert approval["actor"]["id"] == api.world["user"]["id"]
    assert get(api, number)["approved"] is True and get(api, number)["num_comments"] == 2
    reviews = api.get(f"{DRS}/{number}/reviews").json()["data"]
    assert [r["state"] for r in reviews] == ["commented", "approved"]
    assert act(api, number, "deploy")["deployment_state"] == "queued"


def test_without_the_database_setting_no_approval_is_needed(api):
    number = ready_request(api)
    assert act(api, number, "deploy")["deployment_state"] == "queued"


def test_a_review_is_a_comment_by_default_and_takes_known_states(api):
    dev_branch(api, "dev", ADD_TABLE)
    number = open_request(api)["number"]
    assert act(api, number, "reviews", 201)["state"] == "commented"
    error_of(api.post(f"{DRS}/{number}/reviews", json={"state": "rejected"}), 422, "invalid_params")


# ---------------------------------------------------------------- closing, auto-delete, lists


def test_close_an_open_request(api):
    dev_branch(api, "dev", ADD_TABLE)
    number = open_request(api)["number"]
    closed = api.patch(f"{DRS}/{number}", json={"state": "closed"})
    assert closed.status_code == 200 and closed.json()["state"] == "closed" and closed.json()["closed_at"]
    assert closed.json()["closed_by"]["id"] == api.world["user"]["id"]
    assert api.patch(f"{DRS}/{number}", json={"state": "closed"}).json()["closed_at"] == closed.json()["closed_at"]
    api.advance(1)
    assert "closed" in error_of(api.post(f"{DRS}/{number}/deploy"), 422)
    assert open_request(api)["number"] == 2  # the branch may have a new one
    error_of(api.patch(f"{DRS}/{number}", json={"state": "open"}), 422, "invalid_params")


def test_a_deploying_request_cannot_be_closed(api):
    number = ready_request(api)
    act(api, number, "deploy")
    assert "cancel" in error_of(api.patch(f"{DRS}/{number}", json={"state": "closed"}), 422)


def test_auto_delete_branch_deletes_it_once_the_deploy_is_complete(api):
    number = ready_request(api, auto_delete_branch=True)
    assert get(api, number)["deployment"]["auto_delete_branch"] is True
    act(api, number, "deploy")
    api.advance(2)
    assert api.get(f"{DB}/branches/dev").status_code == 200  # kept through the revert window
    act(api, number, "skip-revert")
    assert api.get(f"{DB}/branches/dev").status_code == 404
    body = get(api, number)
    assert body["branch_deleted"] is True and body["branch_deleted_at"] and body["branch_deleted_by"]


def test_auto_delete_branch_can_be_turned_on_later(api):
    number = ready_request(api)
    assert act(api, number, "auto-delete-branch", method="PUT", json={"enable": True})["deployment"][
        "auto_delete_branch"] is True
    act(api, number, "deploy")
    api.advance(1802)
    assert api.get(f"{DB}/branches/dev").status_code == 404


def test_deleting_the_branch_closes_its_open_request(api):
    dev_branch(api, "dev", ADD_TABLE)
    number = open_request(api)["number"]
    assert api.delete(f"{DB}/branches/dev").status_code == 204
    body = get(api, number)
    assert body["state"] == "closed" and body["branch_deleted"] is True


def test_list_filters_and_pages(api):
    dev_branch(api, "one", ADD_TABLE)
    dev_branch(api, "two", "ALTER TABLE users ADD COLUMN nick varchar(32)")
    dev_branch(api, "three", KEYLESS)
    first = open_request(api, "one")["number"]
    second = open_request(api, "two")["number"]
    third = open_request(api, "three")["number"]
    api.advance(1)
    act(api, first, "deploy")
    api.advance(2)
    api.patch(f"{DRS}/{third}", json={"state": "closed"})

    def numbers(**params):
        response = api.get(DRS, params=params)
        assert response.status_code == 200, response.text
        return [dr["number"] for dr in response.json()["data"]]

    assert numbers() == [third, second, first]  # newest first
    assert numbers(state="open") == [second]
    assert numbers(state="closed") == [third, first]
    assert numbers(state="deployed") == [first]
    assert numbers(branch="two") == [second] and numbers(into_branch="main") == [third, second, first]
    assert numbers(into_branch="other") == []
    page = api.get(DRS, params={"per_page": 2}).json()
    assert page["total_count"] == 3 and page["next_page"] == 2 and len(page["data"]) == 2
    error_of(api.get(DRS, params={"state": "merged"}), 422, "invalid_params")


def test_reads_of_one_request(api):
    number = ready_request(api, ADD_TABLE, "ALTER TABLE users DROP COLUMN created_at")
    deployment = api.get(f"{DRS}/{number}/deployment").json()
    assert deployment["deploy_request_number"] == number and deployment["state"] == "ready"
    operations = api.get(f"{DRS}/{number}/operations").json()["data"]
    assert [(op["table_name"], op["operation_name"], op["can_drop_data"]) for op in operations] == [
        ("posts", "CREATE", False), ("users", "ALTER", True)]
    assert operations[1]["ddl_statement"] == "ALTER TABLE `users` DROP COLUMN `created_at`"
    assert api.get(f"{DRS}/{number}/operations", params={"per_page": 1}).json()["next_page"] == 2
    for path in ("", "/deployment", "/operations", "/reviews", "/throttler", "/storage-check"):
        error_of(api.get(f"{DRS}/99{path}"), 404, "not_found")


def test_throttler_storage_check_and_force_cutover(api):
    number = ready_request(api, auto_cutover=False)
    throttler = api.get(f"{DRS}/{number}/throttler").json()
    assert throttler["keyspaces"] == ["app"] and throttler["configurations"] == [{"keyspace_name": "app", "ratio": 0}]
    changed = api.patch(f"{DRS}/{number}/throttler", json={"ratio": 40}).json()
    assert changed["configurations"][0]["ratio"] == 40
    per_keyspace = {"configurations": [{"keyspace_name": "app", "ratio": 10}]}
    assert api.patch(f"{DRS}/{number}/throttler", json=per_keyspace).json()["configurations"][0]["ratio"] == 10
    error_of(api.patch(f"{DRS}/{number}/throttler", json={"ratio": 99}), 422, "invalid_params")
    error_of(api.post(f"{DRS}/{number}/force-cutover"), 422)  # nothing running
    act(api, number, "deploy")
    api.advance(2)
    assert act(api, number, "force-cutover")["deployment"]["force_cutover_requested_at"]


def test_the_storage_check_says_what_a_deploy_needs_and_what_is_left(api):
    number = ready_request(api)
    storage = api.get(f"{DRS}/{number}/storage-check").json()
    assert (storage["enough_storage"], storage["upgradeable"], storage["storage_bytes_needed"]) == (True, True, 2**20)
    settings(api, deploy_storage_remaining=1000)
    storage = api.get(f"{DRS}/{number}/storage-check").json()
    shard = storage["storage_report"]["app"]["-"]
    assert storage["enough_storage"] is False and shard["has_enough"] is False
    assert (shard["remaining"], shard["capacity"], shard["storage_needed"]) == (1000, 2**30 + 1000, 2**20)


@pytest.mark.parametrize("gated", [False, True], ids=["auto-cutover", "gated"])
def test_a_blocked_cutover_waits_until_it_is_forced(api, gated):
    number = ready_request(api, auto_cutover=not gated)
    settings(api, cutover_blocked=True)
    act(api, number, "deploy")
    api.advance(2)
    if gated:
        assert get(api, number)["deployment_state"] == "pending_cutover"
        act(api, number, "apply-deploy")
    api.advance(60)
    assert get(api, number)["deployment_state"] == "in_progress_cutover"
    forced = act(api, number, "force-cutover")
    assert forced["deployment_state"] == "in_progress_cutover" and forced["deployment"]["force_cutover_requested_at"]
    api.advance(1)
    assert get(api, number)["deployment_state"] == "complete_pending_revert"
    assert "posts" in main_tables(api)


def test_a_blocked_cutover_goes_on_once_the_lock_is_gone(api):
    number = ready_request(api)
    settings(api, cutover_blocked=True)
    act(api, number, "deploy")
    api.advance(30)
    assert get(api, number)["deployment_state"] == "in_progress_cutover"
    settings(api, cutover_blocked=False)
    assert get(api, number)["deployment_state"] == "in_progress_cutover"
    api.advance(1)
    assert get(api, number)["deployment_state"] == "complete_pending_revert"


# ---------------------------------------------------------------- faults and shapes


def test_faults_apply_to_deploy_requests(api):
    number = ready_request(api)
    rule = {"method": "POST", "path": "/deploy-requests/\\d+/deploy$", "status": 502, "times": 1,
            "after_commit": True}
    assert api.control("POST", "/faults", json={"rules": [rule]}).status_code == 200
    assert api.post(f"{DRS}/{number}/deploy").status_code == 502  # lost answer: the deploy happened
    assert get(api, number)["deployment_state"] == "queued"
    assert "queued" in error_of(api.post(f"{DRS}/{number}/deploy"), 422)  # so a retry is refused
    log = api.control("GET", "/requests").json()
    assert [entry["status"] for entry in log if entry["path"].endswith("/deploy")] == [502, 422]


def test_lean_write_answers_carry_only_the_deployment_state(api):
    """The platform's recorded answers to a close, deploy or cancel carry no state and no deployment_state."""
    number = ready_request(api)
    settings(api, lean_write_answers=True)
    deployed = act(api, number, "deploy")
    assert deployed == {"id": deployed["id"], "number": number, "deployment": {"state": "queued"}}
    api.advance(1)
    cancelled = act(api, number, "cancel")
    assert set(cancelled) == {"id", "number", "deployment"} and set(cancelled["deployment"]) == {"state"}
    assert get(api, number)["state"] == "open"  # a read is whole
    api.advance(3)  # the cancel completes
    response = api.patch(f"{DRS}/{number}", json={"state": "closed"})
    assert response.status_code == 200, response.text
    assert "state" not in response.json() and "deployment_state" not in response.json()
    assert get(api, number)["state"] == "closed"
    settings(api, lean=False)
    assert "state" in api.patch(f"{DRS}/{number}", json={"state": "closed"}).json()


def test_lean_answers_of_a_force_cutover_and_a_completed_errored_deploy(api):
    """The recorded answers of force-cutover (with force_cutover_requested_at) and complete-deploy."""
    number = ready_request(api)
    settings(api, lean_write_answers=True, cutover_blocked=True)
    act(api, number, "deploy")
    api.advance(2)
    forced = act(api, number, "force-cutover")
    assert set(forced) == {"id", "number", "deployment"}
    assert set(forced["deployment"]) == {"state", "force_cutover_requested_at"}
    assert forced["deployment"]["state"] == "in_progress_cutover"
    dev_branch(api, "errs", "CREATE TABLE `errs` (`id` bigint PRIMARY KEY)")
    errored = open_request(api, branch="errs")["number"]
    api.advance(1)
    settings(api, deploy_fail_state="complete_error")
    act(api, errored, "deploy")
    api.advance(2)
    assert get(api, errored)["deployment_state"] == "complete_error"
    assert act(api, errored, "complete-deploy") == {"id": get(api, errored)["id"], "number": errored,
                                                    "deployment": {"state": "complete"}}


def test_lean_shapes_on_the_new_lists_and_records(api):
    number = ready_request(api)
    settings(api, lean=True)
    listed = api.get(DRS).json()
    assert listed.keys() == {"data"} and listed["data"][0]["type"] == "DeployRequest"
    assert listed["data"][0]["deployment"]["type"] == "Deployment"
    assert api.get(f"{DRS}/{number}/operations").json().keys() == {"data"}
    assert api.get(f"{DB}/branches/dev/schema/lint").json() == {"data": []}
    act(api, number, "reviews", 201)
    assert api.get(f"{DRS}/{number}/reviews").json()["data"][0]["type"] == "DeployRequestReview"
