# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""vschema: a keyspace's VSchema compared as a document (the platform answers it as JSON text, raw), sent whole in
one PATCH when it differs, refused with the platform's sentence, read back after a lost answer."""

from __future__ import annotations

import json

import pytest

from ansible_collections.planetscale.cloud.plugins.module_utils.base import ModuleFailure, TaskContext
from ansible_collections.planetscale.cloud.plugins.modules.vschema import VSchema

URL = "/v1/organizations/acme/databases/app/branches/main/keyspaces/sharded/vschema"
MODULE = VSchema
ARGS = dict(organization="acme", database="app", branch="main", keyspace="sharded", service_token_id="svc",
            service_token="s3cret")
ORDERS = dict(sharded=True, vindexes=dict(hash=dict(type="hash"), lookup=dict(type="lookup_unique")),
              tables=dict(orders=dict(column_vindexes=[dict(column="customer_id", name="hash"),
                                                       dict(column="id", name="lookup")])))


def answer(document, **extra):
    """The platform's answer: the VSchema as JSON text, and an html copy beside it (../shared/reference/README.md)."""
    return 200, dict(dict(raw=json.dumps(document, indent=2), html="<pre>...</pre>"), **extra)


def patches(server):
    return [json.loads(r["body"]) for r in server.requests if r["method"] == "PATCH"]


def reordered(value):
    """The same document, every mapping's keys in reverse order."""
    if isinstance(value, dict):
        return dict((key, reordered(value[key])) for key in reversed(list(value)))
    return [reordered(item) for item in value] if isinstance(value, list) else value


@pytest.mark.parametrize("given", [
    reordered(ORDERS),
    json.dumps(ORDERS),  # JSON text, as a file's read with the file lookup
    "sharded: true\nvindexes: {lookup: {type: lookup_unique}, hash: {type: hash}}\ntables:\n  orders:\n"
    "    column_vindexes: [{name: hash, column: customer_id}, {column: id, name: lookup}]\n",  # YAML text
    dict(ORDERS, require_explicit_routing=False, multi_tenant_spec=None),  # what Vitess takes by default
])
def test_the_same_document_in_another_order_form_or_spelling_is_no_write(server, run, given):
    server.script = [answer(ORDERS)]
    result = run(vschema=given)
    assert result == dict(changed=False, vschema=ORDERS) and patches(server) == []


def test_another_order_of_column_vindexes_is_one_patch_of_the_whole_document(server, run):
    wanted = json.loads(json.dumps(ORDERS))
    wanted["tables"]["orders"]["column_vindexes"].reverse()  # another primary vindex
    server.script = [answer(ORDERS), answer(wanted)]
    result = run(vschema=wanted)
    assert result == dict(changed=True, vschema=wanted)
    assert patches(server) == [dict(vschema=json.dumps(wanted, sort_keys=True))]


def test_a_table_named_with_nothing_more_is_a_difference(server, run):
    """An empty mapping is Vitess's default for a field, not for an entry of a map: users: {} routes the table."""
    server.script = [answer(dict(sharded=False)), answer(dict(tables=dict(users={})))]
    result = run(vschema=dict(sharded=False, tables=dict(users={}, orders=dict(column_vindexes=[]))))
    assert result["changed"] is True and len(patches(server)) == 1


def test_check_mode_shows_the_two_documents_and_writes_nothing(server, run):
    server.script = [answer({})]
    result = run(vschema=ORDERS, check_mode=True, diff=True)
    assert result == dict(changed=True, vschema=ORDERS, diff=dict(before={}, after=ORDERS))
    assert patches(server) == []


def test_an_empty_vschema_is_an_empty_document(server, run):
    server.script = [(200, dict(raw=""))]
    assert run(vschema={}, diff=True) == dict(changed=False, vschema={}, diff=dict(before={}, after={}))


def test_a_refusal_is_the_platforms_sentence(server, run):
    refusal = "VSchema of keyspace 'sharded': table 'orders' has no column 'customer_idd'"
    server.script = [answer({}), (422, dict(code="unprocessable", message=refusal))]
    with pytest.raises(ModuleFailure) as caught:
        run(vschema=ORDERS)
    assert caught.value.msg == ("The platform refused the VSchema of keyspace 'sharded' of branch 'main' of database "
                                "'app' (HTTP 422): VSchema of keyspace 'sharded': table 'orders' has no column "
                                "'customer_idd'.")
    assert caught.value.result["status"] == 422 and len(patches(server)) == 1


def test_a_lost_answer_is_read_back_and_not_sent_twice(server, run, sleeps):
    server.script = [answer({}), "drop", answer(ORDERS)]
    result = run(vschema=ORDERS)
    assert result == dict(changed=True, vschema=ORDERS)
    assert [r["method"] for r in server.requests] == ["GET", "PATCH", "GET"]


@pytest.mark.parametrize("given, what", [
    ("{not json", "text that is neither JSON nor YAML"),
    ([1], "a list"),
    ("just words", "a string"),
])
def test_what_is_not_a_vschema_is_a_sentence_before_any_request(server, run, given, what):
    with pytest.raises(ModuleFailure) as caught:
        run(vschema=given)
    assert caught.value.msg == ("vschema must be a VSchema, a mapping such as {sharded: true, vindexes: {hash: {type: "
                                "hash}}}, given as data or as JSON or YAML text; %s is not one." % what)
    assert server.requests == []


def test_an_unknown_top_level_key_is_sent_with_a_warning(server, run):
    server.script = [answer({}), answer(dict(sharded=True, vindex={}))]
    ctx = TaskContext()
    assert run(vschema=dict(sharded=True, vindex=dict(hash=dict(type="hash"))), ctx=ctx)["changed"] is True
    assert ctx.warnings == ["vschema has vindex, which is not a key of a keyspace's VSchema in Vitess (sharded, "
                            "vindexes, tables, require_explicit_routing, foreign_key_mode, multi_tenant_spec); it is "
                            "sent as given, and the platform judges it."]
