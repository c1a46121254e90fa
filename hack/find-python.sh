#!/usr/bin/env bash
# Print the path of a working Python X.Y interpreter.
#
# Usage: hack/find-python.sh X.Y
#
# Looks at pythonX.Y on PATH first (skipping pyenv shims that are not
# activated for that version), then at pyenv-managed installs, then at the
# usual system locations.
set -euo pipefail

want=${1:?usage: $0 X.Y}

works() {
    [[ -x $1 ]] || return 1
    local got
    got=$("$1" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null) || return 1
    [[ $got == "$want" ]]
}

candidates=()
if command -v "python$want" >/dev/null 2>&1; then
    candidates+=("$(command -v "python$want")")
fi
roots=()
if command -v pyenv >/dev/null 2>&1; then
    roots+=("$(pyenv root 2>/dev/null || true)")
fi
roots+=("${PYENV_ROOT:-}" "$HOME/.pyenv")
for root in "${roots[@]}"; do
    [[ -n $root && -d $root/versions ]] || continue
    # newest patch release first
    while IFS= read -r dir; do
        candidates+=("$dir/bin/python$want")
    done < <(find "$root/versions" -mindepth 1 -maxdepth 1 \( -name "$want" -o -name "$want.*" \) | sort -rV)
done
candidates+=("/usr/local/bin/python$want" "/usr/bin/python$want")

for c in "${candidates[@]}"; do
    if works "$c"; then
        echo "$c"
        exit 0
    fi
done

echo "error: no working Python $want found (tried: ${candidates[*]})" >&2
echo "hint: install Python $want, or pass an interpreter: make setup PYTHON_OLD=... PYTHON_NEW=... PYTHON_EMULATOR=..." >&2
exit 1
