# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a person sees of the documentation site, read in headless Chromium: the checker of tests/docs.

The site (the pages `make docs` writes) is served over HTTP on the loopback interface (Server) and
read in Debian's chromium through its chromedriver (browser()). The checks answer lists of problems,
each a sentence, so that a test can assert the site has none, and a test of the checker can assert
it reports a damage done on purpose:

- crawl(): every page reachable from the front page, as the browser rendered it (links, images, ids);
- link_problems(): every link or image of the site's own (same server) that leads nowhere: a missing
  page or file, a missing anchor, an image the browser could not show;
- plugin_page_problems(): a plugin page that does not show its options table with every option the
  plugin documents, its examples, or its return values; role_page_problems() likewise for a role's
  entry points;
- listed_problems(): a page that does not link every plugin or role of the collection.

What the collection documents is read from its sources (plugins/*/, roles/*/meta/argument_specs.yml)
by plugin_docs() and role_specs(), not from the site.
"""

from __future__ import annotations

import ast
import functools
import http.server
import os
import shutil
import threading
import urllib.error
import urllib.parse
import urllib.request

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SITE = os.path.join(ROOT, "build", "docs", "build", "html")
COLLECTION_PAGES = "collections/planetscale/cloud/"
# plugins/<folder> -> the plugin type in the page names antsibull-docs writes (<name>_<type>.html)
PLUGIN_TYPES = {"modules": "module", "filter": "filter", "inventory": "inventory", "lookup": "lookup", "test": "test",
                "callback": "callback", "connection": "connection"}
# the headings of a plugin page's sections, per plugin type: options, examples, return values
SECTIONS = {"module": ("Parameters", "Examples", "Return Values"),
            "filter": ("Keyword parameters", "Examples", "Return Value"),
            "test": ("Keyword parameters", "Examples", "Return Value"),
            "lookup": ("Keyword parameters", "Examples", "Return Value")}
DEFAULT_SECTIONS = ("Parameters", "Examples", "Return Values")

# Every element that makes the browser load something of the site, with the attribute that names it.
LINKS_JS = """
const found = [];
for (const [selector, attribute] of [['a[href]', 'href'], ['img[src]', 'src'], ['link[href]', 'href'],
                                     ['script[src]', 'src']]) {
  for (const element of document.querySelectorAll(selector)) {
    found.push({tag: element.tagName.toLowerCase(), raw: element.getAttribute(attribute),
                url: element[attribute], text: (element.innerText || element.alt || '').trim().slice(0, 80),
                main: element.closest('[role="main"]') !== null,
                rendered: element.tagName === 'IMG' ? element.complete && element.naturalWidth > 0 : null});
  }
}
const ids = Array.from(document.querySelectorAll('[id]'), element => element.id);
for (const element of document.querySelectorAll('a[name]')) ids.push(element.name);
return {links: found, ids: ids, title: document.title};
"""


class Server:
    """A directory served over HTTP on 127.0.0.1 (a free port), in a thread; url is its root."""

    def __init__(self, directory):
        handler = functools.partial(_QuietHandler, directory=str(directory))
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.url = "http://127.0.0.1:%d/" % self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(10)


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # pylint: disable=redefined-builtin
        pass


def browser(width=1280, height=1000):
    """Headless Chromium through chromedriver (Debian's chromium and chromium-driver, or CHROMIUM and
    CHROMEDRIVER); never downloads a browser or a driver."""
    # pylint: disable=import-outside-toplevel
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    chromium = os.environ.get("CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    driver = os.environ.get("CHROMEDRIVER") or shutil.which("chromedriver")
    if not chromium or not driver:
        raise RuntimeError("No chromium or chromedriver on PATH: `make browser` installs Debian's chromium and "
                           "chromium-driver (or set CHROMIUM and CHROMEDRIVER).")
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--window-size=%d,%d" % (width, height), "--hide-scrollbars", "--no-first-run",
                     "--disable-extensions", "--disable-background-networking"):
        options.add_argument(argument)
    return webdriver.Chrome(options=options, service=Service(executable_path=driver))


class Page:
    """A page as the browser rendered it: its links ({tag, raw, url, text, main, rendered}: main when in the
    page's content, not its navigation; rendered for an image the browser shows), ids and title."""

    def __init__(self, url, found):
        self.url = url
        self.links = found["links"]
        self.ids = set(found["ids"])
        self.title = found["title"]


def local(url, base):
    """The path of url under the server's root base (without query or fragment), or None when elsewhere."""
    if not url.startswith(base):
        return None
    return urllib.parse.unquote(urllib.parse.urlsplit(url).path)


def page_key(url):
    """A URL without its fragment and query, a directory's URL as its index.html."""
    parts = urllib.parse.urlsplit(url)
    path = parts.path + ("index.html" if parts.path.endswith("/") else "")
    return urllib.parse.urlunsplit((parts.scheme, parts.netloc, path, "", ""))


def load(driver, url):
    driver.get(url)
    return Page(url, driver.execute_script(LINKS_JS))


def crawl(driver, base, start="index.html"):
    """Every HTML page of the site reachable from start through links, as the browser rendered it:
    {page URL: Page}. Pages of other servers are not followed."""
    pages = {}
    queue = [page_key(urllib.parse.urljoin(base, start))]
    while queue:
        url = queue.pop(0)
        if url in pages or not status_ok(url):
            continue
        pages[url] = load(driver, url)
        for link in pages[url].links:
            target = page_key(link["url"] or "")
            if link["tag"] == "a" and local(target, base) is not None and target.endswith(".html") \
                    and target not in pages:
                queue.append(target)
    return pages


@functools.lru_cache(maxsize=None)
def status_ok(url):
    """Whether the server answers 200 to url (HEAD)."""
    try:
        with urllib.request.urlopen(urllib.request.Request(url, method="HEAD"), timeout=30) as answer:
            return answer.status == 200
    except urllib.error.HTTPError:
        return False


def link_problems(pages, base):
    """Every link or image of the crawled pages, to the site's own server, that leads nowhere: a page or
    file the server does not have, an anchor the target page does not have, an image not shown."""
    status_ok.cache_clear()
    problems = []
    for url, page in sorted(pages.items()):
        where = local(url, base).lstrip("/")
        for link in page.links:
            target = link["url"] or ""
            if local(target, base) is None:
                continue  # another site (or a javascript:/mailto: link): not ours to check here
            described = "%s <%s %r%s>" % (where, link["tag"], link["raw"],
                                          " %r" % link["text"] if link["text"] else "")
            if not status_ok(page_key(target)):
                problems.append("%s: %s does not exist" % (described, local(page_key(target), base)))
                continue
            fragment = urllib.parse.unquote(urllib.parse.urlsplit(target).fragment)
            if fragment and page_key(target) in pages and fragment not in pages[page_key(target)].ids:
                problems.append("%s: no anchor #%s in %s" % (described, fragment, local(page_key(target), base)))
            if link["tag"] == "img" and not link["rendered"]:
                problems.append("%s: the browser shows no image" % described)
    return problems


def _strings(path, names):
    """The string constants named so in a Python file (DOCUMENTATION, EXAMPLES, RETURN)."""
    with open(path, encoding="utf-8") as handle:
        tree = ast.parse(handle.read(), path)
    found = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            for target in node.targets:
                if isinstance(target, ast.Name) and target.id in names:
                    found[target.id] = node.value.value
    return found


def plugin_docs(root=ROOT):
    """{(name, type): {"options": [...], "examples": text, "return": [...]}} of every plugin the collection
    documents (a Python file with DOCUMENTATION in plugins/<type folder>/; modules by file name)."""
    docs = {}
    for folder, plugin_type in PLUGIN_TYPES.items():
        directory = os.path.join(root, "plugins", folder)
        if not os.path.isdir(directory):
            continue
        for entry in sorted(os.listdir(directory)):
            if not entry.endswith(".py") or entry.startswith("_"):
                continue
            found = _strings(os.path.join(directory, entry), ("DOCUMENTATION", "EXAMPLES", "RETURN"))
            if "DOCUMENTATION" not in found:
                continue
            documentation = yaml.safe_load(found["DOCUMENTATION"])
            name = entry[:-3] if plugin_type == "module" else documentation.get("name", entry[:-3])
            returned = yaml.safe_load(found.get("RETURN") or "") or {}
            docs[(name, plugin_type)] = dict(options=sorted(documentation.get("options") or {}),
                                             examples=(found.get("EXAMPLES") or "").strip(),
                                             returns=sorted(returned) if isinstance(returned, dict) else [])
    return docs


def role_specs(root=ROOT):
    """{role: {entry point: [option names]}} from roles/*/meta/argument_specs.yml."""
    roles = {}
    for role in sorted(os.listdir(os.path.join(root, "roles"))):
        path = os.path.join(root, "roles", role, "meta", "argument_specs.yml")
        if os.path.isfile(path):
            with open(path, encoding="utf-8") as handle:
                specs = yaml.safe_load(handle)["argument_specs"]
            roles[role] = dict((entry, sorted(spec.get("options") or {})) for entry, spec in specs.items())
    return roles


def _sections(driver):
    """{heading text: section element} of the displayed sections of the page (h2 headings)."""
    # pylint: disable=import-outside-toplevel
    from selenium.webdriver.common.by import By

    found = {}
    for heading in driver.find_elements(By.CSS_SELECTOR, "section > h2"):
        if heading.is_displayed():
            found[heading.text.strip()] = heading.find_element(By.XPATH, "..")
    return found


def _option_titles(element):
    """The option names a table shows (the bold titles of its rows that the browser displays)."""
    # pylint: disable=import-outside-toplevel
    from selenium.webdriver.common.by import By

    return set(title.text.strip() for title in element.find_elements(By.CSS_SELECTOR, "table .ansible-option-title")
               if title.is_displayed())


def plugin_page_problems(driver, url, plugin_type, doc):
    """What a plugin page fails to show: its options table (with every option), its examples (the plugin's
    EXAMPLES, as they are) and its return values (every top-level key)."""
    # pylint: disable=import-outside-toplevel
    from selenium.webdriver.common.by import By

    if not status_ok(url):
        return ["no page %s" % url]
    driver.get(url)
    options_heading, examples_heading, returns_heading = SECTIONS.get(plugin_type, DEFAULT_SECTIONS)
    sections = _sections(driver)
    problems = []
    # a filter's or test's input (_input) has a section of its own
    options = [name for name in doc["options"] if name != "_input"]
    if options:
        section = sections.get(options_heading)
        shown = _option_titles(section) if section is not None else set()
        if section is None:
            problems.append("no %r section" % options_heading)
        elif not shown:
            problems.append("no options table under %r" % options_heading)
        else:
            missing = [name for name in options if name not in shown]
            if missing:
                problems.append("the options table does not show %s" % ", ".join(missing))
    if doc["examples"]:
        section = sections.get(examples_heading)
        blocks = section.find_elements(By.CSS_SELECTOR, "div.highlight pre") if section is not None else []
        shown = "\n".join(block.text for block in blocks if block.is_displayed())
        if not blocks:
            problems.append("no examples under %r" % examples_heading)
        elif shown.split() != doc["examples"].split():
            problems.append("the examples shown are not the plugin's EXAMPLES")
    if doc["returns"]:
        section = sections.get(returns_heading)
        shown = _option_titles(section) if section is not None else set()
        if not shown:
            problems.append("no return values table under %r" % returns_heading)
        else:
            # a filter's _value (a lookup's _raw) shows as "Return value", not by its name
            missing = [name for name in doc["returns"] if name not in shown and not name.startswith("_")]
            if missing:
                problems.append("the return values table does not show %s" % ", ".join(missing))
    return problems


def role_page_problems(driver, url, entry_points):
    """What a role page fails to show: each entry point's section, with an options table of every option."""
    # pylint: disable=import-outside-toplevel
    from selenium.webdriver.common.by import By

    if not status_ok(url):
        return ["no page %s" % url]
    driver.get(url)
    problems = []
    headings = [heading for heading in driver.find_elements(By.CSS_SELECTOR, "section > h2") if heading.is_displayed()]
    for entry, options in sorted(entry_points.items()):
        matching = [heading for heading in headings if heading.text.startswith("Entry point %s" % entry)]
        if not matching:
            problems.append("no section for the entry point %r" % entry)
            continue
        shown = _option_titles(matching[0].find_element(By.XPATH, ".."))
        missing = [name for name in options if name not in shown]
        if missing:
            problems.append("entry point %r: the options table does not show %s" % (entry, ", ".join(missing)))
    return problems


def listed_problems(page, base, wanted):
    """Which of wanted ({description: page path under the server's root}) the page's content (not its
    navigation) does not link to."""
    linked = set(local(page_key(link["url"] or ""), base) for link in page.links if link["tag"] == "a" and link["main"])
    return ["%s does not link to %s (%s)" % (local(page.url, base), path, description)
            for description, path in sorted(wanted.items()) if "/" + path not in linked]
