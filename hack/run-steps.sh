#!/usr/bin/env bash
# Run make targets, time them, and print a summary; build/logs/steps.tsv gets a line a step: the step, its wall
# seconds (so the column sums to the run's), its result, and each of its targets' wall seconds, result and CPU
# seconds (user + system, its processes and the children they waited for; where GNU time is installed).
#
# Usage: hack/run-steps.sh STEP...
# A STEP is a make target, or targets joined by "+" (e.g. lint+sanity-old+sanity-new): those run side by side, in
# the order given, each one's output kept in build/logs/step-TARGET.log and shown when it ends; the group's row in the
# summary is each of its targets with its own seconds. At most STEP_JOBS (default 2; N for a step ending in @N) run at
# once. The first target, and those STOP_ON_FAILURE names, start as soon as there is a place; any other when the CPUs
# were at least STEP_IDLE percent idle (default 30) over the last STEP_SAMPLE seconds (default 3): targets that wait
# (on an emulator's clock, a browser, a download) leave room for the next, targets that compute do not, and no group
# waits for the slowest of another (a barrier idles cores while its last target ends).
# Keeps going after a failed step (so one run reports every failing check) unless FAIL_FAST=1 or the target that
# failed is named in STOP_ON_FAILURE (e.g. "setup", which everything else needs, or the static checks, so a
# lint error fails the run within minutes): then the targets still running are stopped and none is started.
# Exits non-zero if any step failed.
set -uo pipefail

make=${MAKE:-make}
jobs=${STEP_JOBS:-2}
root=$(cd "$(dirname "$0")/.." && pwd)
logs=$root/build/logs
mkdir -p "$logs"
tsv=$logs/steps.tsv
printf 'step\tseconds\tresult\ttargets\n' >"$tsv"
detail=()
results=()
passed=0
failed=0
start_all=$SECONDS
stopped=

