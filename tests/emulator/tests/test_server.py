"""Against real servers: dropped connections, concurrency, cross-host redirects, the CLI and TLS."""

import gzip
import ssl
import sys
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from email.utils import parsedate_to_datetime

import httpx2
import pytest
from harness.emulator import Emulator

from .conftest import DB, MAIN


def test_drop_closes_the_connection_without_an_answer(remote):
    remote.control("POST", "/faults", json={"rules": [{"path": "/user$", "drop": True, "times": 1}]})
    with pytest.raises(httpx2.RemoteProtocolError):
        remote.get("/v1/user")
    assert remote.get("/v1/user").status_code == 200
    dropped = remote.control("GET", "/requests").json()[0]
    assert dropped["status"] is None and dropped["fault"] == {"drop": True}


def test_the_date_header_follows_the_emulator_clock(remote):
    """One Date header per answer, on the emulator's clock, as token lifetimes are measured on it: each
    answer's Date lies between the clock's readings just before and just after it (however slowly the
    machine answers), and moving the clock moves it."""

    def clock():
        return datetime.fromisoformat(remote.control("GET", "/clock").json()["now"].replace("Z", "+00:00"))

    def read_between_clock_readings():
        earliest = clock()
        answer = remote.get("/v1/user")
        latest = clock()
        assert len(answer.headers.get_list("date")) == 1
        date = parsedate_to_datetime(answer.headers["date"])
        assert earliest.replace(microsecond=0) <= date <= latest
        return date

    before = read_between_clock_readings()
    remote.advance(86400)
    after = read_between_clock_readings()
    assert (after - before).total_seconds() >= 86400
    control = remote.control("GET", "/clock")
    assert len(control.headers.get_list("date")) == 1
    assert parsedate_to_datetime(control.headers["date"]) >= after


def test_drop_after_commit_applies_the_request(remote):
    rule = {"method": "POST", "path": "/passwords$", "drop": True, "after_commit": True, "times": 1}
    remote.control("POST", "/faults", json={"rules": [rule]})
    with pytest.raises(httpx2.RemoteProtocolError):
        remote.post(f"{MAIN}/passwords", json={"name": "lost-answer"})
    names = [p["name"] for p in remote.get(f"{MAIN}/passwords").json()["data"]]
    assert names == ["lost-answer"]


def test_concurrent_creations(remote, server):
    limits = httpx2.Limits(max_connections=50)
    with httpx2.Client(
        base_url=f"http://127.0.0.1:{server.port}", limits=limits, trust_env=False, timeout=30
    ) as client:

        def create(name):
            body = {"name": name, "parent_branch": "main"}
            return client.post(f"{DB}/branches", json=body, headers=remote.auth).status_code

        with ThreadPoolExecutor(50) as pool:
            distinct = list(pool.map(create, [f"c-{n}" for n in range(50)]))
            same = list(pool.map(create, ["shared"] * 50))
    assert distinct == [201] * 50
    assert sorted(same) == [201] + [422] * 49
    listed = remote.get(f"{DB}/branches", params={"per_page": 100}).json()
    assert listed["total_count"] == 52
    assert [b["name"] for b in listed["data"]].count("shared") == 1


def test_download_redirect_goes_to_another_host_without_credentials(remote, server):
    report = remote.post(f"{MAIN}/query-patterns").json()
    remote.advance(1.0)
    remote.control("DELETE", "/requests")
    response = remote.client.get(
        f"{MAIN}/query-patterns/{report['id']}/download", headers=remote.auth, follow_redirects=True
    )
    assert response.status_code == 200 and gzip.decompress(response.content).decode().count(report["id"]) == 1
    assert response.url.host == "localhost" and response.url.port == server.port
    download, signed = remote.control("GET", "/requests").json()
    assert (download["status"], download["authorization_sent"]) == (302, True)
    assert signed["path"] == f"/_emulator/signed/{report['id']}"
    assert (signed["status"], signed["authorization_sent"], signed["credential"]) == (200, False, "none")


def test_large_team_seeds_and_pages_over_http(remote):
    """5,000 seeded members page out in full over a real server (speed is the benchmark's business)."""
    seeded = remote.control("POST", "/seed", json={"team_members": {"team": "everyone", "count": 5000}})
    assert seeded.status_code == 200 and len(seeded.json()["team_members"]) == 5000
    path = "/v1/organizations/acme/teams/everyone/members"
    for page in range(46, 54):
        response = remote.get(path, params={"page": page, "per_page": 100})
        assert response.status_code == 200 and len(response.json()["data"]) == (60 if page == 53 else 100)


def test_cli_serves_https_with_a_generated_ca(tmp_path):
    """python -m emulator, as the test harness starts it (this Python), waiting for the line it prints when ready."""
    emulator = Emulator(str(tmp_path / "emulator.log"), python=sys.executable, tls=True, cert_dir=str(tmp_path),
                        ready_delay=0, args=["--rate-limit", "600"]).start()
    try:
        base = emulator.url
        assert base.startswith("https://")
        context = ssl.create_default_context(cafile=str(tmp_path / "ca.pem"))
        for host in (base, base.replace("127.0.0.1", "localhost")):
            with httpx2.Client(base_url=host, verify=context, trust_env=False) as client:
                assert client.get("/_emulator/health").status_code == 200
                world = client.get("/_emulator/world").json()
                assert world["api_url"] == f"{host}/v1"
                settings = client.get("/_emulator/settings").json()
                assert (settings["ready_delay"], settings["rate_limit"]) == (0, 600)
        with pytest.raises(httpx2.ConnectError):
            httpx2.get(f"{base}/_emulator/health", trust_env=False)  # not trusted without ca.pem
    finally:
        emulator.stop()


def test_the_cli_counts_the_tls_handshakes_a_client_refuses(tmp_path):
    """A connection whose TLS handshake the client gives up never reaches the request log; the server counts it."""
    emulator = Emulator(str(tmp_path / "emulator.log"), python=sys.executable, tls=True, cert_dir=str(tmp_path)).start()
    try:
        emulator.clear_requests()
        with pytest.raises(httpx2.ConnectError):
            httpx2.get(f"{emulator.url}/v1/user", trust_env=False)  # the emulator's CA is not trusted
        with httpx2.Client(verify=ssl.create_default_context(cafile=emulator.ca), trust_env=False) as client:
            assert client.get(f"{emulator.url}/v1/user").status_code == 401
        assert [entry["status"] for entry in emulator.requests()] == [401]
        counted = emulator.connections()
        assert counted["refused"] == 1 and counted["accepted"] >= 3  # and the control API's own
        emulator.reset()
        assert emulator.connections()["refused"] == 0
    finally:
        emulator.stop()
