#!/usr/bin/env bash
# A profile of job (b), by subsystem: `haul get -j 16` of 5,000 × 16 KiB from nginx on
# 127.0.0.1 into an empty tmpfs directory with a new store, under `perf record -g`, then
# `perf_breakdown.py`: the samples by the outermost Haul frame of their call chain, and a
# timeline of the first 0.25 s in steps of 10 ms (the stretch before the first request, on
# one core). Where a change to the small-file path should show. The profiler slows the run:
# read shares, not seconds, and time changes with bench/compare.sh.
# Usage: bench/profile-small-files.sh [WORKDIR]     env: HAUL_BINARY (a release build to use)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/common.sh"
ensure_peers
command -v perf >/dev/null || apt-get install -y -qq linux-perf >/dev/null
build_haul
work=${1:-/tmp/haul-profile}
small_corpus "$work/corpus/small"
port=$(free_port)
nginx_start "$work/corpus" "$port"
out=$(mktemp -d /dev/shm/haul-profile.XXXXXX)
trap 'nginx_stop; rm -rf "$out"' EXIT
for i in $(seq -f "%04g" 0 4999); do echo "http://127.0.0.1:$port/small/f$i.bin"; done > "$work/list"
rm -rf "$work/state"
(cd "$out" && perf record -q -F 2000 -g -o "$work/perf.data" "$haul" get -q -j 16 --state-dir "$work/state" -d . -i "$work/list")
placed=$(find "$out" -maxdepth 1 -name 'f*.bin' | wc -l)
[ "$placed" = 5000 ] || { echo "$placed files placed, expected 5000" >&2; exit 1; }
perf script -i "$work/perf.data" 2>/dev/null | python3 "$here/perf_breakdown.py" --timeline 0.25 0.01
