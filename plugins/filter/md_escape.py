# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
name: md_escape
short_description: Write text from an API into Markdown as text, never as Markdown
version_added: 0.2.0
author:
  - planetscale.cloud contributors (@planetscale-ansible)
description:
  - Escapes the characters that Markdown (GitHub-flavoured, CommonMark) reads as markup, so that text
    such as a team's description cannot add headings, table rows, links, HTML or emphasis to a report.
  - Escapes C(\), C(`), C(*), C(_), C([), C(]), C(<), C(>), C(#), C(|), C(~) and C(&) with a backslash,
    and the C(-), C(+) or the dot or parenthesis after a number that would make the text start a list.
    Drops blanks around the text (four leading spaces would start a code block).
  - Turns every line break into a space (or C(<br>) with O(breaks=true)), so the text stays on the line,
    the table row or the paragraph where the template put it.
  - The result is safe in a paragraph, a heading, a list item and a table cell.
positional: _input
options:
  _input:
    description:
      - The text. Anything else is written as its string form; V(null) as an empty string.
    type: raw
    required: true
  breaks:
    description:
      - Write each line break as C(<br>) instead of a space, to keep the lines of a multi-line text.
    type: bool
    default: false
  code:
    description:
      - Return a code span instead, for names and IDs, quoted by more backticks than any run of
        backticks in the text.
      - A C(|) in it is written C(\|) so that the span can stand in a table cell, where GitHub-flavoured
        Markdown shows it as C(|).
    type: bool
    default: false
"""

EXAMPLES = r"""
- name: A heading and a paragraph from a team's name and description
  ansible.builtin.copy:
    dest: team.md
    mode: "0644"
    content: |
      ## {{ team.name | planetscale.cloud.md_escape }}

      {{ team.description | planetscale.cloud.md_escape(breaks=true) }}

- name: A table row with a name in a code span
  ansible.builtin.debug:
    msg: "| {{ branch.name | planetscale.cloud.md_escape(code=true) }} | {{ branch.state | planetscale.cloud.md_escape }} |"

# "x\n# Forged\n| a |" | planetscale.cloud.md_escape  =>  'x \# Forged \| a \|'
"""

RETURN = r"""
_value:
  description: The text, escaped for Markdown (or a code span with O(code=true)).
  type: str
"""

import re

from ansible.errors import AnsibleFilterError
from ansible.module_utils.common.text.converters import to_text

MARKUP = re.compile(r"([\\`*_\[\]<>#|~&])")
LINE_BREAK = re.compile(r"\r\n|\r|\n")
# what starts a list at the start of a line: a bullet or a number followed by . or ) and a space
LIST_START = re.compile(r"^(?:([-+])|(\d{1,9})([.)]))(?=\s|$)")
BACKTICKS = re.compile(r"`+")


def md_escape(value, breaks=False, code=False):
    """value as Markdown text (or a code span) that renders as the text it is and never as markup."""
    if not isinstance(breaks, bool) or not isinstance(code, bool):
        raise AnsibleFilterError("md_escape: breaks and code must be true or false.")
    text = "" if value is None else to_text(value, errors="surrogate_or_replace")
    if code:
        return _code_span(LINE_BREAK.sub(" ", text))
    # blanks around the text are dropped: four leading spaces would make it a code block
    text = MARKUP.sub(r"\\\1", text.strip(" \t\r\n"))
    text = LIST_START.sub(lambda m: "\\" + m.group(1) if m.group(1) else m.group(2) + "\\" + m.group(3), text)
    return LINE_BREAK.sub("<br>" if breaks else " ", text)


def _code_span(text):
    if not text:
        return ""
    fence = "`" * (max([len(run) for run in BACKTICKS.findall(text)] + [0]) + 1)
    # CommonMark strips one space from each end of a span that has one at both: pad when the text
    # starts or ends with a backtick (which would join the fence) or a space (which would be stripped);
    # a span of spaces only is left as it is
    pad = " " if text.strip(" ") and (text[0] in "` " or text[-1] in "` ") else ""
    return fence + pad + text.replace("|", "\\|") + pad + fence


class FilterModule:
    """Markdown filters of planetscale.cloud."""

    def filters(self):
        return dict(md_escape=md_escape)
