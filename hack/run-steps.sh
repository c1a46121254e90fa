#!/usr/bin/env bash
# Run make targets one after another, time them, and print a summary.
#
# Usage: hack/run-steps.sh TARGET...
# Keeps going after a failed step (so one run reports every failing check)
# unless FAIL_FAST=1 or the step is named in STOP_ON_FAILURE (e.g. "setup",
# which everything else needs). Exits non-zero if any step failed.
set -uo pipefail

make=${MAKE:-make}
results=()
passed=0
failed=0
start_all=$SECONDS
stopped=

for step in "$@"; do
    if [[ -n $stopped ]]; then
        results+=("$(printf '  %-18s not run' "$step")")
        continue
    fi
    echo
    echo "########## make $step"
    start=$SECONDS
    # shellcheck disable=SC2086  # MAKE may carry options
    $make --no-print-directory "$step"
    rc=$?
    took=$((SECONDS - start))
    echo "########## make $step: $( ((rc == 0)) && echo ok || echo "FAILED (exit $rc)" ) in ${took}s"
    if (( rc == 0 )); then
        passed=$((passed + 1))
        results+=("$(printf '  %-18s ok      %4ds' "$step" "$took")")
    else
        failed=$((failed + 1))
        results+=("$(printf '  %-18s FAILED  %4ds  (exit %d)' "$step" "$took" "$rc")")
        if [[ ${FAIL_FAST:-0} == 1 || " ${STOP_ON_FAILURE:-} " == *" $step "* ]]; then
            echo "stopping after failed step '$step'"
            stopped=1
        fi
    fi
done

echo
echo "########## summary ($((SECONDS - start_all))s)"
printf '%s\n' "${results[@]}"
echo "checks: $passed passed, $failed failed"
(( failed == 0 ))
