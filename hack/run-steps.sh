#!/usr/bin/env bash
# Run make targets one after another, time them, and print a summary.
#
# Usage: hack/run-steps.sh TARGET...
# Keeps going after a failed step (so one run reports every failing check)
# unless FAIL_FAST=1. Exits non-zero if any step failed.
set -uo pipefail

make=${MAKE:-make}
results=()
passed=0
failed=0
start_all=$SECONDS

for step in "$@"; do
    echo
    echo "########## make $step"
    start=$SECONDS
    "$make" --no-print-directory "$step"
    rc=$?
    took=$((SECONDS - start))
    if (( rc == 0 )); then
        passed=$((passed + 1))
        results+=("$(printf '  %-18s ok      %4ds' "$step" "$took")")
    else
        failed=$((failed + 1))
        results+=("$(printf '  %-18s FAILED  %4ds  (exit %d)' "$step" "$took" "$rc")")
        if [[ ${FAIL_FAST:-0} == 1 ]]; then
            echo "FAIL_FAST=1: stopping after failed step '$step'"
            break
        fi
    fi
done

echo
echo "########## summary ($((SECONDS - start_all))s)"
printf '%s\n' "${results[@]}"
echo "checks: $passed passed, $failed failed"
(( failed == 0 ))
