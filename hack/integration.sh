#!/usr/bin/env bash
# Run the integration suite against a freshly started platform emulator.
#
# Usage: hack/integration.sh VENV PYTHON_X.Y [PASS...]
#   VENV     ansible virtualenv to run ansible-test from (.venv/old, .venv/new)
#   PASSES   values of planetscale_in_process, one suite run each
#            (default: "true false": in-process path, then the module path);
#            a value ending in ":lean" (e.g. "true:lean") runs that pass against
#            the emulator's lean shapes (--lean: bare lists, cluster_rate_name,
#            "type" keys, as real answers come; tests/emulator/README.md);
#            "@TARGET,..." after it runs only those targets (e.g.
#            "false@execution_paths": the adapter's target on the module path)
#
# Every pass runs at -vvvv and its output is searched by the secret watch
# (python -m harness emulator exec --watch-secrets): a secret anywhere but in
# the result of a task that returns it by design, or a traceback, fails it.
# INTEGRATION_WATCH=named watches only the passes that name their targets:
# ansible-core before 2.19 prints every task's invocation at -vvvv, so the
# targets' own ansible.builtin.uri reads (an Authorization header, the test's
# scaffolding) would show the seeded token there; the newest core's passes
# show only what the collection prints.
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
#   HEALTH_TIMEOUT     seconds to wait for the emulator (default 180: its data plane starts in seconds, but in
#                      tens of seconds on a loaded machine)
#   INTEGRATION_SHARDS split each pass's targets into this many groups (default 1; only when
#                      ANSIBLE_TEST_ARGS names no targets)
#   INTEGRATION_SERIAL 1: one job after the other (default: every pass and shard side by side,
#                      each in its own copy of the collection with its own emulator)
#   INTEGRATION_LOG_DIR where the logs go (default build/logs)
#   INTEGRATION_WATCH  all (default): the secret watch searches every pass; named: only those naming targets
#   INTEGRATION_VERBOSITY  ansible-test's -v count, passed to ansible-playbook (default 4; the watch
#                      needs 3 or more to see results, and searches whatever it is given)
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
health_timeout=${HEALTH_TIMEOUT:-180}
verbosity=${INTEGRATION_VERBOSITY:-4}
shards=${INTEGRATION_SHARDS:-1}
(( ${INTEGRATION_SERIAL:-0} )) && shards=1
logdir=${INTEGRATION_LOG_DIR:-$root/build/logs}
mkdir -p "$logdir"

[[ -x $venv/bin/ansible-test ]] || { echo "error: $venv has no ansible-test (run make setup)" >&2; exit 2; }
[[ -x $emulator_venv/bin/python ]] || { echo "error: $emulator_venv missing (run make setup)" >&2; exit 2; }
[[ -d $collection ]] || { echo "error: build copy $collection missing" >&2; exit 2; }

if ! compgen -G "$collection/tests/integration/targets/*" >/dev/null; then
    echo "error: no integration targets in tests/integration/targets" >&2
    exit 1
fi

export PATH="$venv/bin:$PATH"
core=$("$venv/bin/python" -c 'import ansible; print(ansible.__version__)' 2>/dev/null || echo "?")

