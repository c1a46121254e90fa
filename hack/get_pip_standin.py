# planetscale.cloud harness: get-pip stand-in (installed by hack/prepare_ansible_test.py)
"""Offline stand-in for the get-pip.py script that ansible-test downloads.

``ansible-test ... --venv`` creates empty virtual environments and bootstraps
pip into them with a get-pip script fetched from a host that is not reachable
from every machine. ansible-test first looks for a cached copy of that script,
and runs it (through its quiet_pip.py wrapper) with the virtual environment's
Python, passing pip install arguments such as::

    --disable-pip-version-check pip==25.2 --no-setuptools --no-wheel

This stand-in gets pip from the interpreter's bundled ensurepip instead and
then installs the requested packages from the configured package index.
ensurepip runs in a SUBPROCESS: run in-process it isolates pip from the
machine's pip configuration (index mirrors, certificates) for the rest of the
process.
"""

import subprocess
import sys

DROPPED_ARGS = ('--no-setuptools', '--no-wheel')  # get-pip.py only options


def main():
    args = [arg for arg in sys.argv[1:] if arg not in DROPPED_ARGS]
    commands = [
        [sys.executable, '-m', 'ensurepip', '--upgrade'],
        [sys.executable, '-m', 'pip', 'install', '--upgrade'] + args,
    ]
    for command in commands:
        returncode = subprocess.call(command)
        if returncode:
            sys.stderr.write('get-pip stand-in: %r failed with exit code %d\n' % (command, returncode))
            sys.exit(returncode)


if __name__ == '__main__':
    main()
