# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The shared resource flow, through a toy resource and real HTTP requests to a scripted server."""

from __future__ import annotations

import ipaddress
import json

import pytest
from ansible.module_utils.common.arg_spec import ModuleArgumentSpecValidator

from ansible_collections.planetscale.cloud.plugins.module_utils.base import ModuleFailure, TaskContext
from ansible_collections.planetscale.cloud.plugins.module_utils.resource import Resource, networks
from ansible_collections.planetscale.cloud.plugins.module_utils.settle import poll

URL = "/v1/organizations/acme/widgets"


class Widget(Resource):
    """A resource with an updatable colour and tags, a create-only size, and a lock that refuses changes."""

    argument_spec = dict(
        name=dict(type="str", required=True),
        id=dict(type="str"),
        colour=dict(type="str"),
        tags=dict(type="list", elements="str"),
        size=dict(type="int"),
        flavour=dict(type="str"),
        replace=dict(type="bool", default=False),
    )
    kind = "widget"
    api_path = ("widgets",)
    key = "name"
    fields = ("name", "colour", "tags", "size")
    create_only = ("size",)
    required_to_create = ("flavour",)
    names = ("name", "tags")

    def read(self):
        return self.client.get(self.url(self.params["id"] or self.params["name"]), missing_ok=True)

    def create(self, values):
        return super().create(dict(values, flavour=self.params["flavour"]))

    def guard(self, resource):
        if resource.get("locked"):
            raise ModuleFailure("Widget %r is locked." % resource["name"])


def run(server, check_mode=False, diff=False, **args):
    args = dict(dict(organization="acme", service_token_id="svc", service_token="s3cret",
                     api_url=server.url + "/v1", api_retries=0), **args)
    spec = Widget.spec()
    spec.pop("supports_check_mode")
    validation = ModuleArgumentSpecValidator(**spec).validate(args)
    assert not validation.error_messages
    return Widget(validation.validated_parameters, TaskContext(check_mode=check_mode, diff=diff)).execute()


def widget(**fields):
    return dict(dict(id="w1", name="w", colour="red", tags=["a", "b"], size=1, locked=False), **fields)


def sent(server):
    return [(r["method"], r["path"], json.loads(r["body"]) if r["body"] else None) for r in server.requests]


def writes(server):
    return [r for r in sent(server) if r[0] != "GET"]


NOT_FOUND = (404, {"code": "not_found", "message": "Not Found"})


def test_state_is_added_to_the_argument_spec():
    assert Widget.spec()["argument_spec"]["state"] == dict(type="str", choices=["present", "absent"], default="present")


def test_a_resource_module_must_define_read():
    class Nameless(Resource):
        argument_spec = dict(name=dict(type="str"))

    with pytest.raises(TypeError, match="abstract method.*read"):
        Nameless(dict(name="x"))  # pylint: disable=abstract-class-instantiated


def test_a_missing_resource_is_created_with_the_supplied_fields(server):
    server.script = [NOT_FOUND, (201, widget(colour="blue", tags=None))]
    result = run(server, diff=True, name="w", colour="blue", size=1, flavour="mint")
    assert result["changed"] is True
    assert result["widget"]["colour"] == "blue"
    assert sent(server)[1] == ("POST", URL, dict(name="w", colour="blue", size=1, flavour="mint"))
    assert result["diff"] == dict(before={}, after=dict(name="w", colour="blue", size=1))


def test_a_new_resource_is_not_refused_for_how_the_api_spells_a_create_only_field(server):
    server.script = [NOT_FOUND, (201, widget(size=10))]
    result = run(server, name="w", size=1, flavour="mint")
    assert result["changed"] is True and result["widget"]["size"] == 10
    assert [r[0] for r in sent(server)] == ["GET", "POST"]


