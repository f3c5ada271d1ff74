#!/usr/bin/env bash
# The floor under job (b): AsyncHTTPClient alone fetching the 5,000 × 16 KiB corpus at
# concurrency 16 from nginx on 127.0.0.1, bodies read (and, second row, written to tmpfs),
# beside `haul get -j 16` on the same list. What Haul adds per file is the difference.
# Usage: bench/http-floor.sh [WORKDIR]     env: RUNS (default 3), HAUL_BINARY and
#        FLOOR_BINARY (release builds to use instead of building them)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/common.sh"
timed_bench_setup "${1:-}"
build_haul
if [ -n "${FLOOR_BINARY:-}" ]; then
    floor=$FLOOR_BINARY
else
    (cd "$here/.." && swift build -c release --product haul-http-floor >/dev/null)
    floor="$here/../.build/release/haul-http-floor"
fi

mkdir -p "$work/corpus/small"
if [ "$(find "$work/corpus/small" -name 'f*.bin' | wc -l)" != 5000 ]; then
    python3 - "$work/corpus/small" <<'PY'
import os, sys
for i in range(5000):
    with open(os.path.join(sys.argv[1], f"f{i:04d}.bin"), "wb") as f:
        f.write(os.urandom(16 * 1024))
PY
fi
port=$(free_port)
nginx_start "$work/corpus" "$port"
trap nginx_stop EXIT
for i in $(seq -f "%04g" 0 4999); do echo "http://127.0.0.1:$port/small/f$i.bin"; done > "$work/floor-list"
sed 's/.*/url = "&"/' "$work/floor-list" > "$work/floor-curl-config"

# row LABEL command… → median wall and CPU seconds of RUNS runs in an empty tmpfs directory.
row() {
    local label=$1; shift
    local walls=() cpus=()
    for _ in $(seq 1 "$runs"); do
        local out; out=$(mktemp -d /dev/shm/haul-floor.XXXXXX)
        rm -rf "$work/floor-state"
        local line; line=$(cd "$out" && /usr/bin/time -f "%e %U %S" "$@" 2>&1 >/dev/null | tail -1)
        rm -rf "$out"
        walls+=("$(echo "$line" | awk '{ print $1 }')")
        cpus+=("$(echo "$line" | awk '{ print $2 + $3 }')")
    done
    local wall cpu
    wall=$(printf '%s\n' "${walls[@]}" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
    cpu=$(printf '%s\n' "${cpus[@]}" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
    printf "| %s | %.2f | %.2f |\n" "$label" "$wall" "$cpu"
}

echo "| 5,000 × 16 KiB, 16 at once, to tmpfs | wall s | CPU s |"
echo "|---|---|---|"
row "AsyncHTTPClient alone, bodies read" "$floor" "$work/floor-list" 16
row "AsyncHTTPClient alone, bodies written to files" "$floor" "$work/floor-list" 16 --write
row "haul get -j 16" "$haul" get -q -j 16 --state-dir "$work/floor-state" -d . -i "$work/floor-list"
row "curl --parallel --parallel-max 16" curl -s --parallel --parallel-max 16 --remote-name-all -K "$work/floor-curl-config"
