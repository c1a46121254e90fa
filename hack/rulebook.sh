#!/usr/bin/env bash
# make setup-rulebook: ansible-rulebook (Event-Driven Ansible) in build/rulebook, for the end-to-end test of the
# event source planetscale.cloud.webhook (tests/content/test_eda_source.py, skipped without it). ansible-rulebook runs
# its rules in Drools, so it needs a Java runtime (17 or newer): Debian's default-jre-headless is installed with
# apt-get when there is no java (as root, or through sudo). The virtualenv holds ansible-rulebook, ansible-core (for
# run_playbook) and what the collection's modules need (meta/ee-requirements.txt).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/.."

if ! command -v java >/dev/null; then
    command -v apt-get >/dev/null || { echo "error: no java, and no apt-get to install it: install a Java runtime" \
                                            "(17 or newer)" >&2; exit 2; }
    sudo=
    if (( $(id -u) != 0 )); then
        command -v sudo >/dev/null || { echo "error: installing default-jre-headless needs root (or sudo)" >&2
                                        exit 2; }
        sudo=sudo
    fi
    echo "setup-rulebook: apt-get install default-jre-headless"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends default-jre-headless >/dev/null
fi
"$here/venv.sh" build/rulebook "${1:-3.13}" requirements/rulebook.txt meta/ee-requirements.txt
build/rulebook/bin/ansible-rulebook --version | grep -E "^ *(Java version|Drools_jpy version|[0-9])" || true