# The targets of a pass are dealt into $shards groups of about equal seconds (only when no targets are named):
# longest first, each to the group with the fewest seconds so far, by the seconds tests/integration/seconds.tsv
# gives (a target it does not name counts 10).
targets=() shard_of=()
if [[ -z ${ANSIBLE_TEST_ARGS:-} ]] && (( shards > 1 )); then
    for dir in "$collection"/tests/integration/targets/*/; do
        name=$(basename "$dir")
        [[ $name == setup_* ]] || targets+=("$name")
    done
    mapfile -t shard_of < <(printf '%s\n' "${targets[@]}" | awk -v shards="$shards" '
        NR == FNR { if (!/^#/) seconds[$1] = $2; next }
        { name[n] = $1; weight[n] = ($1 in seconds) ? seconds[$1] : 10; order[n] = n; n++ }
        END {
            for (i = 1; i < n; i++) for (j = i; j > 0 && weight[order[j]] > weight[order[j - 1]]; j--) {
                k = order[j]; order[j] = order[j - 1]; order[j - 1] = k }
            for (i = 0; i < n; i++) {
                best = 0
                for (g = 1; g < shards; g++) if (load[g] < load[best]) best = g
                load[best] += weight[order[i]]; group[order[i]] = best
            }
            for (i = 0; i < n; i++) print group[i]
        }' "$collection/tests/integration/seconds.tsv" -)
else
    shards=1
fi

# One job: one pass (planetscale_in_process value, full or lean shapes) over one shard of the targets,
# in its own copy of the collection (ansible-test writes tests/output and the configuration there)
# against its own emulator on a free port.
run_job() {
    local pass=${1%@*} only= shard=$2 in_process shapes=() label suffix dir log testlog selected=() i rc=0 vs=() watch=()
    [[ $1 == *@* ]] && only=${1#*@}
    in_process=${pass%:lean}
    [[ $pass == *:lean ]] && shapes=(--lean)
    label="ansible-core $core / Python $pyver / planetscale_in_process=$in_process"
    (( ${#shapes[@]} )) && label+=" / lean emulator shapes"
    suffix=in_process_$in_process${shapes:+_lean}
    if [[ -n $only ]]; then
        IFS=, read -r -a selected <<<"$only"
        label+=" / targets ${only//,/, }"
        suffix+=_$(echo "$only" | tr , _)
    elif (( shards > 1 )); then
        for i in "${!targets[@]}"; do (( shard_of[i] == shard )) && selected+=("${targets[$i]}"); done
        label+=" / shard $((shard + 1)) of $shards"
        suffix+=_shard$((shard + 1))
    fi
    dir=$collection
    if (( jobs > 1 )); then
        dir=$(dirname "$(dirname "$(dirname "$collection")")")/jobs/$suffix/ansible_collections/planetscale/cloud
        rm -rf "$dir" && mkdir -p "$(dirname "$dir")" && cp -a "$collection" "$dir"
    fi
    log=$logdir/emulator-$(basename "$venv")-$suffix.log
    testlog=$logdir/integration-$(basename "$venv")-$suffix.log
    (( verbosity > 0 )) && vs=("-$(printf 'v%.0s' $(seq "$verbosity"))")
    [[ ${INTEGRATION_WATCH:-all} == all || -n $only ]] && watch=(--watch-secrets) && label+=" / secret watch"
    echo "==== integration: $label"
    # shellcheck disable=SC2086  # ANSIBLE_TEST_ARGS is a word list on purpose
    PYTHONPATH=$root/tests "$venv/bin/python" -m harness emulator exec --python "$emulator_venv/bin/python" \
        --host "$host" --timeout "$health_timeout" --log "$log" "${shapes[@]}" --args "${EMULATOR_ARGS:-}" \
        --integration-config "$dir/tests/integration/integration_config.yml" --in-process "$in_process" \
        "${watch[@]}" -C "$dir" -- ansible-test integration --local --python "$pyver" --continue-on-error "${vs[@]}" \
        ${ANSIBLE_TEST_ARGS:-} "${selected[@]}" >"$testlog" 2>&1 || rc=$?
    if (( rc )); then
        echo "==== integration FAILED (exit $rc): $label; logs: ${testlog#"$root"/}, ${log#"$root"/}"
    else
        echo "==== integration passed: $label"
    fi
    return "$rc"
}

for pass in "${passes[@]}"; do
    pass=${pass%@*}
    case ${pass%:lean} in
        true|false) ;;
        *) echo "error: pass must be true or false (optionally with :lean), got '$pass'" >&2; exit 2 ;;
    esac
done

# Every job of every pass runs side by side: a run waits on the emulator's clock (branches, deploys,
# backups) as much as it computes, so 2 cores carry several at once. A pass naming its targets is one
# job; the others are $shards each. INTEGRATION_SERIAL=1 runs them one after the other.
jobs=0
for pass in "${passes[@]}"; do
    if [[ $pass == *@* ]]; then jobs=$((jobs + 1)); else jobs=$((jobs + shards)); fi
done
(( ${INTEGRATION_SERIAL:-0} )) && jobs=1
rm -f "$logdir"/integration-"$(basename "$venv")"-*.log
failed=()
pids=() names=()
for pass in "${passes[@]}"; do
    count=$shards
    [[ $pass == *@* ]] && count=1
    for (( shard = 0; shard < count; shard++ )); do
        if (( jobs == 1 )); then
            run_job "$pass" "$shard" || failed+=("$pass/$shard")
        else
            run_job "$pass" "$shard" >"$logdir/job-$(basename "$venv")-${pass//[@,]/_}-$shard.status" &
            pids+=($!) names+=("$pass/$shard")
        fi
    done
done
for i in "${!pids[@]}"; do
    wait "${pids[$i]}" || failed+=("${names[$i]}")
done
for log in "$logdir"/integration-"$(basename "$venv")"-*.log; do
    echo "======== ${log#"$root"/}"
    cat "$log"
done
if (( jobs > 1 )); then
    cat "$logdir"/job-"$(basename "$venv")"-*.status
    rm -f "$logdir"/job-"$(basename "$venv")"-*.status
fi

if (( ${#failed[@]} )); then
    # the tasks that failed (not those a test ignores), last, where a truncated log still shows them
    echo "==== failed tasks (log: task, then the failure, 400 characters at most):"
    for log in "$logdir"/integration-"$(basename "$venv")"-*.log; do
        awk -v file="${log#"$root"/}" '
            $0 == "...ignoring" { pending = "" }
            /^(TASK \[|PLAY RECAP)/ && pending != "" { print file ": " task; print "    " substr(pending, 1, 400) }
            /^(TASK \[|PLAY RECAP)/ { pending = "" }
            /^TASK \[/ { task = $0 }
            pending != "" && lines < 4 && !/^(TASK \[|PLAY RECAP)/ { sub(/^ +/, ""); pending = pending " " $0; lines++ }
            /^(fatal|failed): / { pending = $0; lines = 0 }
            /^ERROR: Command / { print file ": " $0 }' "$log"
    done
    echo "integration failures with planetscale_in_process in (pass/shard): ${failed[*]}" >&2
    exit 1
fi
