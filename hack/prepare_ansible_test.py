"""Prepare ~/.ansible/test for ansible-test runs; safe to run concurrently.

Run with the Python of a virtualenv that has ansible-core installed.

1. pip bootstrap: `ansible-test ... --venv` bootstraps pip into its virtual
   environments with a get-pip script downloaded from a host that is not
   reachable everywhere, unless a cached copy exists. This reads the pip
   version(s) the installed ansible-test bootstraps and, for each, puts
   hack/get_pip_standin.py at ~/.ansible/test/cache/get_pip_<version, dots as
   underscores>.py. A real cached get-pip script is left alone; an older copy
   of the stand-in is refreshed.
2. SSH key: ansible-test creates ~/.ansible/test/id_rsa on first use, which
   fails when two runs (the parallel integration runs) do it at once. Create
   it here first, the same way, atomically.
"""

import fcntl
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tempfile

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


def pip_bootstrap():
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
        fd, tmp = tempfile.mkstemp(dir=cache_dir, prefix='.get_pip-')
        with os.fdopen(fd, 'w', encoding='utf-8') as handle:
            handle.write(standin)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
        print('pip bootstrap: wrote stand-in %s (pip %s)' % (path, version))


def ssh_key():
    base = os.path.expanduser(os.path.join('~', '.ansible', 'test'))
    key, pub = os.path.join(base, 'id_rsa'), os.path.join(base, 'id_rsa.pub')
    if os.path.isfile(key) and os.path.isfile(pub):
        return
    if not shutil.which('ssh-keygen'):
        print('ssh key: ssh-keygen not found; leaving %s to ansible-test' % key)
        return
    os.makedirs(base, exist_ok=True)
    with open(os.path.join(base, '.keygen.lock'), 'w', encoding='utf-8') as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        _generate(key, pub, base)


def _generate(key, pub, base):
    if os.path.isfile(key) and os.path.isfile(pub):
        return
    tmpdir = tempfile.mkdtemp(dir=base, prefix='.keygen-')
    try:
        tmp_key = os.path.join(tmpdir, 'id_rsa')
        subprocess.run(['ssh-keygen', '-m', 'PEM', '-q', '-t', 'rsa', '-N', '', '-f', tmp_key],
                       check=True, stdout=subprocess.DEVNULL)
        # as ansible-test does: paramiko wants the RSA-specific PEM header
        with open(tmp_key, encoding='utf-8') as handle:
            contents = re.sub(r'(BEGIN|END) PRIVATE KEY', r'\1 RSA PRIVATE KEY', handle.read())
        with open(tmp_key, 'w', encoding='utf-8') as handle:
            handle.write(contents)
        os.replace(tmp_key, key)
        os.replace(tmp_key + '.pub', pub)
        print('ssh key: created %s' % key)
    finally:
        shutil.rmtree(tmpdir, ignore_errors=True)


def main():
    pip_bootstrap()
    ssh_key()


if __name__ == '__main__':
    main()
