#!/usr/bin/env bash
# Lay out a fresh copy of the collection at
# build/ansible_collections/planetscale/cloud/ (ansible-test, ansible-lint and
# antsibull-docs need that path shape).
#
# The copy is made from the WORKING TREE: every tracked or untracked-but-not-
# ignored file (git ls-files -co --exclude-standard) that exists on disk,
# minus harness-only content. It is wiped and recreated on every call, so it
# is never stale. The copy is turned into a (commit-less) git repository of its
# own, see below.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
dest=${1:-$root/build/ansible_collections/planetscale/cloud}
cd "$root"

# Paths (relative to the repo root) that never go into the copy.
exclude_re='^(\.venv/|build/|hack/|\.ci/|tests/emulator/|tests/output/|tests/integration/integration_config\.yml$|\.git/)|(^|/)(__pycache__|\.pytest_cache|\.hypothesis|\.mypy_cache|\.ansible)/|\.py[co]$|\.tar\.gz$'

list=$(mktemp)
trap 'rm -f "$list"' EXIT

if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    git ls-files -z -co --exclude-standard
else
    # not a git checkout (e.g. an unpacked source archive): take what is on disk
    find . -path ./.git -prune -o \( -type f -o -type l \) -printf '%P\0'
fi | while IFS= read -r -d '' f; do
    # tracked files deleted from the working tree are listed but absent
    [[ -e $f || -L $f ]] || continue
    [[ $f =~ $exclude_re ]] && continue
    printf '%s\0' "$f"
done >"$list"

rm -rf "$dest"
mkdir -p "$dest"
tar --null -T "$list" -cf - | tar -xf - -C "$dest"
# The copy sits inside this repository's (git-ignored) build/ directory. Tools
# that find their files with git (ansible-test, ansible-lint) would walk up to
# the outer repository and see nothing, so make the copy a repository of its
# own: untracked, not ignored files are what they list.
git -c init.defaultBranch=main init -q "$dest"
echo "copied $(tr -cd '\0' <"$list" | wc -c) files to ${dest#"$root"/}"
