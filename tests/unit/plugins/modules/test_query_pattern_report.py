# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

import gzip
import os
import stat
from datetime import datetime, timedelta, timezone

import pytest

from ansible_collections.planetscale.cloud.plugins.module_utils.base import ModuleFailure, TaskContext
from ansible_collections.planetscale.cloud.plugins.modules import query_pattern_report
from ansible_collections.planetscale.cloud.plugins.modules.query_pattern_report import QueryPatternReport

URL = "/v1/organizations/acme/databases/shop/branches/main/query-patterns"
CONTENT = gzip.compress(b"fingerprint,count\r\n\"select 1\",42\r\n", mtime=0)
FINISHED = "2026-11-22T01:02:03.456Z"
NOT_FOUND = (404, {"code": "not_found", "message": "Not Found"})
LOST = (502, {"code": "bad_gateway"})
BRANCH = "/v1/organizations/acme/databases/shop/branches/main"
BRANCH_READ = (200, dict(name="main"))  # read before a create: the server's time opens a lost create's window


MODULE = QueryPatternReport  # run by the `run` fixture (tests/unit/conftest.py) with ARGS
ARGS = dict(organization="acme", database="shop", branch="main", service_token_id="svc", service_token="s3cret")


def report(number=1, state="completed", finished_at=FINISHED, **fields):
    """A report as a read answers it; a pending one lacks finished_at and download_url, as the create's answer."""
    record = dict(id="qp%d" % number, state=state, created_at="2026-11-22T01:01:00.000Z", **fields)
    if state != "pending":
        record.update(finished_at=finished_at)
    return record


def seconds(stamp):
    return int(datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=timezone.utc).timestamp())


def cursor_page(*items):
    return (200, dict(data=list(items)))  # the bare envelope: a short page is the last


def download(server, content=CONTENT):
    """The download's 302 to another host (the signed storage), then the storage's answer."""
    storage = server.url.replace("127.0.0.1", "localhost") + "/signed/qp1?expires=1&signature=abc"
    return [(302, b"", {"Location": storage}), (200, content, {"Content-Type": "application/gzip"})]


def calls(server):
    return [(r["method"], r["path"]) for r in server.requests]


def written(path, stamp=FINISHED, content=b"old"):
    path.write_bytes(content)
    os.utime(path, (seconds(stamp), seconds(stamp)))
    return str(path)


def test_a_new_report_is_made_waited_for_and_downloaded_without_credentials(server, run, tmp_path, sleeps):
    dest = str(tmp_path / "patterns.csv.gz")
    server.script = [BRANCH_READ, (201, report(state="pending")), (200, report())] + download(server)
    result = run(dest=dest)
    assert result == dict(changed=True, report=report(), file=dest, downloaded=True)
    assert calls(server) == [("GET", BRANCH), ("POST", URL), ("GET", URL + "/qp1"), ("GET", URL + "/qp1/download"),
                             ("GET", "/signed/qp1")]
    assert server.requests[3]["headers"]["Authorization"] == "svc:s3cret"
    assert "Authorization" not in server.requests[4]["headers"]  # the signed storage gets no credential
    found = os.stat(dest)
    assert open(dest, "rb").read() == CONTENT and stat.S_IMODE(found.st_mode) == 0o600
    assert int(found.st_mtime) == seconds(FINISHED) and os.listdir(str(tmp_path)) == ["patterns.csv.gz"]
    assert len(sleeps) == 1


def test_a_file_already_downloaded_from_the_report_is_not_downloaded_again(server, run, tmp_path):
    dest = written(tmp_path / "patterns.csv.gz")
    server.script = [(200, report())]
    assert run(dest=dest, id="qp1", diff=True) == dict(changed=False, report=report(), file=dest, downloaded=False,
                                                       diff=dict(before=dict(report="qp1"), after=dict(report="qp1")))
    assert calls(server) == [("GET", URL + "/qp1")]
    server.requests.clear()
    server.script = [cursor_page(report(2, finished_at="2026-11-23T00:00:00.000Z"), report())]
    assert run(dest=dest)["report"] == report()  # without id: the report the file came from, no new one
    assert calls(server) == [("GET", URL)]


