# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The built documentation site, as a person sees it in a browser."""

from __future__ import annotations

import os

import pytest
import yaml

import sitecheck

DOCS = sitecheck.plugin_docs()
ROLES = sitecheck.role_specs()
COLLECTION_INDEX = sitecheck.COLLECTION_PAGES + "index.html"
with open(os.path.join(sitecheck.ROOT, "docs", "docsite", "extra-docs.yml"), encoding="utf-8") as extra_docs:
    # every guide the site's table of contents names, so that a new one is checked without being listed here
    GUIDES = tuple(entry[len("guide_"):] for section in yaml.safe_load(extra_docs)["sections"]
                   for entry in section["toctree"] if entry.startswith("guide_"))


def page_path(name, plugin_type):
    return "%s%s_%s.html" % (sitecheck.COLLECTION_PAGES, name, plugin_type)


def test_the_collection_documents_its_modules_roles_and_filters():
    # what the other tests compare the site with, read from the sources
    modules = sorted(name[:-3] for name in os.listdir(os.path.join(sitecheck.ROOT, "plugins", "modules"))
                     if name.endswith(".py") and not name.startswith("_"))
    assert sorted(name for name, kind in DOCS if kind == "module") == modules
    assert ("md_escape", "filter") in DOCS and ("branches", "inventory") in DOCS
    assert sorted(ROLES) == sorted(os.listdir(os.path.join(sitecheck.ROOT, "roles")))
    assert all(doc["examples"] for doc in DOCS.values())
    assert sum(len(doc["options"]) for doc in DOCS.values()) > 3 * len(DOCS)


def test_the_collection_index_lists_every_plugin_role_and_guide(pages, server):
    index = pages[server.url + COLLECTION_INDEX]
    wanted = dict(("%s %s" % (kind, name), page_path(name, kind)) for name, kind in DOCS)
    wanted.update(("role %s" % role, page_path(role, "role")) for role in ROLES)
    wanted.update(("guide %s" % guide, sitecheck.COLLECTION_PAGES + "docsite/guide_%s.html" % guide)
                  for guide in GUIDES)
    assert sitecheck.listed_problems(index, server.url, wanted) == []
    assert index.title.startswith("Planetscale.Cloud")


def test_the_front_page_leads_to_the_collection_the_changelog_and_the_benchmarks(pages, server):
    front = pages[server.url + "index.html"]
    assert sitecheck.listed_problems(front, server.url, {
        "the collection": COLLECTION_INDEX, "the module index": "collections/index_module.html",
        "the changelog": "changelog.html", "the benchmarks": "benchmarks.html"}) == []


def test_the_front_page_lists_what_the_collection_ships_and_its_version(driver, pages, server):
    # generated from the sources (hack/docsite/front_page.py), so every module, role and plugin of this tree
    front = pages[server.url + "index.html"]
    wanted = dict(("%s %s" % (kind, name), page_path(name, kind)) for name, kind in DOCS)
    wanted.update(("role %s" % role, page_path(role, "role")) for role in ROLES)
    assert sitecheck.listed_problems(front, server.url, wanted) == []
    with open(os.path.join(sitecheck.ROOT, "galaxy.yml"), encoding="utf-8") as handle:
        version = str(yaml.safe_load(handle)["version"])
    with open(os.path.join(sitecheck.ROOT, "changelogs", "changelog.yaml"), encoding="utf-8") as handle:
        released = (yaml.safe_load(handle).get("releases") or {}).get(version)
    driver.get(server.url + "index.html")
    shown = driver.find_element("css selector", '[role="main"]').text
    # the version, and whether the release notes have it: released (with its date) or in preparation
    assert "Version %s (%s" % (version, "released %s)" % released["release_date"] if released
                               else "not released yet") in shown
    for playbook in sorted(name[:-4] for name in os.listdir(os.path.join(sitecheck.ROOT, "playbooks"))
                           if name.endswith(".yml")):
        assert "planetscale.cloud.%s:" % playbook in shown, playbook


@pytest.mark.parametrize("name, plugin_type", sorted(DOCS), ids=["%s_%s" % key for key in sorted(DOCS)])
def test_a_plugin_page_shows_its_options_examples_and_return_values(driver, server, name, plugin_type):
    url = server.url + page_path(name, plugin_type)
    assert sitecheck.plugin_page_problems(driver, url, plugin_type, DOCS[(name, plugin_type)]) == []


@pytest.mark.parametrize("role", sorted(ROLES))
def test_a_role_page_shows_every_option_of_its_entry_points(driver, server, role):
    assert sitecheck.role_page_problems(driver, server.url + page_path(role, "role"), ROLES[role]) == []


def test_no_link_or_image_of_the_site_leads_nowhere(pages, server):
    assert len(pages) >= len(DOCS) + len(ROLES) + len(GUIDES) + 3  # every page was read, not just a few
    links = sum(len(page.links) for page in pages.values())
    assert links > 20 * len(pages)
    problems = sitecheck.link_problems(pages, server.url)
    assert problems == [], "%d links lead nowhere:\n%s" % (len(problems), "\n".join(problems))


def test_the_changelog_and_the_benchmark_page_with_its_charts(driver, pages, server):
    changelog = pages[server.url + "changelog.html"]
    assert "Release Notes" in changelog.title
    benchmarks = pages[server.url + "benchmarks.html"]
    charts = [link for link in benchmarks.links if link["tag"] == "img" and "benchmarks" in link["raw"]]
    assert sorted(chart["raw"].rsplit("/", 1)[-1] for chart in charts) == ["benchmarks-scaling.png", "benchmarks.png"]
    assert all(chart["rendered"] for chart in charts), charts
    driver.get(server.url + "benchmarks.html")
    widths = driver.execute_script(
        "return Array.from(document.querySelectorAll('img[src*=benchmarks]')).map(image => image.naturalWidth)")
    assert len(widths) == 2 and min(widths) > 400  # the charts themselves, not placeholders


def test_screenshots_of_a_module_page(driver, server, artifacts):
    """Kept in build/docs-artifacts: the top of the branch module's page, and its options table."""
    # pylint: disable=import-outside-toplevel
    from selenium.webdriver.common.by import By

    driver.get(server.url + page_path("branch", "module"))
    top = os.path.join(artifacts, "branch_module.png")
    assert driver.save_screenshot(top)  # kept whatever the page shows
    tables = driver.find_elements(By.CSS_SELECTOR, "#parameters table")
    assert tables and tables[0].is_displayed(), "the branch module's page shows no options table (see %s)" % top
    # the Parameters heading at the top of the window, below the theme's fixed bar
    driver.execute_script("document.getElementById('parameters').scrollIntoView(); window.scrollBy(0, -60);")
    options = os.path.join(artifacts, "branch_module-parameters.png")
    assert driver.save_screenshot(options)
    for path in (top, options):
        with open(path, "rb") as handle:
            assert handle.read(8) == b"\x89PNG\r\n\x1a\n"
        assert os.path.getsize(path) > 10000
