#!/usr/bin/env bash
# make docs: the collection's documentation site, with antsibull-docs and Sphinx, in build/docs/
# (the pages in build/docs/build/html, index.html first).
#
#   1. antsibull-docs sphinx-init --use-current writes the Sphinx project (conf.py, build.sh, the
#      front page hack/docsite/index.rst, whose list of what the collection ships
#      hack/docsite/front_page.py generates from galaxy.yml, the plugins, roles and playbooks) for
#      planetscale.cloud as the build copy of the collection (build/ansible_collections/planetscale/cloud:
#      make copy) has it;
#   2. hack/docsite/conf.py is appended to its conf.py (Markdown, an offline intersphinx inventory of
#      the Ansible documentation that hack/docsite/ansible_inventory.py writes);
#   3. the pages that are the repository's but not the collection's are copied into the Sphinx
#      source: CHANGELOG.rst, and the benchmark report docs/benchmarks.md with its charts (the
#      tarball leaves docs/benchmarks.* out, so they cannot be extra docs of the collection);
#   4. the generated build.sh: antsibull-docs collection (every module, role, filter and plugin
#      page, the collection's index, its extra docs: docs/docsite), then sphinx-build -W --keep-going,
#      so that any Sphinx warning fails the build.
#
# Needs .venv/docs (make setup-docs) and the build copy (make copy).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
venv=$root/.venv/docs
out=$root/build/docs
collections=$root/build

[[ -x $venv/bin/antsibull-docs ]] || { echo "error: $venv has no antsibull-docs (run make setup-docs)" >&2; exit 2; }
[[ -f $collections/ansible_collections/planetscale/cloud/galaxy.yml ]] || {
    echo "error: no build copy of the collection in $collections (run make copy)" >&2; exit 2; }

# Only the build copy is documented, whatever the caller's Ansible configuration says.
while IFS= read -r name; do unset "$name"; done < <(env | sed -n 's/^\(ANSIBLE_[A-Za-z0-9_]*\)=.*/\1/p')
export PATH=$venv/bin:$PATH ANSIBLE_COLLECTIONS_PATH=$collections ANSIBLE_COLLECTIONS_SCAN_SYS_PATH=false
mkdir -p "$root/build/docs-ansible"
printf '[defaults]\n' >"$root/build/docs-ansible/ansible.cfg"
export ANSIBLE_CONFIG=$root/build/docs-ansible/ansible.cfg ANSIBLE_HOME=$root/build/docs-ansible/home

rm -rf "$out"
mkdir -p "$out"
chmod 755 "$out"  # antsibull-docs wants its destination writable by its owner only

mkdir -p "$root/build/docs-front"
python "$root/hack/docsite/front_page.py" "$collections/ansible_collections/planetscale/cloud" \
    "$root/hack/docsite/index.rst" "$root/build/docs-front/index.rst"
antsibull-docs sphinx-init --use-current --fail-on-error --dest-dir "$out" \
    --index-rst-source "$root/build/docs-front/index.rst" \
    --project planetscale.cloud --copyright "planetscale.cloud contributors" \
    --title "planetscale.cloud documentation" --html-short-title "planetscale.cloud" \
    planetscale.cloud >/dev/null
cat "$root/hack/docsite/conf.py" >>"$out/conf.py"
python "$root/hack/docsite/ansible_inventory.py" "$out/ansible_devel.inv"

cp "$root/CHANGELOG.rst" "$out/rst/changelog.rst"
cp "$root/docs/benchmarks.md" "$root"/docs/benchmarks*.png "$out/rst/"

"$out/build.sh"
echo "the site: ${out#"$root"/}/build/html/index.html"
