"""Deploy requests are three-way merges: a branch's changes since its base (the production schema it was made
from) are applied to production as it is now, keeping what others deployed since; a table both changed
differently since the base is a conflict that makes the request not deployable."""

from .conftest import DB, MAIN
from .test_dataplane import mysql_login, password, run
from .test_deploy_requests import ADD_TABLE, act, ddl, dev_branch, error_of, get, open_request

DRS = f"{DB}/deploy-requests"
ADD_TAGS = "CREATE TABLE `tags` (`id` bigint NOT NULL AUTO_INCREMENT, `label` varchar(64), PRIMARY KEY (`id`))"


def main_schema(api):
    return {table["name"]: table["raw"] for table in api.get(f"{MAIN}/schema").json()["data"]}


def deployed(api, branch):
    """The branch's request, checked, deployed and cut over (in its revert window)."""
    number = open_request(api, branch)["number"]
    api.advance(1)
    assert get(api, number)["deployment_state"] == "ready", get(api, number)["deployment"]
    act(api, number, "deploy")
    api.advance(2)
    assert get(api, number)["deployment_state"] == "complete_pending_revert"
    return number


def checked(api, branch):
    number = open_request(api, branch)["number"]
    api.advance(1)
    return number, get(api, number)


def test_a_branch_made_before_another_deploy_with_no_change_has_no_changes(api):
    dev_branch(api, "a")
    dev_branch(api, "b")  # both from main as it was: users only
    ddl(api, "a", ADD_TABLE)
    deployed(api, "a")
    assert "posts" in main_schema(api)
    number, body = checked(api, "b")
    assert body["deployment_state"] == "no_changes" and body["deployment"]["deployable"] is False
    assert body["deployment"]["deploy_operations"] == []  # never a DROP TABLE of a's table
    assert "no schema changes" in error_of(api.post(f"{DRS}/{number}/deploy"), 422)
    assert sorted(main_schema(api)) == ["posts", "users"]


def test_a_branch_with_its_own_change_deploys_only_it_and_keeps_the_other_deploy(api):
    dev_branch(api, "a")
    dev_branch(api, "b")
    ddl(api, "a", ADD_TABLE)
    deployed(api, "a")
    posts = main_schema(api)["posts"]
    ddl(api, "b", ADD_TAGS)
    number, body = checked(api, "b")
    assert body["deployment_state"] == "ready"
    assert [(op["table_name"], op["operation_name"]) for op in body["deployment"]["deploy_operations"]] == [
        ("tags", "CREATE")]
    act(api, number, "deploy")
    api.advance(2)
    schema = main_schema(api)
    assert sorted(schema) == ["posts", "tags", "users"] and schema["posts"] == posts


def test_an_alter_is_applied_to_production_as_it_is_now(api):
    dev_branch(api, "a")
    dev_branch(api, "b")
    ddl(api, "a", ADD_TABLE)
    deployed(api, "a")
    ddl(api, "b", "ALTER TABLE `users` ADD COLUMN `nickname` varchar(64)")
    number, body = checked(api, "b")
    operations = body["deployment"]["deploy_operations"]
    assert [(op["table_name"], op["operation_name"]) for op in operations] == [("users", "ALTER")]
    assert "nickname" in operations[0]["ddl_statement"] and "posts" not in operations[0]["ddl_statement"]
    act(api, number, "deploy")
    api.advance(2)
    schema = main_schema(api)
    assert "posts" in schema and "`nickname`" in schema["users"]


def test_a_table_changed_on_both_sides_is_a_conflict_naming_the_table(api):
    dev_branch(api, "a")
    dev_branch(api, "b")
    ddl(api, "a", "ALTER TABLE `users` ADD COLUMN `nickname` varchar(64)")
    deployed(api, "a")
    ddl(api, "b", "ALTER TABLE `users` ADD COLUMN `nickname` bigint")
    before = main_schema(api)
    number, body = checked(api, "b")
    deployment = body["deployment"]
    assert body["deployment_state"] == deployment["state"] == "error" and deployment["deployable"] is False
    assert deployment["lint_errors"] == []
    assert "conflict" in deployment["deploy_check_errors"] and "`users`" in deployment["deploy_check_errors"]
    message = error_of(api.post(f"{DRS}/{number}/deploy"), 422)
    assert "`users`" in message and "conflict" in message
    assert main_schema(api) == before


