# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The checker of test_site.py finds what it is there to find: each test damages a copy of the built site
the way a broken build or a careless edit would, and asserts the checker reports exactly that damage."""

from __future__ import annotations

import os
import re
import shutil

import pytest

import sitecheck

MODULE = sitecheck.COLLECTION_PAGES + "branch_module.html"
COLLECTION_INDEX = sitecheck.COLLECTION_PAGES + "index.html"
DOCS = sitecheck.plugin_docs()


@pytest.fixture
def copy(site, tmp_path):
    """A copy of the built site to damage."""
    path = tmp_path / "html"
    shutil.copytree(site, path)
    return path


def edit(path, change):
    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    changed = change(text)
    assert changed != text, "the damage did not apply to %s" % path
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(changed)


def without_element(text, start, tag):
    """text without the first <tag ...>...</tag> element that begins after start (nested ones counted)."""
    begin = text.index("<%s" % tag, text.index(start))
    depth, position = 0, begin
    for match in re.compile(r"<(/?)%s\b" % tag).finditer(text, begin):
        depth += -1 if match.group(1) else 1
        if depth == 0:
            position = text.index(">", match.end()) + 1
            break
    return text[:begin] + text[position:]


def test_a_module_page_that_lost_its_options_table(driver, copy):
    edit(copy / MODULE, lambda text: without_element(text, '<section id="parameters">', "table"))
    with sitecheck.Server(copy) as server:
        problems = sitecheck.plugin_page_problems(driver, server.url + MODULE, "module", DOCS[("branch", "module")])
        untouched = sitecheck.plugin_page_problems(driver, server.url + sitecheck.COLLECTION_PAGES + "team_module.html",
                                                   "module", DOCS[("team", "module")])
    assert problems == ["no options table under 'Parameters'"]
    assert untouched == []


def test_a_module_page_that_lost_an_option_its_examples_and_its_return_values(driver, copy):
    def damage(text):
        row = text.index('id="parameter-wait_timeout"')
        text = text[:text.rindex("<tr", 0, row)] + text[text.index("</tr>", row) + len("</tr>"):]
        text = without_element(text, '<section id="examples">', "div")
        return without_element(text, '<section id="return-values">', "table")

    edit(copy / MODULE, damage)
    with sitecheck.Server(copy) as server:
        problems = sitecheck.plugin_page_problems(driver, server.url + MODULE, "module", DOCS[("branch", "module")])
    assert problems == ["the options table does not show wait_timeout", "no examples under 'Examples'",
                        "no return values table under 'Return Values'"]


def test_a_collection_index_that_does_not_list_a_module(driver, copy):
    edit(copy / COLLECTION_INDEX, lambda text: re.sub(r'<li><p><a class="reference internal" href="team_module\.html'
                                                      r'[^\n]*</li>\n', "", text))
    with sitecheck.Server(copy) as server:
        page = sitecheck.load(driver, server.url + COLLECTION_INDEX)
        problems = sitecheck.listed_problems(page, server.url, dict(
            ("module %s" % name, "%s%s_module.html" % (sitecheck.COLLECTION_PAGES, name))
            for name, kind in DOCS if kind == "module"))
    assert problems == ["/%s does not link to %steam_module.html (module team)" % (
        COLLECTION_INDEX, sitecheck.COLLECTION_PAGES)]


def test_broken_links_a_missing_page_a_missing_anchor_and_a_missing_image(driver, copy):
    os.remove(copy / sitecheck.COLLECTION_PAGES / "token_module.html")
    edit(copy / MODULE, lambda text: text.replace('id="parameter-api_retries"', 'id="parameter-api-retries"', 1))
    os.remove(copy / "_images" / "benchmarks.png")
    with sitecheck.Server(copy) as server:
        pages = sitecheck.crawl(driver, server.url)
        problems = sitecheck.link_problems(pages, server.url)
    for problem in problems:
        print(problem)
    missing_page = [p for p in problems
                    if p.endswith(": /%stoken_module.html does not exist" % sitecheck.COLLECTION_PAGES)]
    missing_anchor = [p for p in problems if p.endswith(": no anchor #parameter-api_retries in /%s" % MODULE)]
    missing_image = [p for p in problems if "<img 'benchmarks.png'" in p or "<img '_images/benchmarks.png'" in p]
    # the token module's page is linked from the collection index, the module index and other modules' pages
    assert len(set(p.split(":")[0].split(" <")[0] for p in missing_page)) >= 3, missing_page
    assert missing_anchor and all(p.startswith(MODULE + " <a '#parameter-api_retries'") for p in missing_anchor)
    assert sorted(p.rsplit(": ", 1)[1] for p in missing_image) == ["/_images/benchmarks.png does not exist"], problems
    assert sorted(missing_page + missing_anchor + missing_image) == sorted(problems)  # nothing else was reported
