#!/usr/bin/env bash
# Create/refresh a virtualenv from pinned requirements files, idempotently.
#
# Usage: hack/venv.sh DIR PYTHON REQUIREMENTS_FILE...
#   DIR          virtualenv directory (created if missing or on the wrong Python)
#   PYTHON       X.Y version, or the path of an interpreter
#   REQUIREMENTS pip requirements files (missing ones are an error)
#
# A stamp file in DIR holds a hash of the Python version and of the contents
# of every requirements file; when it matches, nothing is done (fast path).
# Otherwise it says, before each long step, what it does (creating the venv
# with which Python; installing how many requirements from which files; pip
# runs quietly, a minute or more on a fresh machine) and how long it took.
set -euo pipefail

dir=${1:?usage: $0 DIR PYTHON REQ...}
py=${2:?usage: $0 DIR PYTHON REQ...}
shift 2
(( $# > 0 )) || { echo "error: no requirements file given" >&2; exit 2; }

here=$(cd "$(dirname "$0")" && pwd)
if [[ $py == */* ]]; then
    python=$py
else
    python=$("$here/find-python.sh" "$py")
fi
version=$("$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')

for f in "$@"; do
    [[ -f $f ]] || { echo "error: requirements file not found: $f" >&2; exit 2; }
done

key=$(
    {
        echo "python $version"
        for f in "$@"; do
            echo "== $f"
            cat "$f"
        done
    } | sha256sum | cut -d' ' -f1
)
stamp=$dir/.requirements.sha256

current=
if [[ -x $dir/bin/python ]]; then
    current=$("$dir/bin/python" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null || true)
fi

# count FILE: the requirement lines of a pip requirements file (not comments, options or --hash continuations)
count() {
    grep -cEv '^[[:space:]]*($|#|-)|^[[:space:]]' "$1" || true
}

if [[ $current == "$version" ]]; then
    if [[ -f $stamp && $(<"$stamp") == "$key" ]]; then
        echo "venv $dir: up to date (Python $version)"
        exit 0
    fi
    echo "venv $dir: requirements changed since the last install"
else
    if [[ -e $dir ]]; then
        echo "venv $dir: Python '${current:-none}' != $version, recreating"
        rm -rf "$dir"
    fi
    echo "venv $dir: creating with Python $version ($python)"
    SECONDS=0
    "$python" -m venv "$dir"
    echo "venv $dir: created in ${SECONDS}s"
fi

rm -f "$stamp"
args=()
what=
for f in "$@"; do
    args+=(-r "$f")
    what+="${what:+, }$(count "$f") from $f"
done
echo "venv $dir: installing $what (pip, quiet: a minute or more the first time)"
SECONDS=0
"$dir/bin/python" -m pip install --disable-pip-version-check --quiet "${args[@]}"
echo "$key" >"$stamp"
echo "venv $dir: installed in ${SECONDS}s, ready"
