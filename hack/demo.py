#!/usr/bin/env python3
# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""make demo: the collection's tour against a local emulator of the platform, on a fresh clone.

  1. starts the emulator (.venv/emulator) with its data plane (real MariaDB and PostgreSQL servers) on
     free loopback ports, seeds a few query-pattern reports, and gives ansible-playbook the PLANETSCALE_*
     variables of its world, as a user sets them;
  2. runs `ansible-playbook planetscale.cloud.demo` (playbooks/demo.yml) from this working tree; among its
     steps, the user's path of a schema change: a development branch and an admin password, the table
     orders made through that password's own connection (ansible.mysql.mysql_query, TLS verified), the
     deploy with the schema_change role, and a reader's password of production that reads the table;
  3. runs it again, and fails unless that run reports changed=0;
  4. runs a change with --check --diff, and fails if the emulator saw any write;
  5. says where the audit report is, checks that no output showed a secret, stops the emulator.

The test harness (tests/harness) starts the emulator and runs ansible-playbook. Run it with the
Python of .venv/new (make demo). Output goes to build/demo/ (the connection file, the OAuth token,
the audit report, the logs). Environment: DEMO_DIR (default build/demo), EMULATOR_HOST
(127.0.0.1), HEALTH_TIMEOUT (60), DEMO_READY_DELAY (seconds until a new branch is ready, default 2).
"""

from __future__ import annotations

import os
import shutil
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))

# pylint: disable=wrong-import-position
from harness import Ansible, Emulator, HarnessError, SecretWatch, demo_vars  # noqa: E402

CHANGE = dict(demo_team_description="Application engineers, reviewed in a dry run", demo_oauth_min_ttl=7200)


def step(text):
    print("\n\033[1m==== %s\033[0m" % text, flush=True)


def relative(path):
    return os.path.relpath(path, ROOT)


def tour(out, emulator, ansible):
    """The three runs; an error message, or None when the tour went as it should."""
    step("1/3 The tour: ansible-playbook planetscale.cloud.demo")
    extra_vars = demo_vars(emulator, os.path.join(out, "output"))
    ansible.watch.learn(extra_vars["demo_oauth_code"])
    first = ansible.run("planetscale.cloud.demo", extra_vars, echo=True)
    keep(first, os.path.join(out, "run1.log"))
    if first.rc != 0:
        return "the tour failed (exit %s)" % first.rc
    if "The orders table, made on " not in first.output:
        return "the tour did not read the new orders table in production"

    step("2/3 The same playbook again: nothing to change (full output: %s)" % relative(os.path.join(out, "run2.log")))
    second = ansible.run("planetscale.cloud.demo", extra_vars)
    keep(second, os.path.join(out, "run2.log"))
    if second.rc != 0:
        print("".join(second.output.splitlines(True)[-40:]))
        return "the second run failed (exit %s)" % second.rc
    for line in second.output.splitlines():
        if line.startswith(("PLAY", "changed", "fatal")) or line.startswith("localhost ") and " ok=" in line:
            print(line)
    if second.changed != 0:
        return "the second run reported changed=%s; it must change nothing" % second.changed
    print("second run: changed=0")

    step("3/3 A change, as a dry run: --check --diff (a new team description; refresh the token when it lives "
         "less than 2 hours)")
    emulator.clear_requests()
    third = ansible.run("planetscale.cloud.demo", dict(extra_vars, **CHANGE), check=True, diff=True, echo=True)
    keep(third, os.path.join(out, "run3.log"))
    if third.rc != 0:
        return "the dry run failed (exit %s)" % third.rc
    log = emulator.requests()
    writes = [entry for entry in log if entry["method"] not in ("GET", "HEAD")]
    if writes:
        return "the --check run sent %d write requests" % len(writes)
    print("check run: %d requests to the emulator, none of them a write" % len(log))

    if ansible.watch.leaks:  # the service token, the client secret, the code, any password or token value
        return "a secret appears in the output (see %s)" % relative(os.path.join(out, "run*.log"))
    return None


def keep(run, path):
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(run.output)


def main():
    out = os.path.abspath(os.environ.get("DEMO_DIR") or os.path.join(ROOT, "build", "demo"))
    # A fresh emulator knows none of the last run's tokens or passwords: start from scratch.
    for stale in ("output", "ansible", "collections"):
        shutil.rmtree(os.path.join(out, stale), ignore_errors=True)
    os.makedirs(os.path.join(out, "output"), mode=0o700)
    os.chmod(os.path.join(out, "output"), 0o700)

    step("Starting the platform emulator")
    emulator = Emulator(os.path.join(out, "emulator.log"), host=os.environ.get("EMULATOR_HOST", "127.0.0.1"),
                        ready_delay=float(os.environ.get("DEMO_READY_DELAY", "2")))
    try:
        emulator.start(timeout=float(os.environ.get("HEALTH_TIMEOUT", "60")))
        emulator.seed(reports=dict(branch="main", count=3))
        print("emulator: %s (log: %s)" % (emulator.url, relative(emulator.log_path)))
        print(emulator.dataplane.describe())
        watch = SecretWatch(by_design=())
        watch.learn(*emulator.secrets())
        # The credentials as a user would set them, for ansible-playbook only; never printed.
        ansible = Ansible(os.path.join(out, "ansible"), emulator=emulator, credentials="environment", watch=watch,
                          cwd=ROOT, env=dict(ANSIBLE_DISPLAY_SKIPPED_HOSTS="false", ANSIBLE_CALLBACK_RESULT_FORMAT="yaml"))
        print("ansible-playbook gets PLANETSCALE_API_URL, PLANETSCALE_AUTH_URL, PLANETSCALE_ORG=%s, "
              "PLANETSCALE_SERVICE_TOKEN_ID/_TOKEN and PLANETSCALE_CLIENT_ID/_SECRET (values not shown)"
              % emulator.world["organization"])
        start = time.monotonic()
        error = tour(out, emulator, ansible)
    except HarnessError as failure:
        error = str(failure)
    finally:
        emulator.stop()
        print("emulator stopped")
    if error:
        print("error: %s" % error, file=sys.stderr)
        return 1
    step("Done in %ds" % (time.monotonic() - start))
    print("The audit report:          %s" % relative(os.path.join(out, "output", "audit.md")))
    for name in sorted(os.listdir(os.path.join(out, "output"))):
        if name.startswith("deploy-") and name.endswith("-report.md"):  # with ansible.mysql: after the schema change
            print("The report on the deploy:  %s" % relative(os.path.join(out, "output", name)))
    print("The preview's connection:  %s (mode 0600, holds a secret)"
          % relative(os.path.join(out, "output", "preview-connection.json")))
    print("The runs' output:          %s, run2.log, run3.log (no secret in them)" % relative(os.path.join(out, "run1.log")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