def test_check_mode_predicts_a_create_without_writing(server):
    server.script = [NOT_FOUND]
    result = run(server, check_mode=True, diff=True, name="w", colour="blue", flavour="mint")
    assert result["changed"] is True
    assert result["widget"] == dict(name="w", colour="blue")
    assert result["diff"]["after"] == dict(name="w", colour="blue")
    assert writes(server) == []


class Gadget(Resource):
    """A resource inside a widget, which an earlier task of a play may create."""

    argument_spec = dict(widget=dict(type="str", required=True), name=dict(type="str", required=True),
                         id=dict(type="str"), colour=dict(type="str"))
    kind = "gadget"
    api_path = ("widgets", "{widget}", "gadgets")
    parent = "widget"
    fields = ("name", "colour")

    def read(self):  # the list answers 404 when the widget is missing
        return next((g for g in self.client.get(self.url())["data"] if g["name"] == self.params["name"]), None)


def run_gadget(server, check_mode, **args):
    args = dict(dict(organization="acme", service_token_id="svc", service_token="s3cret",
                     api_url=server.url + "/v1", api_retries=0, widget="w", name="g"), **args)
    spec = Gadget.spec()
    spec.pop("supports_check_mode")
    ctx = TaskContext(check_mode=check_mode, diff=True)
    return Gadget(ModuleArgumentSpecValidator(**spec).validate(args).validated_parameters, ctx).execute(), ctx


def test_check_mode_predicts_a_create_inside_a_parent_an_earlier_task_would_create(server):
    server.script = [(404, {"code": "not_found", "message": "Widget not found"})]
    result, ctx = run_gadget(server, True, colour="blue")
    assert result["changed"] is True
    assert result["diff"] == dict(before={}, after=dict(name="g", colour="blue"))
    assert ctx.warnings == ["Widget 'w' was not found (Widget not found). Check mode predicts that gadget 'g' would be "
                            "created, as if an earlier task created the widget; if no task does, the run will fail."]
    assert writes(server) == []


@pytest.mark.parametrize("check_mode, args", [
    (False, {}),  # a real run cannot create inside a missing parent
    (True, dict(state="absent")),  # nothing would be deleted: the run will fail the same way
    (True, dict(id="g1")),  # a selected resource cannot be predicted
])
def test_a_missing_parent_fails_otherwise(server, check_mode, args):
    server.script = [(404, {"code": "not_found", "message": "Widget not found"})]
    with pytest.raises(ModuleFailure) as caught:
        run_gadget(server, check_mode, **args)
    assert caught.value.msg.startswith("GET /organizations/acme/widgets/w/gadgets failed with HTTP 404")
    assert writes(server) == []


def test_an_option_needed_to_create_is_named_when_missing(server):
    server.script = [NOT_FOUND]
    with pytest.raises(ModuleFailure) as caught:
        run(server, name="w")
    assert caught.value.msg == "flavour is required to create widget 'w', which does not exist."
    assert writes(server) == []


def test_a_resource_selected_by_id_must_exist(server):
    server.script = [NOT_FOUND]
    with pytest.raises(ModuleFailure) as caught:
        run(server, name="w", id="w9", flavour="mint")
    assert caught.value.msg == "Widget 'w' with id 'w9' does not exist; leave id out to create it."
    assert writes(server) == []


def test_only_supplied_options_are_compared(server):
    server.script = [(200, widget())]
    result = run(server, name="w")  # colour, tags and size not supplied: whatever they are is fine
    assert result == dict(changed=False, widget=widget())
    assert len(server.requests) == 1


@pytest.mark.parametrize("args, message", [(dict(name=" "), "name must not be empty."),
                                           (dict(name="w", tags=["a", ""]), "tags must not be empty."),
                                           (dict(name="w", organization=".."), "organization must be a name, not '..'.")])
def test_blank_names_fail_before_any_request(server, args, message):
    with pytest.raises(ModuleFailure) as caught:
        run(server, **args)
    assert caught.value.msg == message
    assert server.requests == []