# GNU time, where installed, writes each target's CPU seconds to build/logs/cpu-TARGET
timer=()
[[ -x /usr/bin/time ]] && timer=(/usr/bin/time -f '%U %S')
timed() {  # target, then the command
    local target=$1
    shift
    rm -f "$logs/cpu-$target"
    if (( ${#timer[@]} )); then
        "${timer[@]}" -o "$logs/cpu-$target" "$@"
    else
        "$@"
    fi
}
cpu_of() {  # target: its CPU seconds, or "?"
    local user system
    read -r user system < <(tail -n 1 "$logs/cpu-$1" 2>/dev/null) && [[ $user =~ ^[0-9.]+$ && $system =~ ^[0-9.]+$ ]] \
        && awk -v u="$user" -v s="$system" 'BEGIN { printf "%d", u + s + 0.5 }' || echo "?"
}

declare -A recorded
record() {  # target, exit code, seconds
    local result=ok
    recorded[$1]=1
    (( $2 == 0 )) || result="FAILED"
    detail+=("$1=$3s:$result:cpu$(cpu_of "$1")s")
    if (( $2 == 0 )); then
        passed=$((passed + 1))
        results+=("$(printf '  %-18s ok      %4ds  cpu %ss' "$1" "$3" "$(cpu_of "$1")")")
    else
        failed=$((failed + 1))
        results+=("$(printf '  %-18s FAILED  %4ds  (exit %d)' "$1" "$3" "$2")")
        if [[ ${FAIL_FAST:-0} == 1 || " ${STOP_ON_FAILURE:-} " == *" $1 "* ]]; then
            echo "stopping after failed step '$1'"
            stopped=1
        fi
    fi
}

run_one() {  # target: run it in the foreground
    local start=$SECONDS rc
    echo
    echo "########## make $1"
    # shellcheck disable=SC2086  # MAKE may carry options
    timed "$1" $make --no-print-directory "$1"
    rc=$?
    echo "########## make $1: $( ((rc == 0)) && echo ok || echo "FAILED (exit $rc)" ) in $((SECONDS - start))s"
    record "$1" "$rc" $((SECONDS - start))
}

# each target of a group in its own process group (setsid, where util-linux has it), so a stop reaches its children
own_group=()
command -v setsid >/dev/null && own_group=(setsid)

cpu_sample() {  # the busy and total jiffies of every CPU so far (/proc/stat; "0 0" where there is none)
    awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 + $9, $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9; found = 1 }
         END { if (!found) print 0, 0 }' /proc/stat 2>/dev/null || echo 0 0
}

idle_enough() {  # were the CPUs at least STEP_IDLE percent idle over the last STEP_SAMPLE seconds? (0: no look)
    local busy0 total0 busy1 total1
    (( ${STEP_IDLE:-30} > 0 )) || return 0
    read -r busy0 total0 < <(cpu_sample)
    sleep "${STEP_SAMPLE:-3}"
    read -r busy1 total1 < <(cpu_sample)
    (( total1 > total0 )) || return 0
    (( (total1 - total0 - (busy1 - busy0)) * 100 >= ${STEP_IDLE:-30} * (total1 - total0) ))
}

run_group() {  # jobs, then targets: side by side, in order; each one's output shown when it ends
    local jobs=$1
    shift
    local targets=("$@") pending=("$@") running=() still=() command=() target pid rc
    declare -A started pids
    echo
    echo "########## make ${targets[*]} (side by side, at most $jobs at once;" \
        "live: tail -f build/logs/step-*.log)"
    while (( ${#pending[@]} || ${#running[@]} )); do
        # a check that stops the run when it fails starts at once (its failure is news within minutes), the others
        # when the CPUs have room
        if (( ${#pending[@]} && ${#running[@]} < jobs )) && { (( ${#running[@]} == 0 )) \
                || [[ " ${STOP_ON_FAILURE:-} " == *" ${pending[0]} "* ]] || idle_enough; }; then
            target=${pending[0]}
            pending=("${pending[@]:1}")
            started[$target]=$SECONDS
            rm -f "$logs/cpu-$target"
            # shellcheck disable=SC2206  # MAKE may carry options
            command=($make --no-print-directory "$target")
            (( ${#timer[@]} )) && command=("${timer[@]}" -o "$logs/cpu-$target" "${command[@]}")
            "${own_group[@]}" "${command[@]}" >"$logs/step-$target.log" 2>&1 &  # a stop takes its whole tree
            pids[$target]=$!
            running+=("$target")
        elif (( ${#running[@]} )); then
            sleep 1
        fi
        still=()
        for target in "${running[@]}"; do  # the ones that ended: shown and recorded as they end
            pid=${pids[$target]}
            if kill -0 "$pid" 2>/dev/null; then
                still+=("$target")
                continue
            fi
            wait "$pid"
            rc=$?
            echo
            echo "########## make $target"
            cat "$logs/step-$target.log"
            echo "########## make $target: $( ((rc == 0)) && echo ok || echo "FAILED (exit $rc)" )" \
                "in $((SECONDS - started[$target]))s"
            record "$target" "$rc" $((SECONDS - started[$target]))
        done
        running=("${still[@]}")
        if [[ -n $stopped ]]; then  # a failed target that stops the run: none more, and the others stopped
            pending=()
            for target in "${running[@]}"; do
                (( ${#own_group[@]} )) && kill -TERM -- "-${pids[$target]}" 2>/dev/null || kill -TERM "${pids[$target]}"
            done
        fi
    done
}

for step in "$@"; do
    step_jobs=$jobs
    if [[ $step == *@* ]]; then
        step_jobs=${step##*@}
        step=${step%@*}
    fi
    IFS=+ read -r -a targets <<<"$step"
    if [[ -n $stopped ]]; then
        for target in "${targets[@]}"; do
            results+=("$(printf '  %-18s not run' "$target")")
        done
        printf '%s\t0\tnot run\t\n' "$step" >>"$tsv"
        continue
    fi
    detail=()
    step_start=$SECONDS
    step_failed=$failed
    if (( ${#targets[@]} == 1 )); then
        run_one "${targets[0]}"
    else
        run_group "$step_jobs" "${targets[@]}"
        for target in "${targets[@]}"; do
            [[ -n ${recorded[$target]:-} ]] && continue
            results+=("$(printf '  %-18s not run' "$target")")
            detail+=("$target=not-run")
        done
    fi
    printf '%s\t%d\t%s\t%s\n' "$step" $((SECONDS - step_start)) "$( ((failed == step_failed)) && echo ok || echo FAILED)" \
        "${detail[*]}" >>"$tsv"
done

total=$((SECONDS - start_all))
echo
echo "########## summary (${total}s; per step: build/logs/steps.tsv)"
printf '%s\n' "${results[@]}"
echo "checks: $passed passed, $failed failed"
(( failed == 0 ))
