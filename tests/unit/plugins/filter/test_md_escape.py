# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""md_escape: API text written into Markdown renders as that text, never as markup."""

from __future__ import annotations

import html
import re

import pytest
from ansible.errors import AnsibleFilterError
from hypothesis import given, settings
from hypothesis import strategies as st

from ansible_collections.planetscale.cloud.plugins.filter.md_escape import FilterModule, md_escape

FORGED = "x\n# Forged\n| a |"


@pytest.mark.parametrize("value, escaped", [
    (FORGED, "x \\# Forged \\| a \\|"),
    ("a\\b `c` *d* _e_ [f](g) <h> #i |j ~k &amp;", "a\\\\b \\`c\\` \\*d\\* \\_e\\_ \\[f\\](g) \\<h\\> \\#i \\|j \\~k \\&amp;"),
    ("- item", "\\- item"), ("+ item", "\\+ item"), ("-", "\\-"), ("1. first", "1\\. first"), ("12) twelfth", "12\\) twelfth"),
    ("192.0.2.0/24", "192.0.2.0/24"), ("2026-11-22T01:02:03Z", "2026-11-22T01:02:03Z"), ("us-east", "us-east"),
    ("a-b + c", "a-b + c"), ("    indented\n", "indented"), ("a\r\nb\rc\nd", "a b c d"),
    ("AWS us-east-1 (N. Virginia)", "AWS us-east-1 (N. Virginia)"), (None, ""), (260, "260"),
])
def test_markup_is_escaped_and_lines_are_joined(value, escaped):
    assert md_escape(value) == escaped


def test_breaks_keep_the_lines_as_br():
    assert md_escape(FORGED, breaks=True) == "x<br>\\# Forged<br>\\| a \\|"
    assert md_escape("<br>", breaks=True) == "\\<br\\>"


@pytest.mark.parametrize("value, span", [
    ("main", "`main`"), ("a`b", "``a`b``"), ("`x", "`` `x ``"), ("x``", "``` x`` ```"), (" x", "`  x `"),
    ("a|b", "`a\\|b`"), ("a\nb", "`a b`"), ("", ""), (None, ""), (" ", "` `"), ("  ", "`  `"),
])
def test_code_spans_cannot_be_closed_by_the_text(value, span):
    assert md_escape(value, code=True) == span


def test_options_must_be_booleans():
    with pytest.raises(AnsibleFilterError, match="breaks and code must be true or false"):
        md_escape("x", code="yes")


def test_the_filter_is_registered_by_its_name():
    assert FilterModule().filters() == dict(md_escape=md_escape)


# Rendered by a CommonMark parser with GitHub's tables: the text comes out as it went in ---------------

TEXT = st.text(st.one_of(st.sampled_from(list("\\`*_[]<>#|~&!-+=.)(:0123456789 \t\n\r\"'/")),
                         st.characters(exclude_categories=("Cs", "Cc"))), max_size=40)


def plain(text):
    """The text as a reader sees it: lines joined by spaces, no blanks around, as HTML."""
    return html.escape(re.sub(r"\r\n|\r|\n", " ", text).strip(), quote=False).replace('"', "&quot;")


def render(markdown):
    return pytest.importorskip("markdown_it").MarkdownIt("commonmark").enable("table").render(markdown)


@settings(max_examples=400, deadline=None)
@given(TEXT)
def test_a_paragraph_renders_as_the_text(text):
    rendered = render(md_escape(text))
    if rendered:  # a text of blanks only is no paragraph
        assert rendered.startswith("<p>") and rendered.endswith("</p>\n")
        assert rendered[3:-5].strip() == plain(text)
    else:
        assert plain(text) == ""


@settings(max_examples=400, deadline=None)
@given(TEXT, TEXT)
def test_a_table_row_keeps_its_cells_and_a_code_span_its_text(text, name):
    rendered = render("| a | b |\n| --- | --- |\n| %s | %s |\n" % (md_escape(text), md_escape(name, code=True)))
    cells = re.findall(r"<td>(.*?)</td>", rendered, re.S)
    assert rendered.count("<tr>") == 2 and len(cells) == 2, rendered
    assert cells[0].strip() == plain(text)
    flat = html.escape(re.sub(r"\r\n|\r|\n", " ", name or ""), quote=False).replace('"', "&quot;")
    assert cells[1] == ("<code>%s</code>" % flat if flat else "")