def test_the_order_of_a_list_does_not_matter(server):
    server.script = [(200, widget(tags=["b", "a"]))]
    assert run(server, name="w", tags=["a", "b"])["changed"] is False
    assert writes(server) == []


def test_an_empty_list_equals_a_missing_one(server):
    server.script = [(200, widget(tags=None))]
    assert run(server, name="w", tags=[])["changed"] is False


def test_one_update_carries_only_what_differs(server):
    server.script = [(200, widget()), (200, widget(colour="blue", tags=["c"]))]
    result = run(server, diff=True, name="w", colour="blue", tags=["c"], size=1)
    assert result["changed"] is True
    assert writes(server) == [("PATCH", URL + "/w", dict(colour="blue", tags=["c"]))]
    assert result["diff"] == dict(before=dict(name="w", colour="red", tags=["a", "b"], size=1),
                                  after=dict(name="w", colour="blue", tags=["c"], size=1))


def test_check_mode_predicts_an_update_without_writing(server):
    server.script = [(200, widget())]
    result = run(server, check_mode=True, diff=True, name="w", colour="blue")
    assert result["changed"] is True
    assert result["widget"]["colour"] == "blue"
    assert result["diff"]["after"]["colour"] == "blue"
    assert writes(server) == []


def test_a_create_only_field_that_differs_fails_naming_it(server):
    server.script = [(200, widget())]
    with pytest.raises(ModuleFailure) as caught:
        run(server, name="w", size=2, colour="blue")
    assert caught.value.msg == ("Widget 'w' has size 1, not 2: size can only be set when the widget is created; "
                                "set replace: true to delete it and create it again.")
    assert writes(server) == []


def test_a_create_only_field_the_record_does_not_state_is_not_a_difference(server):
    record = {k: v for k, v in widget().items() if k != "size"}
    server.script = [(200, record), (200, dict(record, colour="blue"))]
    result = run(server, name="w", size=2, colour="blue")
    assert result["changed"] is True
    assert writes(server) == [("PATCH", URL + "/w", dict(colour="blue"))]
    server.requests.clear()
    server.script = [(200, record)]
    assert run(server, name="w", size=2)["changed"] is False
    assert writes(server) == []


def test_a_create_only_field_the_record_states_as_null_is_compared(server):
    server.script = [(200, widget(size=None))]
    with pytest.raises(ModuleFailure) as caught:
        run(server, name="w", size=2)
    assert caught.value.msg.startswith("Widget 'w' has size ")
    assert writes(server) == []


def test_replace_deletes_and_creates_with_the_fields_kept(server):
    server.script = [(200, widget()), (204, b""), (201, widget(size=2))]
    result = run(server, name="w", size=2, replace=True, flavour="mint")
    assert result["changed"] is True
    assert writes(server) == [("DELETE", URL + "/w", None),
                              ("POST", URL, dict(name="w", colour="red", tags=["a", "b"], size=2, flavour="mint"))]


def test_replace_in_check_mode_writes_nothing(server):
    server.script = [(200, widget())]
    result = run(server, check_mode=True, name="w", size=2, replace=True)
    assert result["changed"] is True and result["widget"]["size"] == 2
    assert writes(server) == []


def test_a_guard_refuses_before_any_write(server):
    server.script = [(200, widget(locked=True))]
    with pytest.raises(ModuleFailure, match="locked"):
        run(server, name="w", colour="blue")
    assert writes(server) == []


def test_a_guarded_resource_without_changes_is_fine(server):
    server.script = [(200, widget(locked=True))]
    assert run(server, name="w", colour="red")["changed"] is False


def test_absent_deletes(server):
    server.script = [(200, widget()), (204, b"")]
    result = run(server, diff=True, name="w", state="absent")
    assert result["changed"] is True
    assert "widget" not in result
    assert writes(server) == [("DELETE", URL + "/w", None)]
    assert result["diff"]["after"] == {}


def test_absent_when_missing_is_no_change(server):
    server.script = [NOT_FOUND]
    assert run(server, name="w", state="absent") == dict(changed=False)
    assert writes(server) == []


