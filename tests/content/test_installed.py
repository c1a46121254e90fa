# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The built artifact: installed into an empty path, its demo playbook runs."""

from __future__ import annotations

import glob
import os
import subprocess

from harness import DB_COLLECTIONS_PATH, ROOT, demo_vars


def galaxy(ansible, collections_path, *args):
    """ansible-galaxy, with collections_path as the only configured collections path."""
    done = subprocess.run([os.path.join(ansible.bin, "ansible-galaxy")] + list(args),
                          env=ansible.env(collections_path=collections_path), cwd=ansible.workdir,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stdout
    return done.stdout


def test_built_collection_installs_and_runs_the_demo(ansible, emulator, tmp_path):
    installed = tmp_path / "installed"
    installed.mkdir()
    galaxy(ansible, str(installed), "collection", "build", "--output-path", str(tmp_path / "dist"), ROOT)
    tarballs = glob.glob(str(tmp_path / "dist" / "planetscale-cloud-*.tar.gz"))
    assert len(tarballs) == 1

    galaxy(ansible, str(installed), "collection", "install", "--collections-path", str(installed), tarballs[0])
    collection = installed / "ansible_collections" / "planetscale" / "cloud"
    for shipped in ("playbooks/demo.yml", "playbooks/audit.yml", "playbooks/templates/audit_report.md.j2",
                    "roles/branch_environment/meta/argument_specs.yml", "roles/oauth_session/tasks/main.yml",
                    "meta/execution-environment.yml", "meta/ee-requirements.txt", "docs/docsite/extra-docs.yml"):
        assert (collection / shipped).is_file(), shipped
    for left_out in ("tests", "hack", "Makefile", "requirements"):
        assert not (collection / left_out).exists(), left_out

    emulator.seed(reports=dict(branch="main", count=1))
    run = ansible.run("planetscale.cloud.demo", extra_vars=demo_vars(emulator, tmp_path / "demo"),
                      collections_path=os.pathsep.join((str(installed), DB_COLLECTIONS_PATH)))
    run.succeeded()
    assert str(collection / "roles" / "branch_environment") in run.output  # the installed copy's role ran
    assert (tmp_path / "demo" / "audit.md").is_file()
