"""Check a built collection artifact for harness leakage and required content.

Usage: python hack/check-tarball.py planetscale-cloud-X.Y.Z.tar.gz

Fails (exit 1) when the tarball contains tests, the emulator, virtualenvs,
caches, harness scripts or CI files, or lacks the metadata and plugins that
make it a usable collection, or a module lacks its action file: the same file,
byte for byte, as every other module's (plugins/action/user_info.py).
"""

import json
import posixpath
import re
import sys
import tarfile

FORBIDDEN = [
    (re.compile(r'^tests(/|$)'), 'tests'),
    (re.compile(r'(^|/)emulator(/|$)'), 'emulator'),
    (re.compile(r'(^|/)\.?venv(/|$)'), 'virtualenv'),
    (re.compile(r'^build(/|$)'), 'build output'),
    (re.compile(r'^hack(/|$)'), 'harness scripts'),
    (re.compile(r'^\.ci(/|$)'), 'CI files'),
    (re.compile(r'^requirements(/|$)'), 'harness requirements'),
    (re.compile(r'^Makefile$'), 'Makefile'),
    (re.compile(r'(^|/)\.git(/|$|ignore$)'), 'git files'),
    (re.compile(r'(^|/)(__pycache__|\.pytest_cache|\.hypothesis|\.mypy_cache|\.ansible|\.cache)(/|$)'), 'cache'),
    (re.compile(r'\.py[co]$'), 'compiled python'),
    (re.compile(r'\.tar\.gz$'), 'nested tarball'),
    (re.compile(r'^changelogs/\.plugin-cache\.yaml$'), 'changelog plugin cache'),
    (re.compile(r'^docs/benchmarks[.-]'), 'benchmark report (the repository keeps it; users need none of it)'),
]

REQUIRED = ['MANIFEST.json', 'FILES.json', 'meta/runtime.yml', 'LICENSE', 'README.md', 'CHANGELOG.rst',
            'changelogs/changelog.yaml', 'meta/execution-environment.yml',
            # what Automation Platform reads from the installed collection (guide_automation_platform.rst)
            'extensions/audit/event_query.yml', 'extensions/credential_types/service_token.yml',
            'extensions/credential_types/oauth_application.yml', 'extensions/credential_types/webhook_secret.yml',
            'extensions/eda/plugins/event_source/webhook_deliveries.py', 'extensions/eda/plugins/event_source/webhook.py',
            'extensions/eda/eda_runtime.yml', 'extensions/eda/rulebooks/cutover.yml',
            'extensions/eda/rulebooks/cutover_job_template.yml', 'playbooks/cutover.yml', 'meta/ee-requirements.txt']

ACTION = 'plugins/action/user_info.py'  # every module's action file is this file, byte for byte


def action_problems(actions, modules):
    """Every module has its action file, a regular file that is the one action file byte for byte, and no other
    action plugin is shipped (CONTRIBUTING.md, "The action plugin"). actions: name -> content (None: not a file)."""
    problems = []
    if actions.get(ACTION) is None:
        problems.append('%s: missing, or not a file' % ACTION)
    for name, content in sorted(actions.items()):
        if name != ACTION and (content is None or content != actions.get(ACTION)):
            problems.append('%s: not the same file as %s' % (name, ACTION))
    expected = set('plugins/action/' + posixpath.basename(name) for name in modules)
    problems += ['%s: missing, the action of its module' % name for name in sorted(expected - set(actions))]
    problems += ['%s: an action plugin of no module' % name for name in sorted(set(actions) - expected)]
    return problems


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    path = sys.argv[1]
    with tarfile.open(path, 'r:gz') as tar:
        members = tar.getmembers()
        names = [m.name[2:] if m.name.startswith('./') else m.name for m in members]
        manifest = json.load(tar.extractfile('MANIFEST.json')) if 'MANIFEST.json' in names else {}
        actions = dict((name, tar.extractfile(member).read() if member.isfile() else None)
                       for name, member in zip(names, members)
                       if name.startswith('plugins/action/') and not member.isdir())

    problems = []
    for name in names:
        for pattern, what in FORBIDDEN:
            if pattern.search(name):
                problems.append('%s: %s must not be shipped' % (name, what))
                break
    for name in REQUIRED:
        if name not in names:
            problems.append('%s: missing' % name)
    modules = [n for n in names if re.match(r'^plugins/modules/[^/]+\.py$', n) and not n.endswith('/__init__.py')]
    if not modules:
        problems.append('plugins/modules/: no modules')
    problems += action_problems(actions, modules)
    info = manifest.get('collection_info', {})
    if (info.get('namespace'), info.get('name')) != ('planetscale', 'cloud'):
        problems.append('MANIFEST.json: unexpected collection %s.%s' % (info.get('namespace'), info.get('name')))

    files = [n for n, m in zip(names, members) if m.isfile()]
    print('%s: %d files, %d modules, version %s' % (path, len(files), len(modules), info.get('version')))
    if problems:
        for problem in problems:
            print('  FAIL ' + problem)
        sys.exit(1)
    print('  OK: no tests, emulator, venv, cache, hack/ or .ci/ content; metadata and plugins present; every module\'s '
          'action file is %s, byte for byte' % ACTION)


if __name__ == '__main__':
    main()