def test_absent_in_check_mode_writes_nothing(server):
    server.script = [(200, widget())]
    assert run(server, check_mode=True, name="w", state="absent")["changed"] is True
    assert writes(server) == []


def test_absent_is_guarded(server):
    server.script = [(200, widget(locked=True))]
    with pytest.raises(ModuleFailure, match="locked"):
        run(server, name="w", state="absent")
    assert writes(server) == []


def test_a_write_refused_for_what_the_guard_checks_fails_with_its_sentence(server):
    server.script = [(200, widget()), (422, {"code": "unprocessable", "message": "Unprocessable"}),
                     (200, widget(locked=True))]
    with pytest.raises(ModuleFailure) as caught:
        run(server, name="w", colour="blue")
    assert caught.value.msg == "Widget 'w' is locked."
    assert caught.value.result["status"] == 422 and caught.value.result["error"]["method"] == "PATCH"


def test_another_refusal_keeps_the_apis_sentence(server):
    server.script = [(200, widget()), (422, {"code": "unprocessable", "message": "colour is taken"}), (200, widget())]
    with pytest.raises(ModuleFailure, match="PATCH /organizations/acme/widgets/w failed with HTTP 422.*colour is taken"):
        run(server, name="w", colour="blue")


def test_a_refusal_stays_when_the_read_after_it_fails(server):
    server.script = [(200, widget()), (422, {"code": "unprocessable", "message": "colour is taken"}),
                     (500, {"code": "internal", "message": "boom"})]
    with pytest.raises(ModuleFailure, match="HTTP 422.*colour is taken"):
        run(server, name="w", colour="blue")


def test_networks_names_the_value_that_is_no_network():
    expected = set([ipaddress.ip_network("10.0.0.1/32"), ipaddress.ip_network("10.0.0.0/8")])
    assert networks(["10.0.0.1", "10.0.0.0/8"]) == expected
    with pytest.raises(ModuleFailure) as caught:
        networks(["10.0.0.0/8", "10.0.0.256"], "allowed")
    assert caught.value.msg == "allowed: '10.0.0.256' is not an IP address or CIDR range."


def test_strict_networks_refuse_host_bits_naming_the_network_and_the_address():
    """What a user gives: 203.0.113.7/0 would widen to every address; what the platform holds is read as it means."""
    assert networks(["203.0.113.7/0"]) == set([ipaddress.ip_network("0.0.0.0/0")])
    given = ["10.0.0.1", "0.0.0.0/0", "10.0.0.0/255.0.0.0", "2001:db8::1", "::/0"]
    assert networks(given, strict=True) == networks(given)
    for cidr, message in [
            ("203.0.113.7/0", "'203.0.113.7/0' has host bits set, so it would mean 0.0.0.0/0 (every IPv4 address): "
                              "write 203.0.113.7/32 for that address alone, or 0.0.0.0/0 for the whole range."),
            ("10.1.2.3/8", "'10.1.2.3/8' has host bits set, so it would mean 10.0.0.0/8 (16777216 addresses): write "
                           "10.1.2.3/32 for that address alone, or 10.0.0.0/8 for the whole range."),
            ("2001:db8::1/0", "'2001:db8::1/0' has host bits set, so it would mean ::/0 (every IPv6 address): write "
                              "2001:db8::1/128 for that address alone, or ::/0 for the whole range.")]:
        with pytest.raises(ModuleFailure) as caught:
            networks(["10.0.0.0/8", cidr], "allowed", strict=True)
        assert caught.value.msg == "allowed: " + message


# Unknown outcomes ---------------------------------------------------------------------------

def test_a_create_whose_answer_was_lost_is_read_back_not_repeated(server):
    server.script = [NOT_FOUND, (502, {"code": "bad_gateway"}), (200, widget())]
    result = run(server, name="w", colour="red", flavour="mint")
    assert result["changed"] is True
    assert result["widget"] == widget()
    assert [r[0] for r in sent(server)] == ["GET", "POST", "GET"]


