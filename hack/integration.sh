#!/usr/bin/env bash
# Run the integration suite against a freshly started platform emulator.
#
# Usage: hack/integration.sh VENV PYTHON_X.Y [PASS...]
#   VENV     ansible virtualenv to run ansible-test from (.venv/old, .venv/new)
#   PASSES   values of planetscale_in_process, one suite run each
#            (default: "true false": in-process path, then the module path);
#            a value ending in ":lean" (e.g. "false:lean") runs that pass against
#            the emulator's lean shapes (--lean: bare lists, cluster_rate_name,
#            "type" keys, as real answers come; tests/emulator/README.md)
#
# Per pass, the test harness (python -m harness emulator exec, tests/harness)
# starts the emulator (.venv/emulator) on a free loopback port, waits until it
# answers, writes tests/integration/integration_config.yml into the build copy,
# runs `ansible-test integration --local` and stops the emulator.
#
# Environment:
#   COLLECTION_DIR     build copy (default build/ansible_collections/planetscale/cloud)
#   EMULATOR_VENV      default .venv/emulator
#   EMULATOR_HOST      default 127.0.0.1
#   EMULATOR_ARGS      extra emulator arguments (e.g. "--rate-limit 50")
#   ANSIBLE_TEST_ARGS  extra ansible-test arguments (e.g. target names)
#   HEALTH_TIMEOUT     seconds to wait for the emulator (default 60)
set -euo pipefail

venv=${1:?usage: $0 VENV X.Y [PASS...]}
pyver=${2:?usage: $0 VENV X.Y [PASS...]}
shift 2
passes=("$@")
(( ${#passes[@]} )) || passes=(true false)

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
venv=$(cd "$venv" && pwd)
collection=${COLLECTION_DIR:-$root/build/ansible_collections/planetscale/cloud}
emulator_venv=${EMULATOR_VENV:-$root/.venv/emulator}
host=${EMULATOR_HOST:-127.0.0.1}
health_timeout=${HEALTH_TIMEOUT:-60}
logdir=$root/build/logs
mkdir -p "$logdir"

[[ -x $venv/bin/ansible-test ]] || { echo "error: $venv has no ansible-test (run make setup)" >&2; exit 2; }
[[ -x $emulator_venv/bin/python ]] || { echo "error: $emulator_venv missing (run make setup)" >&2; exit 2; }
[[ -d $collection ]] || { echo "error: build copy $collection missing" >&2; exit 2; }

if ! compgen -G "$collection/tests/integration/targets/*" >/dev/null; then
    echo "error: no integration targets in tests/integration/targets" >&2
    exit 1
fi

export PATH="$venv/bin:$PATH"
failed=()
for pass in "${passes[@]}"; do
    in_process=${pass%:lean}
    shapes=()
    [[ $pass == *:lean ]] && shapes=(--lean)
    case $in_process in
        true|false) ;;
        *) echo "error: pass must be true or false (optionally with :lean), got '$pass'" >&2; exit 2 ;;
    esac
    label="ansible-core $("$venv/bin/python" -c 'import ansible; print(ansible.__version__)' 2>/dev/null || echo "?") / Python $pyver / planetscale_in_process=$in_process"
    (( ${#shapes[@]} )) && label+=" / lean emulator shapes"
    suffix=in_process_$in_process${shapes:+_lean}
    log=$logdir/emulator-$(basename "$venv")-$suffix.log
    testlog=$logdir/integration-$(basename "$venv")-$suffix.log
    echo "==== integration: $label"
    rc=0
    # shellcheck disable=SC2086  # ANSIBLE_TEST_ARGS is a word list on purpose
    PYTHONPATH=$root/tests "$venv/bin/python" -m harness emulator exec --python "$emulator_venv/bin/python" \
        --host "$host" --timeout "$health_timeout" --log "$log" "${shapes[@]}" --args "${EMULATOR_ARGS:-}" \
        --integration-config "$collection/tests/integration/integration_config.yml" --in-process "$in_process" \
        -C "$collection" -- ansible-test integration --local --python "$pyver" --continue-on-error ${ANSIBLE_TEST_ARGS:-} \
        2>&1 | tee "$testlog" || rc=$?
    if (( rc )); then
        echo "==== integration FAILED (exit $rc): $label; logs: ${testlog#"$root"/}, ${log#"$root"/}"
        failed+=("$pass")
    else
        echo "==== integration passed: $label"
    fi
done

if (( ${#failed[@]} )); then
    echo "integration failures with planetscale_in_process in: ${failed[*]}" >&2
    exit 1
fi