def test_the_same_change_on_both_sides_is_no_conflict(api):
    dev_branch(api, "a")
    dev_branch(api, "b")
    ddl(api, "a", ADD_TABLE)
    ddl(api, "b", ADD_TABLE)
    deployed(api, "a")
    assert checked(api, "b")[1]["deployment_state"] == "no_changes"


def test_a_request_checked_before_a_conflicting_deploy_is_refused_at_deploy(api):
    dev_branch(api, "a")
    dev_branch(api, "b")
    ddl(api, "a", "ALTER TABLE `users` ADD COLUMN `nickname` varchar(64)")
    ddl(api, "b", "ALTER TABLE `users` ADD COLUMN `nickname` bigint")
    number, body = checked(api, "b")
    assert body["deployment_state"] == "ready"  # production had not moved yet
    deployed(api, "a")
    message = error_of(api.post(f"{DRS}/{number}/deploy"), 422)
    assert "`users`" in message and "conflict" in message


def test_revert_of_a_three_way_deploy_undoes_only_its_changes(api):
    dev_branch(api, "a")
    dev_branch(api, "b")
    ddl(api, "a", ADD_TABLE)
    deployed(api, "a")
    ddl(api, "b", ADD_TAGS, "ALTER TABLE `users` ADD COLUMN `nickname` varchar(64)")
    before = main_schema(api)
    number = deployed(api, "b")
    assert sorted(main_schema(api)) == ["posts", "tags", "users"]
    act(api, number, "revert")
    api.advance(1)
    assert get(api, number)["deployment_state"] == "complete_revert"
    assert main_schema(api) == before  # posts (a's deploy) kept; tags and the new column gone
    # the branch's changes are again undeployed: a new request from b carries them again
    number, body = checked(api, "b")
    assert sorted((op["table_name"], op["operation_name"]) for op in body["deployment"]["deploy_operations"]) == [
        ("tags", "CREATE"), ("users", "ALTER")]


def test_a_second_request_from_a_deployed_branch_carries_only_the_new_change(api):
    dev_branch(api, "a")
    ddl(api, "a", ADD_TABLE)
    deployed(api, "a")
    act(api, 1, "skip-revert")
    dev_branch(api, "b")  # made after a's deploy: it changes a's table, and deploys
    ddl(api, "b", "ALTER TABLE `posts` ADD COLUMN `body` text")
    deployed(api, "b")
    ddl(api, "a", ADD_TAGS)
    body = checked(api, "a")[1]  # a's deployed table is its base now: b's later change is no conflict
    assert body["deployment_state"] == "ready", body["deployment"]["deploy_check_errors"]
    assert [(op["table_name"], op["operation_name"]) for op in body["deployment"]["deploy_operations"]] == [
        ("tags", "CREATE")]


def test_the_servers_schema_follows_a_three_way_deploy_and_its_revert(api, dataplane):
    dev_branch(api, "a")
    dev_branch(api, "b")
    ddl(api, "a", ADD_TABLE)
    deployed(api, "a")
    ddl(api, "b", ADD_TAGS)
    number = deployed(api, "b")
    login = password(api, "admin")
    with mysql_login(dataplane, login) as connection:  # straight to the server, no /connect before it
        assert sorted(row[0] for row in run(connection, "SHOW TABLES")) == ["posts", "tags", "users"]
    act(api, number, "revert")
    api.advance(1)
    assert get(api, number)["deployment_state"] == "complete_revert"  # transitions run when the database is read
    with mysql_login(dataplane, login) as connection:
        assert sorted(row[0] for row in run(connection, "SHOW TABLES")) == ["posts", "users"]


def test_a_branch_restored_from_a_backup_has_the_backups_schema_as_its_base(api):
    dev_branch(api, "a")
    ddl(api, "a", ADD_TABLE)
    deployed(api, "a")
    taken = api.world["backups"]["main"][0]  # made before a's deploy: users only
    body = {"name": "drill", "parent_branch": "main", "backup_id": taken, "cluster_size": "PS_10"}
    restored = api.post(f"{DB}/branches", json=body)
    assert restored.status_code == 201, restored.text
    api.advance(60)
    body = checked(api, "drill")[1]
    assert body["deployment_state"] == "no_changes", body["deployment"]["deploy_operations"]
    assert sorted(main_schema(api)) == ["posts", "users"]
