"""The public regions (GET /regions, without credentials), the recorded shapes of the regions and of query-pattern
reports (recorded_regions_reports), and the report's download: a gzip CSV on the signed URL, which refuses a
request that also carries an Authorization header, as presigned storage does."""

import gzip

from .conftest import MAIN

PUBLIC = "/v1/regions"
PUBLISHED_REGION = {"id", "provider", "enabled", "public_ip_addresses", "display_name", "location", "slug"}


def ok(response, status=200):
    assert response.status_code == status, response.text
    return response.json() if status != 204 else None


def settings(api, **changes):
    assert api.control("POST", "/settings", json=changes).status_code == 200


def test_public_regions_need_no_credentials_and_are_the_organizations(api):
    listed = ok(api.client.get(PUBLIC, params={"per_page": 100}))
    organization = ok(api.get("/v1/organizations/acme/regions", params={"per_page": 100}))
    assert [r["slug"] for r in listed["data"]] == [r["slug"] for r in organization["data"]]
    assert all(region.keys() == PUBLISHED_REGION for region in listed["data"])
    assert (listed["type"], listed["next_page"], listed["total_count"]) == ("list", None, len(listed["data"]))
    second = ok(api.client.get(PUBLIC, params={"per_page": 2, "page": 2}))
    assert second["data"] == listed["data"][2:4] and second["prev_page"] == 1
    assert api.control("GET", "/requests").json()[0]["credential"] == "none"


def test_public_regions_refuse_invalid_credentials_as_every_path_does(api):
    response = api.client.get(PUBLIC, headers={"Authorization": "nobody:wrong"})
    assert response.status_code == 401 and response.json()["code"] == "unauthorized"


def test_recorded_public_regions_are_bare_with_type_and_current_default(api):
    settings(api, lean=True)
    listed = ok(api.client.get(PUBLIC))
    assert listed.keys() == {"data"}
    first = listed["data"][0]
    assert (first["type"], first["slug"], first["current_default"]) == ("Region", "us-east", True)
    assert all("public_ip_addresses" not in region for region in listed["data"])
    assert "public_ip_addresses" in ok(api.get("/v1/organizations/acme/regions"))["data"][0]  # only the public list


def test_recorded_reports_leave_out_what_real_answers_lack(api):
    settings(api, recorded_regions_reports=True)
    created = ok(api.post(f"{MAIN}/query-patterns"), 201)
    assert created["state"] == "pending" and {"download_url", "finished_at"}.isdisjoint(created)
    assert {"url", "actor"} <= created.keys()
    api.advance(1.0)
    done = ok(api.get(f"{MAIN}/query-patterns/{created['id']}"))
    assert done["state"] == "completed" and done["finished_at"] and done["download_url"].endswith("/download")
    assert {"url", "actor"}.isdisjoint(done)


def test_the_signed_download_is_a_gzip_csv_without_credentials(api):
    report = ok(api.post(f"{MAIN}/query-patterns"), 201)
    api.advance(1.0)
    location = api.get(f"{MAIN}/query-patterns/{report['id']}/download", follow_redirects=False).headers["location"]
    signed = location.replace("http://localhost", "")
    refused = api.client.get(signed, headers=api.auth)
    assert refused.status_code == 400 and "Only one auth mechanism allowed" in refused.text
    served = api.client.get(signed)
    assert served.status_code == 200 and served.headers["content-type"] == "application/gzip"
    assert "content-encoding" not in served.headers  # the bytes are the file: nothing decompresses them on the way
    header, row = gzip.decompress(served.content).decode().splitlines()
    assert header == "report,organization,database,branch,fingerprint,count,total_time_ms"
    assert row.startswith(f"{report['id']},acme,app,main,")
    assert api.client.get(signed).content == served.content  # the same report is the same bytes
