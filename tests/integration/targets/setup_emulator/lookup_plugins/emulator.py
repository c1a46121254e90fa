# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Test-only lookup: read the platform emulator's control API (tests/emulator/README.md)."""

from __future__ import annotations

DOCUMENTATION = r"""
name: emulator
short_description: Read the platform emulator's control API (test-only)
description:
  - Gives the decoded JSON answer of C(GET /_emulator/TERM) for each term, for the integration targets that depend on
    C(setup_emulator).
  - The action of the same name changes the emulator (reset, faults, seeds, settings, clock).
options:
  _terms:
    description: What to read.
    type: list
    elements: str
    choices: [requests, faults, world, settings, clock, health]
    required: true
  url:
    description: The emulator's root URL.
    type: str
    vars:
      - name: planetscale_emulator_url
    required: true
"""

EXAMPLES = r"""
- name: The run sent no write
  ansible.builtin.assert:
    that:
      - lookup('emulator', 'requests') | rejectattr('method', 'eq', 'GET') | list == []
"""

RETURN = r"""
_raw:
  description: The answer of each term, decoded; with one term, lookup() gives that answer itself.
  type: list
  elements: raw
"""

import json
from urllib.error import HTTPError, URLError

from ansible.errors import AnsibleError
from ansible.module_utils.urls import open_url
from ansible.plugins.lookup import LookupBase

TERMS = ('requests', 'faults', 'world', 'settings', 'clock', 'health')


class LookupModule(LookupBase):

    def run(self, terms, variables=None, **kwargs):
        self.set_options(var_options=variables, direct=kwargs)
        control = self.get_option('url').rstrip('/') + '/_emulator/'
        answers = []
        for term in terms:
            if term not in TERMS:
                raise AnsibleError('emulator lookup: %r is not one of %s.' % (term, ', '.join(TERMS)))
            try:
                with open_url(control + term, timeout=30) as response:
                    answers.append(json.loads(response.read()))
            except HTTPError as exc:
                detail = exc.read().decode('utf-8', 'replace')[:500]
                raise AnsibleError('GET %s%s answered HTTP %s: %s' % (control, term, exc.code, detail)) from None
            except URLError as exc:
                raise AnsibleError('GET %s%s failed: %s' % (control, term, exc.reason)) from None
        return answers
