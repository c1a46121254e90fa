# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One test that checks each item of a list, in place of a test per item.

ansible-test runs every unit test in a process of its own (its ansible_forked plugin): a static rule checked for
each of fifty modules cost fifty processes, more than the checks themselves. A test decorated with each(items)
checks every item in one process and, when any fails, fails naming each failing item with its own message (pytest's
assertion rewriting still explains each one):

    @each(MODULES)
    def test_every_module_documents_its_options(name):
        assert ...
"""

from __future__ import annotations


def each(items, label=str):
    """The decorated check, run for every item (a tuple is spread over the check's parameters), as one test."""
    items = list(items)

    def decorate(check):
        def test():
            assert items, "%s has nothing to check" % check.__name__
            failures = []
            for item in items:
                try:
                    check(*item) if isinstance(item, tuple) else check(item)
                except Exception as error:  # pylint: disable=broad-exception-caught  # each one's failure, named
                    failures.append("%s: %s: %s" % (label(item), type(error).__name__, error))
            assert not failures, "%d of %d failed:\n%s" % (len(failures), len(items), "\n".join(failures))

        test.__name__, test.__qualname__, test.__doc__ = check.__name__, check.__qualname__, check.__doc__
        test.__module__ = check.__module__
        return test

    return decorate