def test_the_read_back_continues_with_what_still_differs(server):
    server.script = [NOT_FOUND, (502, {}), (200, widget(colour="red")), (200, widget(colour="blue"))]
    result = run(server, name="w", colour="blue", flavour="mint")
    assert result["changed"] is True
    assert writes(server)[1] == ("PATCH", URL + "/w", dict(colour="blue"))


def test_a_create_that_was_not_applied_is_sent_again_after_a_backoff(server, sleeps):
    server.script = [NOT_FOUND, (502, {}), NOT_FOUND, (201, widget())]
    assert run(server, name="w", flavour="mint")["changed"] is True
    assert [r[0] for r in sent(server)] == ["GET", "POST", "GET", "POST"]
    assert len(sleeps) == 1 and 0.25 <= sleeps[0] <= 0.5


def test_a_create_answered_503_is_read_back_not_repeated(server, sleeps):
    # a proxy may answer 503 after the platform applied the create: no blind second POST
    server.script = [NOT_FOUND, (503, {"code": "unavailable"}), (200, widget())]
    result = run(server, name="w", colour="red", flavour="mint", api_retries=5)
    assert result["changed"] is True and result["widget"] == widget()
    assert [r[0] for r in sent(server)] == ["GET", "POST", "GET"]
    assert sleeps == []


def test_a_create_answered_503_and_not_applied_is_sent_again_after_retry_after(server, sleeps):
    server.script = [NOT_FOUND, (503, {"code": "unavailable"}, {"Retry-After": "7"}), NOT_FOUND, (201, widget())]
    assert run(server, name="w", flavour="mint", api_retries=5)["changed"] is True
    assert [r[0] for r in sent(server)] == ["GET", "POST", "GET", "POST"]
    assert sleeps == [7.0]


def test_creating_gives_up_after_three_unknown_outcomes(server, sleeps):
    server.script = [NOT_FOUND] + [(502, {"code": "bad_gateway"}), NOT_FOUND] * 3
    with pytest.raises(ModuleFailure) as caught:
        run(server, name="w", flavour="mint")
    assert caught.value.result["status"] == 502
    assert [r[0] for r in writes(server)] == ["POST"] * 3
    assert len(sleeps) == 2  # between the attempts, none after the last


def test_a_create_that_lost_a_race_continues_from_the_winner(server):
    server.script = [NOT_FOUND, (422, {"code": "unprocessable", "message": "Name has already been taken"}),
                     (200, widget())]
    result = run(server, name="w", colour="red", flavour="mint")
    assert result["changed"] is False
    assert [r[0] for r in sent(server)] == ["GET", "POST", "GET"]


def test_a_refused_create_is_reported_when_nothing_exists(server):
    server.script = [NOT_FOUND, (422, {"code": "invalid_params", "message": "flavour is unknown"}), NOT_FOUND]
    with pytest.raises(ModuleFailure, match="flavour is unknown"):
        run(server, name="w", flavour="mint")


def test_an_update_whose_answer_was_lost_is_checked_by_a_read(server):
    server.script = [(200, widget()), "drop", (200, widget(colour="blue"))]
    result = run(server, name="w", colour="blue")
    assert result["changed"] is True and result["widget"]["colour"] == "blue"
    assert [r[0] for r in sent(server)] == ["GET", "PATCH", "GET"]


def test_an_update_that_was_not_applied_is_sent_again(server):
    server.script = [(200, widget()), "drop", (200, widget()), (200, widget(colour="blue"))]
    result = run(server, name="w", colour="blue")
    assert result["changed"] is True and result["widget"]["colour"] == "blue"
    assert [r[0] for r in sent(server)] == ["GET", "PATCH", "GET", "PATCH"]


