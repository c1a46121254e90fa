"""A keyspace's VSchema (issue 46): stored and answered as a JSON string, checked against the keyspace's real tables
and columns (made on MariaDB) and the vindex types Vitess predefines, refused with a sentence naming the table,
column or vindex; a sharded keyspace's table without a primary vindex is a lint error of subject vschema.

Every answer is validated against the published OpenAPI after the test (conftest.openapi_check)."""

import json

from .test_dataplane import development_branch

DDL = "/branches/acme/app/dev-x/ddl"
TABLES = ["CREATE TABLE orders (id bigint PRIMARY KEY, customer_id bigint NOT NULL, email varchar(100))",
          "CREATE TABLE customers (id bigint PRIMARY KEY)"]
GOOD = {
    "sharded": True,
    "vindexes": {"hash": {"type": "hash"},
                 "email_lookup": {"type": "consistent_lookup_unique", "owner": "orders",
                                  "params": {"table": "shop.email_idx", "from": "email", "to": "keyspace_id"}}},
    "tables": {"orders": {"column_vindexes": [{"column": "customer_id", "name": "hash"},
                                              {"column": "email", "name": "email_lookup"}],
                          "auto_increment": {"column": "id", "sequence": "orders_seq"}},
               "customers": {"column_vindexes": [{"column": "id", "name": "hash"}]}},
}


def sharded_keyspace(api):
    """A development branch with a keyspace 'shop' of 2 shards holding the tables orders and customers."""
    dev = development_branch(api)
    made = api.post(f"{dev}/keyspaces", json={"name": "shop", "cluster_size": "PS_10", "shards": 2})
    assert made.status_code == 200, made.text
    assert api.control("POST", DDL, json={"keyspace": "shop", "statements": TABLES}).status_code == 200
    return f"{dev}/keyspaces/shop"


def patch(api, keyspace, document):
    text = document if isinstance(document, str) else json.dumps(document)
    return api.patch(f"{keyspace}/vschema", json={"vschema": text})


def with_changes(**tables):
    document = json.loads(json.dumps(GOOD))
    document["tables"].update(tables)
    return document


def test_a_vschema_that_fits_the_real_tables_is_stored_and_answered_as_a_string(api):
    keyspace = sharded_keyspace(api)
    answer = patch(api, keyspace, GOOD)
    assert answer.status_code == 200, answer.text
    assert json.loads(answer.json()["raw"]) == GOOD
    assert json.loads(api.get(f"{keyspace}/vschema").json()["raw"]) == GOOD
    lint = "/v1/organizations/acme/databases/app/branches/dev-x/schema/lint"
    assert api.get(lint).json()["data"] == []
    assert api.control("POST", DDL, json={"keyspace": "shop", "statements": [
        "CREATE TABLE notes (id bigint PRIMARY KEY)"]}).status_code == 200
    errors = api.get(lint).json()["data"]
    assert [(e["lint_error"], e["subject_type"], e["keyspace_name"], e["table_name"]) for e in errors] == [
        ("VSCHEMA_NO_PRIMARY_VINDEX", "vschema", "shop", "notes")]
    default = "/v1/organizations/acme/databases/app/branches/main/keyspaces/app"
    assert patch(api, default, {"tables": {"users": {}}}).status_code == 200  # the seeded table of main


def test_a_vschema_that_does_not_fit_is_refused_with_a_sentence(api):
    keyspace = sharded_keyspace(api)
    cases = [
        ("{not json", "is not valid JSON"),
        ("[1]", "must be a JSON object, not list"),
        ({**GOOD, "shardd": True}, "the VSchema has an unknown field 'shardd'"),
        ({**GOOD, "sharded": False}, "the keyspace has 2 shards, so its VSchema must say \"sharded\": true"),
        ({**GOOD, "vindexes": {**GOOD["vindexes"], "hash": {"type": "hashy"}}},
         "vindex 'hash' has type 'hashy', which is not a vindex type Vitess predefines"),
        (with_changes(nope={"column_vindexes": [{"column": "id", "name": "hash"}]}),
         "table 'nope' does not exist in the keyspace (its tables: customers, orders)"),
        (with_changes(customers={"column_vindexes": [{"column": "user_idd", "name": "hash"}]}),
         "table 'customers' has no column 'user_idd' (vindex 'hash')"),
        (with_changes(customers={"column_vindexes": [{"column": "id", "name": "missing"}]}),
         "table 'customers' uses vindex 'missing', which the VSchema does not declare"),
        (with_changes(customers={}), "table 'customers' has no primary vindex"),
        (with_changes(customers={"column_vindexes": [{"columns": ["id", "id"], "name": "hash"}]}),
         "vindex 'hash' of type 'hash' takes one column"),
        (with_changes(orders={"column_vindexes": [{"column": "email", "name": "email_lookup"}]}),
         "its primary (first) vindex 'email_lookup' of type 'consistent_lookup_unique' cannot be a primary vindex"),
        (with_changes(orders={"column_vindexes": [{"column": "id", "name": "hash"}],
                              "auto_increment": {"column": "idd", "sequence": "s"}}),
         "table 'orders' has no column 'idd' (auto_increment)"),
    ]
    for document, says in cases:
        answer = patch(api, keyspace, document)
        assert answer.status_code == 422, (document, answer.text)
        assert answer.json()["code"] == "unprocessable"
        assert answer.json()["message"].startswith("VSchema of keyspace 'shop'") and says in answer.json()[
            "message"], (says, answer.json()["message"])
    assert json.loads(api.get(f"{keyspace}/vschema").json()["raw"]) == {"sharded": True}  # nothing was stored
    assert api.patch(f"{keyspace}/vschema", json={"vschema": {"sharded": True}}).json()["code"] == "invalid_params"