def test_a_file_no_listed_report_wrote_is_kept_without_a_report(server, run, tmp_path):
    dest = written(tmp_path / "mine.csv.gz", stamp="2020-01-01T00:00:00.000Z")
    server.script = [cursor_page(report())]
    assert run(dest=dest) == dict(changed=False, report=None, file=dest, downloaded=False)
    assert open(dest, "rb").read() == b"old"


def test_a_file_of_another_report_is_replaced_whole(server, run, tmp_path):
    dest = written(tmp_path / "patterns.csv.gz", stamp="2020-01-01T00:00:00.000Z")
    os.chmod(dest, 0o644)
    server.script = [(200, report())] + download(server)
    assert run(dest=dest, id="qp1", diff=True)["diff"] == dict(before={}, after=dict(report="qp1"))
    assert open(dest, "rb").read() == CONTENT and stat.S_IMODE(os.stat(dest).st_mode) == 0o600
    assert os.listdir(str(tmp_path)) == ["patterns.csv.gz"]


def test_force_makes_a_new_report_even_though_the_file_exists(server, run, tmp_path):
    dest = written(tmp_path / "patterns.csv.gz", stamp="2020-01-01T00:00:00.000Z")
    server.script = [BRANCH_READ, (201, report())] + download(server)
    assert run(dest=dest, force=True)["downloaded"] is True
    assert calls(server)[1] == ("POST", URL) and open(dest, "rb").read() == CONTENT


def test_check_mode_writes_nothing(server, run, tmp_path):
    dest = str(tmp_path / "patterns.csv.gz")
    assert run(dest=dest, check_mode=True, diff=True) == dict(
        changed=True, report=None, file=dest, downloaded=True, diff=dict(before={}, after=dict(report="(new)")))
    server.script = [(200, report(state="pending"))]
    assert run(dest=dest, id="qp1", check_mode=True)["downloaded"] is True
    server.script = [(200, report())]
    assert run(dest=dest, id="qp1", check_mode=True)["changed"] is True
    assert calls(server) == [("GET", URL + "/qp1")] * 2 and not os.path.exists(dest)


def test_without_wait_a_pending_report_is_returned_undownloaded(server, run, tmp_path):
    server.script = [BRANCH_READ, (201, report(state="pending"))]
    result = run(dest=str(tmp_path / "patterns.csv.gz"), wait=False)
    assert (result["changed"], result["downloaded"], result["report"]["state"]) == (True, False, "pending")
    assert calls(server) == [("GET", BRANCH), ("POST", URL)] and os.listdir(str(tmp_path)) == []


def test_a_lost_create_takes_the_report_made_meanwhile(server, run, tmp_path, sleeps):
    made = dict(report(7), created_at=(datetime.now(timezone.utc) + timedelta(seconds=1)).strftime(
        "%Y-%m-%dT%H:%M:%S.000Z"))
    server.script = [BRANCH_READ, LOST, cursor_page(made, report(1))] + download(server)
    ctx = TaskContext()
    assert run(dest=str(tmp_path / "patterns.csv.gz"), ctx=ctx)["report"]["id"] == "qp7"
    assert [c for c in calls(server) if c[0] == "POST"] == [("POST", URL)] and sleeps == []
    assert ctx.warnings == ["The answer to the request for a new query-pattern report of branch 'main' was lost; "
                            "report 'qp7', made meanwhile, is taken rather than making another."]


def test_a_lost_create_with_nothing_made_meanwhile_is_sent_again(server, run, tmp_path, sleeps):
    server.script = [BRANCH_READ, LOST, cursor_page(report(1)), (201, report(2))] + download(server)
    assert run(dest=str(tmp_path / "patterns.csv.gz"))["report"]["id"] == "qp2"
    assert [c for c in calls(server) if c[0] == "POST"] == [("POST", URL)] * 2 and len(sleeps) == 1


