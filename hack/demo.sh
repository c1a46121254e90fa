#!/usr/bin/env bash
# make demo: the collection's tour against a local emulator of the platform, on a fresh clone.
#
#   1. starts the emulator (.venv/emulator) on a free loopback port, seeds a few query-pattern
#      reports, and exports the PLANETSCALE_* variables from its /_emulator/world;
#   2. runs `ansible-playbook planetscale.cloud.demo` (playbooks/demo.yml) from this working tree;
#   3. runs it again, and fails unless that run reports changed=0;
#   4. runs a change with --check --diff, and fails if the emulator saw any write;
#   5. says where the audit report is, checks that no output showed a secret, stops the emulator.
#
# Output goes to build/demo/ (the connection file, the OAuth token, the audit report, the logs).
# Environment: DEMO_DIR (default build/demo), EMULATOR_HOST (127.0.0.1), HEALTH_TIMEOUT (60),
# DEMO_READY_DELAY (seconds until a new branch is ready, default 2).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
venv=$root/.venv/new
emulator_python=$root/.venv/emulator/bin/python
host=${EMULATOR_HOST:-127.0.0.1}
out=${DEMO_DIR:-$root/build/demo}
mkdir -p "$out"
out=$(cd "$out" && pwd)

for needed in "$venv/bin/ansible-playbook" "$emulator_python"; do
    [[ -x $needed ]] || { echo "error: $needed is missing: run make demo (it creates the virtualenvs)" >&2; exit 2; }
done

# A fresh emulator knows none of the last run's tokens or passwords: start from scratch.
rm -rf "$out/output" "$out/collections" "$out"/*.log
mkdir -p "$out/output" "$out/collections/ansible_collections/planetscale"
chmod 700 "$out/output"
# the working tree as the collection planetscale.cloud
ln -s "$root" "$out/collections/ansible_collections/planetscale/cloud"

step() { printf '\n\033[1m==== %s\033[0m\n' "$*"; }

emulator_pid=
stop_emulator() {
    [[ -n $emulator_pid ]] || return 0
    if kill -0 "$emulator_pid" 2>/dev/null; then
        kill -TERM "$emulator_pid" 2>/dev/null || true
        for _ in $(seq 50); do
            kill -0 "$emulator_pid" 2>/dev/null || break
            sleep 0.1
        done
        kill -KILL "$emulator_pid" 2>/dev/null || true
    fi
    wait "$emulator_pid" 2>/dev/null || true
    emulator_pid=
    echo "emulator stopped"
}
trap stop_emulator EXIT
trap 'exit 130' INT TERM

# Small helper for the control API and the world (no curl or jq needed).
control() { # METHOD PATH [JSON] -> JSON answer on stdout
    "$emulator_python" - "$url/_emulator$2" "$1" "${3:-}" <<'PY'
import sys, urllib.request
url, method, body = sys.argv[1], sys.argv[2], sys.argv[3]
request = urllib.request.Request(url, method=method, data=body.encode() if body else None,
                                 headers={"Content-Type": "application/json"} if body else {})
with urllib.request.urlopen(request, timeout=30) as response:
    sys.stdout.write(response.read().decode())
PY
}
world_value() { # a dotted key of /_emulator/world, e.g. service_token.id
    "$emulator_python" -c 'import functools, json, sys
print(functools.reduce(lambda d, k: d[int(k)] if isinstance(d, list) else d[k], sys.argv[1].split("."), json.load(open(sys.argv[2]))))' "$1" "$out/world.json"
}

step "Starting the platform emulator"
port=$("$emulator_python" -c 'import socket, sys
s = socket.socket(); s.bind((sys.argv[1], 0)); print(s.getsockname()[1]); s.close()' "$host")
url=http://$host:$port
PYTHONPATH=$root/tests "$emulator_python" -m emulator --host "$host" --port "$port" \
    --ready-delay "${DEMO_READY_DELAY:-2}" >"$out/emulator.log" 2>&1 &
emulator_pid=$!
deadline=$((SECONDS + ${HEALTH_TIMEOUT:-60}))
until control GET /health >/dev/null 2>&1; do
    if ! kill -0 "$emulator_pid" 2>/dev/null || (( SECONDS > deadline )); then
        echo "error: the emulator did not start; its log:" >&2
        tail -n 30 "$out/emulator.log" >&2
        exit 1
    fi
    sleep 0.2
done
control GET /world >"$out/world.json"
chmod 600 "$out/world.json"
control POST /seed '{"reports": {"branch": "main", "count": 3}}' >/dev/null
echo "emulator: $url (log: ${out#"$root"/}/emulator.log)"

# The credentials, as a user would set them; never printed.
PLANETSCALE_API_URL=$url/v1
PLANETSCALE_AUTH_URL=$url
PLANETSCALE_ORG=$(world_value organization)
PLANETSCALE_SERVICE_TOKEN_ID=$(world_value service_token.id)
PLANETSCALE_SERVICE_TOKEN=$(world_value service_token.token)
PLANETSCALE_CLIENT_ID=$(world_value oauth_application.client_id)
PLANETSCALE_CLIENT_SECRET=$(world_value oauth_application.client_secret)
export PLANETSCALE_API_URL PLANETSCALE_AUTH_URL PLANETSCALE_ORG PLANETSCALE_SERVICE_TOKEN_ID \
    PLANETSCALE_SERVICE_TOKEN PLANETSCALE_CLIENT_ID PLANETSCALE_CLIENT_SECRET
echo "exported PLANETSCALE_API_URL, PLANETSCALE_AUTH_URL, PLANETSCALE_ORG=$PLANETSCALE_ORG," \
    "PLANETSCALE_SERVICE_TOKEN_ID/_TOKEN and PLANETSCALE_CLIENT_ID/_SECRET (values not shown)"

# The variables of the tour: the emulator's world, and an authorization code for the OAuth step
# (the consent a user would give in a browser). In a file, so no secret is on a command line.
redirect_uri=$(world_value oauth_application.redirect_uri)
code=$(control POST /oauth/authorization-codes \
    "{\"client_id\": \"$PLANETSCALE_CLIENT_ID\", \"redirect_uri\": \"$redirect_uri\"}" \
    | "$emulator_python" -c 'import json, sys; print(json.load(sys.stdin)["code"])')
"$emulator_python" - "$out/world.json" "$out/demo-vars.json" "$code" "$out/output" <<'PY'
import json, os, sys
world_path, vars_path, code, output = sys.argv[1:]
world = json.load(open(world_path))
demo_vars = dict(demo_organization=world["organization"], demo_database=world["database"],
                 demo_branch=world["branch"], demo_members_team=world["teams"]["large"],
                 demo_team_members=[world["users"][0]["email"]], demo_output_dir=output,
                 demo_oauth_code=code, demo_oauth_redirect_uri=world["oauth_application"]["redirect_uri"])
fd = os.open(vars_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
with os.fdopen(fd, "w") as handle:
    json.dump(demo_vars, handle, indent=2)
PY

export ANSIBLE_COLLECTIONS_PATH=$out/collections
export ANSIBLE_LOCALHOST_WARNING=false ANSIBLE_INVENTORY_UNPARSED_WARNING=false
export ANSIBLE_DISPLAY_SKIPPED_HOSTS=false ANSIBLE_CALLBACK_RESULT_FORMAT=yaml
export ANSIBLE_RETRY_FILES_ENABLED=false
export PATH=$venv/bin:$PATH

playbook() { # LOG ARGS...: ansible-playbook planetscale.cloud.demo, shown and logged
    local log=$1
    shift
    ansible-playbook planetscale.cloud.demo -e "@$out/demo-vars.json" "$@" 2>&1 | tee "$log"
    return "${PIPESTATUS[0]}"
}
recap_changed() { # the changed= count of the last recap line in LOG
    grep -E '^localhost +: ok=' "$1" | tail -n 1 | sed -E 's/.* changed=([0-9]+).*/\1/'
}

