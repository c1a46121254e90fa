#!/usr/bin/env python3
# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""make db-collections: the database collections users run their DDL with, in build/collections.

Downloads the `ansible` package that requirements/db-collections.txt pins (with its hash, through pip and
its cache) and unpacks only ansible.mysql, community.mysql and community.postgresql from it into
build/collections/ansible_collections. Nothing is installed into a virtualenv. A stamp file remembers
what was unpacked; a second run with the same pin does nothing.

Usage: hack/db-collections.py PIP   (the pip of .venv/new)
"""

import os
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PIN = os.path.join(ROOT, "requirements", "db-collections.txt")
TARGET = os.path.join(ROOT, "build", "collections")
COLLECTIONS = ("ansible/mysql", "community/mysql", "community/postgresql")


def main(pip):
    with open(PIN, encoding="utf-8") as handle:
        pin = [line.strip() for line in handle if line.strip() and not line.startswith("#")]
    stamp = os.path.join(TARGET, ".unpacked")
    wanted = "\n".join(pin + list(COLLECTIONS)) + "\n"
    if os.path.exists(stamp) and open(stamp, encoding="utf-8").read() == wanted:
        print("db-collections: up to date (%s)" % ", ".join(COLLECTIONS))
        return 0
    started = time.monotonic()
    print("db-collections: downloading %s with pip (%s), for %s" % (
        " ".join(line.split()[0] for line in pin), os.path.relpath(PIN, ROOT), ", ".join(COLLECTIONS)), flush=True)
    with tempfile.TemporaryDirectory() as wheels:
        subprocess.run([pip, "download", "--quiet", "--no-deps", "--require-hashes", "-r", PIN, "-d", wheels],
                       check=True)
        (wheel,) = [os.path.join(wheels, name) for name in os.listdir(wheels) if name.endswith(".whl")]
        shutil.rmtree(TARGET, ignore_errors=True)
        with zipfile.ZipFile(wheel) as archive:
            for collection in COLLECTIONS:
                prefix = "ansible_collections/%s/" % collection
                members = [name for name in archive.namelist() if name.startswith(prefix)]
                if not members:
                    print("error: %s has no %s" % (os.path.basename(wheel), collection), file=sys.stderr)
                    return 1
                archive.extractall(TARGET, members)
    with open(stamp, "w", encoding="utf-8") as handle:
        handle.write(wanted)
    print("db-collections: %s unpacked into %s in %ds" % (", ".join(COLLECTIONS), os.path.relpath(TARGET, ROOT),
                                                            time.monotonic() - started))
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1]))