def test_a_failed_report_is_a_sentence(server, run, tmp_path):
    server.script = [(200, report(state="failed"))]
    with pytest.raises(ModuleFailure) as caught:
        run(dest=str(tmp_path / "patterns.csv.gz"), id="qp1")
    assert caught.value.msg == ("Query-pattern report 'qp1' of branch 'main' of database 'shop' failed on the "
                                "platform: make a new one (leave id out).")
    server.script = [NOT_FOUND]
    with pytest.raises(ModuleFailure, match="^Query-pattern report 'qp9' of branch 'main' of database 'shop' does not "
                                            "exist; leave id out to make a new report.$"):
        run(dest=str(tmp_path / "patterns.csv.gz"), id="qp9")


def test_a_file_that_cannot_be_written_leaves_nothing_behind(server, run, tmp_path, monkeypatch):
    dest = written(tmp_path / "patterns.csv.gz", stamp="2020-01-01T00:00:00.000Z")
    server.script = [(200, report())] + download(server)

    def refuse(source, target):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(query_pattern_report.os, "replace", refuse)
    with pytest.raises(ModuleFailure) as caught:
        run(dest=dest, id="qp1")
    assert caught.value.msg == "The report could not be written to %s: No space left on device." % dest
    assert os.listdir(str(tmp_path)) == ["patterns.csv.gz"] and open(dest, "rb").read() == b"old"


def test_absent_deletes_the_report_by_id_or_by_the_file(server, run, tmp_path):
    server.script = [(200, report()), (204, b"")]
    assert run(state="absent", id="qp1") == dict(changed=True, report=report())
    assert calls(server) == [("GET", URL + "/qp1"), ("DELETE", URL + "/qp1")]
    server.requests.clear()
    dest = written(tmp_path / "patterns.csv.gz")
    server.script = [cursor_page(report()), (204, b"")]
    assert run(state="absent", dest=dest)["changed"] is True
    assert calls(server) == [("GET", URL), ("DELETE", URL + "/qp1")] and os.path.exists(dest)


def test_a_lost_delete_answer_is_read_back_and_the_report_gone_is_the_deletion(server, run):
    """DELETE answered 500 after it was applied (the transport does not resend a 500): the report read back is
    gone, so the deletion happened; a report still there lets the error stand."""
    server.script = [(200, report()), (500, {"code": "internal"}), NOT_FOUND]
    assert run(state="absent", id="qp1", api_retries=0) == dict(changed=True, report=report())
    assert calls(server) == [("GET", URL + "/qp1"), ("DELETE", URL + "/qp1"), ("GET", URL + "/qp1")]
    server.script = [(200, report()), (500, {"code": "internal"}), (200, report())]
    with pytest.raises(ModuleFailure):
        run(state="absent", id="qp1", api_retries=0)


def test_absent_is_no_change_when_gone_and_no_write_in_check_mode(server, run):
    server.script = [NOT_FOUND]
    assert run(state="absent", id="qp1") == dict(changed=False, report=None)
    server.script = [(200, report())]
    assert run(state="absent", id="qp1", check_mode=True)["changed"] is True
    assert [c[0] for c in calls(server)] == ["GET", "GET"]


@pytest.mark.parametrize("args, message", [
    (dict(), "dest is needed: the file to download the report to."),
    (dict(state="absent"), "state=absent deletes a report: give its id, or dest, the file downloaded from it."),
    (dict(dest="patterns.csv.gz"), "dest must be an absolute path, not 'patterns.csv.gz'."),
    (dict(dest="/", id="qp1"), "dest / is a directory: name the file to write, such as /query-patterns.csv.gz."),
    (dict(dest="/no/such/dir/p.csv.gz"), "The directory of dest, /no/such/dir, does not exist: create it first."),
    (dict(dest="/tmp/p.csv.gz", id="qp1", force=True), "force makes a new report: it is for state=present without id."),
    (dict(id="qp1", state="absent", force=True), "force makes a new report: it is for state=present without id."),
    (dict(dest="/tmp/p.csv.gz", id="../x"), "id must be a name, not '../x'."),
])
def test_bad_input_fails_before_any_request(server, run, args, message):
    with pytest.raises(ModuleFailure) as caught:
        run(**args)
    assert caught.value.msg == message
    assert server.requests == []
