#!/usr/bin/env bash
# Issue #29's scale model, measured: how many lease claims (and completions) and renewals per
# second PostgreSQL sustains on this machine, with the statements PostgresLeases runs
# (bench/fleet/*.sql mirror them), in a temporary cluster on 127.0.0.1 with pgbench.
# Usage: bench/fleet-claims.sh [DOWNLOADS_PER_SESSION]   env: SECONDS_PER_RUN (default 10),
#        CLIENTS (default 8: daemons claiming at once), SESSIONS (default "1 16"),
#        SYNCHRONOUS_COMMIT (default on; off shows how much of a cycle is waiting for fsync)
# Durability is the server's default (fsync on, synchronous_commit on): a fleet's database
# would run so. The client side (Swift, postgres-nio) is not in these numbers.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
per_session=${1:-100000}
seconds=${SECONDS_PER_RUN:-10}
clients=${CLIENTS:-8}
bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
[ -x "$bin/pgbench" ] || { echo "PostgreSQL is not installed (apt-get install -y postgresql)" >&2; exit 1; }

root=$(mktemp -d /tmp/haul-fleet-bench.XXXXXX)
as_owner=()
if [ "$(id -u)" = 0 ]; then
    chown postgres:postgres "$root"
    as_owner=(setpriv --reuid=postgres --regid=postgres --init-groups)
fi
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
(cd / && "${as_owner[@]}" "$bin/initdb" -D "$root/data" -U haul --auth=trust -E UTF8 --no-sync >/dev/null)
(cd / && "${as_owner[@]}" "$bin/pg_ctl" -D "$root/data" -l "$root/server.log" -w \
    -o "-h 127.0.0.1 -p $port -k $root -c max_connections=200 -c synchronous_commit=${SYNCHRONOUS_COMMIT:-on}" start >/dev/null)
stop() { (cd / && "${as_owner[@]}" "$bin/pg_ctl" -D "$root/data" -m fast stop >/dev/null 2>&1 || true); rm -rf "$root"; }
trap stop EXIT
export PGOPTIONS="-c client_min_messages=warning"
psql=("$bin/psql" -h 127.0.0.1 -p "$port" -U haul -X -q -v ON_ERROR_STOP=1)
pgbench=("$bin/pgbench" -h 127.0.0.1 -p "$port" -U haul -n -T "$seconds" -c "$clients" -j 2)

echo "PostgreSQL $("$bin/postgres" --version | awk '{print $3}'), $(nproc) cores, $clients clients, ${seconds}s per run, synchronous_commit=${SYNCHRONOUS_COMMIT:-on}, load $(cut -d' ' -f1-3 /proc/loadavg)"
for sessions in ${SESSIONS:-1 16}; do
    "${psql[@]}" -d postgres -c "DROP DATABASE IF EXISTS bench" -c "CREATE DATABASE bench"
    "${psql[@]}" -d bench -f "$here/fleet/schema.sql"
    start=$(date +%s.%N)
    "${psql[@]}" -d bench -v sessions="$sessions" -v per_session="$per_session" -v limit=1600 -v per_host=64 \
        -f "$here/fleet/seed.sql"
    seeded=$(echo "$(date +%s.%N) - $start" | bc)
    tps=$("${pgbench[@]}" -D sessions="$sessions" -f "$here/fleet/claim.sql" bench | awk '/^tps/ {print $3}')
    printf 'claim+complete cycles: %s sessions x %s downloads (seeded in %.1fs): %.0f cycles/s = %.0f claims/s, %.0f downloads claimed/s\n' \
        "$sessions" "$per_session" "$seeded" "$tps" "$tps" "$(echo "$tps * 4" | bc)"
done

# Renewals: 8 daemons holding 16 leases each, renewing as fast as they can.
"${psql[@]}" -d bench -v daemons="$clients" -v held=16 -f "$here/fleet/hold.sql"
tps=$("${pgbench[@]}" -f "$here/fleet/renew.sql" bench | awk '/^tps/ {print $3}')
printf 'renewals: %s daemons x 16 leases: %.0f renewal statements/s = %.0f leases renewed/s\n' \
    "$clients" "$tps" "$(echo "$tps * 16" | bc)"