def test_an_update_that_is_never_applied_fails_after_three_attempts(server):
    server.script = [(200, widget()), "drop", (200, widget()), "drop", (200, widget()), "drop", (200, widget())]
    with pytest.raises(ModuleFailure, match="PATCH"):
        run(server, name="w", colour="blue")
    assert [r[0] for r in sent(server)] == ["GET", "PATCH", "GET", "PATCH", "GET", "PATCH", "GET"]


def test_a_delete_whose_answer_was_lost_is_checked_by_a_read(server):
    server.script = [(200, widget()), "drop", NOT_FOUND]
    assert run(server, name="w", state="absent")["changed"] is True


# Polling ------------------------------------------------------------------------------------

def test_poll_waits_longer_each_time_until_done(sleeps):
    values = iter([1, 2, 3, 4])
    value, done = poll(lambda: next(values), lambda v: v == 4, timeout=600)
    assert (value, done) == (4, True)
    assert sleeps == [1.0, 1.5, 2.25]


def test_poll_judges_the_current_value_first(sleeps):
    value, done = poll(lambda: pytest.fail("read"), lambda v: v == "ready", timeout=600, current="ready")
    assert (value, done, sleeps) == ("ready", True, [])


def test_poll_stops_at_the_timeout_with_the_last_value(sleeps):
    reads = []
    value, done = poll(lambda: reads.append(1) or len(reads), lambda v: False, timeout=10)
    assert done is False and value == len(reads)
    assert sum(sleeps) == pytest.approx(10, abs=0.01)
    assert sleeps[-1] <= sleeps[-2] * 1.5


def test_poll_intervals_are_capped(sleeps):
    poll(lambda: None, lambda v: False, timeout=100, longest=4.0)
    assert max(sleeps) == 4.0


# Answers of the wrong shape and accurate sentences ------------------------------------------

@pytest.mark.parametrize("record, said", [({}, "it has no name"), ({"id": "w1", "name": None}, "it has no name")])
def test_a_read_answered_with_a_record_without_its_key_is_a_sentence(server, record, said):
    server.script = [(200, record)]
    with pytest.raises(ModuleFailure) as caught:
        run(server, name="w", colour="blue")
    assert caught.value.msg == ("GET /organizations/acme/widgets/w failed with HTTP 200: the answer is not a widget "
                                "record: %s." % said)
    assert writes(server) == []


def test_a_create_answered_with_an_empty_object_is_a_sentence(server):
    server.script = [NOT_FOUND, (201, {})]
    with pytest.raises(ModuleFailure) as caught:
        run(server, name="w", flavour="mint")
    assert caught.value.msg == ("POST /organizations/acme/widgets failed with HTTP 201: the answer is not a widget "
                                "record: it has no name.")


def test_an_update_answered_with_a_list_is_a_sentence(server):
    server.script = [(200, widget()), (200, [widget(colour="blue")])]
    with pytest.raises(ModuleFailure, match="PATCH /organizations/acme/widgets/w failed with HTTP 200: the answer was "
                                            "a list where a JSON object was expected"):
        run(server, name="w", colour="blue")


def test_a_delete_answered_500_that_reading_back_shows_not_applied_says_nothing_was_deleted(server):
    server.script = [(200, widget()), (500, {"code": "internal_server_error", "message": "Internal Server Error"}),
                     (200, widget())]
    with pytest.raises(ModuleFailure) as caught:
        run(server, name="w", state="absent")
    assert caught.value.msg == (
        "DELETE /organizations/acme/widgets/w failed with HTTP 500: internal_server_error, Internal Server Error. "
        "Reading it back shows that widget 'w' still exists: the delete was not applied and nothing was deleted. "
        "Run the task again later.")
    assert "may have applied" not in caught.value.msg
    assert caught.value.result["status"] == 500 and caught.value.result["error"]["method"] == "DELETE"


def test_a_delete_answered_500_that_was_applied_is_done(server):
    server.script = [(200, widget()), (500, {"code": "internal_server_error"}), NOT_FOUND]
    assert run(server, name="w", state="absent")["changed"] is True
