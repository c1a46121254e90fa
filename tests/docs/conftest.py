# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The documentation site in headless Chromium: the site `make docs` built (build/docs/build/html, or
DOCS_SITE), served on 127.0.0.1, one browser for the session. `make docs-site` builds, then runs these."""

from __future__ import annotations

import os

import pytest

import sitecheck


@pytest.fixture(scope="session")
def site():
    path = os.environ.get("DOCS_SITE") or sitecheck.SITE
    if not os.path.isfile(os.path.join(path, "index.html")):
        pytest.fail("No documentation site in %s: run `make docs` (or `make docs-site`)." % path)
    return path


@pytest.fixture(scope="session")
def server(site):
    with sitecheck.Server(site) as running:
        yield running


@pytest.fixture(scope="session")
def driver():
    try:
        running = sitecheck.browser()
    except RuntimeError as error:
        pytest.fail(str(error))
    yield running
    running.quit()


@pytest.fixture(scope="session")
def pages(driver, server):
    """Every page of the site, as the browser rendered it."""
    return sitecheck.crawl(driver, server.url)


@pytest.fixture(scope="session")
def artifacts():
    path = os.path.join(sitecheck.ROOT, "build", "docs-artifacts")
    os.makedirs(path, exist_ok=True)
    return path
