"""Make `ansible-test ... --venv` work without access to its get-pip download host.

Run with the Python of a virtualenv that has ansible-core installed. Reads the
pip version(s) that this ansible-test bootstraps into its virtual environments
and, for each, puts hack/get_pip_standin.py where ansible-test looks for a
cached get-pip script: ~/.ansible/test/cache/get_pip_<version, dots as
underscores>.py. A real cached get-pip script is left alone; an older copy of
the stand-in is refreshed.
"""

import importlib.util
import os
import re
import sys

MARKER = 'planetscale.cloud harness: get-pip stand-in'


def pip_versions():
    spec = importlib.util.find_spec('ansible_test')
    if spec is None or not spec.submodule_search_locations:
        sys.exit('error: ansible_test is not importable from %s' % sys.executable)
    source = os.path.join(list(spec.submodule_search_locations)[0], '_internal', 'python_requirements.py')
    with open(source, encoding='utf-8') as handle:
        text = handle.read()
    versions = sorted(set(re.findall(r"""\bpip\s*=\s*['"]([0-9][0-9A-Za-z.]*)['"]""", text)))
    if not versions:
        sys.exit('error: found no pip version in %s; ansible-test changed, update %s' % (source, __file__))
    return versions


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, 'get_pip_standin.py'), encoding='utf-8') as handle:
        standin = handle.read()
    cache_dir = os.path.expanduser(os.path.join('~', '.ansible', 'test', 'cache'))
    os.makedirs(cache_dir, exist_ok=True)
    for version in pip_versions():
        path = os.path.join(cache_dir, 'get_pip_%s.py' % version.replace('.', '_'))
        if os.path.exists(path):
            with open(path, encoding='utf-8', errors='replace') as handle:
                current = handle.read()
            if MARKER not in current:
                print('pip bootstrap: keeping existing get-pip script %s' % path)
                continue
            if current == standin:
                print('pip bootstrap: %s is current (pip %s)' % (path, version))
                continue
        with open(path + '.tmp', 'w', encoding='utf-8') as handle:
            handle.write(standin)
        os.replace(path + '.tmp', path)
        print('pip bootstrap: wrote stand-in %s (pip %s)' % (path, version))


if __name__ == '__main__':
    main()