start=$SECONDS
step "1/3 The tour: ansible-playbook planetscale.cloud.demo"
playbook "$out/run1.log"

step "2/3 The same playbook again: nothing to change (full output: ${out#"$root"/}/run2.log)"
playbook "$out/run2.log" >/dev/null || { tail -n 40 "$out/run2.log"; exit 1; }
grep -E '^(PLAY|changed|fatal)|^localhost +: ok=' "$out/run2.log"
changed=$(recap_changed "$out/run2.log")
if [[ $changed != 0 ]]; then
    echo "error: the second run reported changed=$changed; it must change nothing" >&2
    exit 1
fi
echo "second run: changed=0"

step "3/3 A change, as a dry run: --check --diff (a new team description; refresh the token when it lives less than 2 hours)"
control DELETE /requests >/dev/null
playbook "$out/run3.log" --check --diff \
    -e '{"demo_team_description": "Application engineers, reviewed in a dry run", "demo_oauth_min_ttl": 7200}'
writes=$(control GET /requests | "$emulator_python" -c 'import json, sys
log = json.load(sys.stdin)
writes = [r for r in log if r["method"] not in ("GET", "HEAD")]
print(len(log), len(writes))')
read -r requests written <<<"$writes"
if [[ $written != 0 ]]; then
    echo "error: the --check run sent $written write requests" >&2
    exit 1
fi
echo "check run: $requests requests to the emulator, none of them a write"

# No output may show a secret: the service token, the client secret, any password or token value.
secrets=("$PLANETSCALE_SERVICE_TOKEN" "$PLANETSCALE_CLIENT_SECRET" "$code")
if grep -F -q -e "${secrets[0]}" -e "${secrets[1]}" -e "${secrets[2]}" "$out"/run*.log \
    || grep -E -q 'pscale_(pw|tkn|oauth|ref|app_secret)_[A-Za-z0-9]' "$out"/run*.log; then
    echo "error: a secret appears in the output (see $out/run*.log)" >&2
    exit 1
fi

step "Done in $((SECONDS - start))s"
echo "The audit report:          ${out#"$root"/}/output/audit.md"
echo "The preview's connection:  ${out#"$root"/}/output/preview-connection.json (mode 0600, holds a secret)"
echo "The runs' output:          ${out#"$root"/}/run1.log, run2.log, run3.log (no secret in them)"
