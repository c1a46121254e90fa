# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Each private ansible-core API the in-process adapter needs, against the installed ansible-core.

ansible-test units runs this file on the oldest and the newest supported ansible-core, so a
release that changes one of these APIs fails here, before any playbook does.
"""

from __future__ import annotations

from ansible.parsing.dataloader import DataLoader
from ansible.playbook.play_context import PlayContext
from ansible.playbook.task import Task
from ansible.plugins.action import ActionBase
from ansible.plugins.loader import connection_loader

from ansible_collections.planetscale.cloud.plugins.plugin_utils import core_compat

from ansible.template import Templar

try:
    from ansible.template import trust_as_template  # ansible-core 2.19+: only trusted strings are templated
except ImportError:
    def trust_as_template(value):
        return value

SPEC = dict(
    argument_spec=dict(
        token=dict(type="str", no_log=True),
        old=dict(type="str", removed_in_version="2.0.0", removed_from_collection="planetscale.cloud"),
        name=dict(type="str", aliases=["label"]),
        count=dict(type="int"),
    ),
    supports_check_mode=True,
)


def test_validation_gives_params_no_log_values_warnings_and_deprecations():
    validation = core_compat.validate_arguments(SPEC, dict(token="t0ken", old="x", name="a", label="b", count="3"))
    assert validation.errors == [] and validation.msg is None
    assert validation.params["count"] == 3
    assert validation.no_log_values == {"t0ken"}
    assert validation.warnings == ["Both option name and its alias label are set."]
    assert validation.deprecations == [dict(msg="Param 'old' is deprecated. See the module docs for more information",
                                            version="2.0.0", date=None, collection_name="planetscale.cloud")]


def test_validation_errors_carry_the_message_a_module_fails_with():
    validation = core_compat.validate_arguments(SPEC, dict(count="many"))
    assert len(validation.errors) == 1
    assert "count" in validation.msg and "int" in validation.msg


class _Action(ActionBase):
    def run(self, tmp=None, task_vars=None):
        return {}


def _action(environment):
    task = Task()
    task.environment = environment
    connection = connection_loader.get("local", PlayContext())
    templar = Templar(loader=DataLoader(), variables=dict(proxy="http://proxy.example:3128"))
    return _Action(task, connection, PlayContext(), DataLoader(), templar, None)


def test_the_task_environment_is_templated_and_merged_in_order():
    action = _action([{"A": "1", "HTTPS_PROXY": trust_as_template("{{ proxy }}")}, {"A": "2"}])
    assert core_compat.task_environment(action) == {"A": "2", "HTTPS_PROXY": "http://proxy.example:3128"}


def test_a_task_without_an_environment_gives_none():
    assert core_compat.task_environment(_action(None)) == {}


def test_the_module_tmpdir_removal_reaches_the_shell_of_the_connection(monkeypatch):
    action = _action(None)
    removed = []
    monkeypatch.setattr(action, "_remove_tmp_path", removed.append)
    action._connection._shell.tmpdir = "/tmp/ansible-tmp-x"
    core_compat.remove_module_tmpdir(action)
    assert removed == ["/tmp/ansible-tmp-x"]
