#!/usr/bin/env bash
# make dataplane: the emulator's data plane servers, MariaDB and PostgreSQL (tests/harness/dataplane.py starts
# throwaway instances of them for every emulator), and PgBouncer (the emulator starts one for each bouncer a test
# makes, tests/emulator/dataplane/pgbouncer.py). Debian's mariadb-server, postgresql and pgbouncer, installed with apt-get
# when mariadbd, mariadb-install-db, PostgreSQL's initdb or pgbouncer is missing (as root, or through sudo);
# installing starts no service here, and none is needed. Elsewhere, install MariaDB and PostgreSQL (14 or newer) and
# name the directories of their binaries in MARIADB_BIN and POSTGRES_BIN, and PgBouncer if you have it (without it
# the emulator's bouncers have no process).
set -euo pipefail

find_bin() {  # NAME DIR...: the first executable NAME in the directories or on PATH
    local name=$1 dir
    shift
    for dir in "$@"; do
        [[ -n $dir && -x $dir/$name ]] && { echo "$dir/$name"; return 0; }
    done
    command -v "$name" 2>/dev/null
}

present() {
    mariadbd=$(find_bin mariadbd "${MARIADB_BIN:-}" /usr/sbin) || return 1
    find_bin mariadb-install-db "${MARIADB_BIN:-}" /usr/bin >/dev/null || return 1
    initdb=$(find_bin initdb "${POSTGRES_BIN:-}" $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -t/ -k5 -n -r)) \
        || return 1
    pgbouncer=$(find_bin pgbouncer /usr/sbin) || return 1
}

if present; then
    echo "dataplane: $("$mariadbd" --version | sed 's/^.*Ver /MariaDB /'), $("$initdb" --version)," \
         "$("$pgbouncer" --version | head -1)"
    exit 0
fi
command -v apt-get >/dev/null || {
    echo "error: no MariaDB or PostgreSQL server, and no apt-get to install them: install MariaDB and PostgreSQL" \
        "(14 or newer), or name their binaries' directories in MARIADB_BIN and POSTGRES_BIN" >&2
    exit 2
}
sudo=
if (( $(id -u) != 0 )); then
    command -v sudo >/dev/null || { echo "error: installing mariadb-server and postgresql needs root (or sudo)" >&2
                                    exit 2; }
    sudo=sudo
fi
echo "dataplane: apt-get install mariadb-server postgresql pgbouncer"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends mariadb-server postgresql \
    pgbouncer >/dev/null
present || { echo "error: mariadb-server, postgresql and pgbouncer installed, yet mariadbd, initdb or pgbouncer is" \
                  "missing" >&2; exit 2; }
echo "dataplane: $("$mariadbd" --version | sed 's/^.*Ver /MariaDB /'), $("$initdb" --version)," \
     "$("$pgbouncer" --version | head -1)"
