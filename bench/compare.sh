#!/usr/bin/env bash
# Issue #6's benchmark: Haul beside curl and aria2c on the same jobs, served by nginx on
# 127.0.0.1, written to tmpfs (/dev/shm) and to disk. Whole-process wall time, CPU time and
# peak memory (GNU time), the median of RUNS runs, and Haul's ratio to each peer.
#   (a) one 1 GiB file                      haul get | curl | aria2c -x1
#   (b) 5,000 × 16 KiB at concurrency 16     haul get -j 16 | curl --parallel --parallel-max 16 | aria2c -j 16
#   (c) 256 MiB, 8 MiB/s per connection      haul get -s 8 -x 8 | aria2c -x 8 -s 8 | curl (one connection)
#   (d) 100,000 queued downloads in the daemon: enqueue time and resident memory
#   (e) (b) again, haul get only, with 100,000 finished downloads already in its store
#       (20 earlier runs of the same list into other directories), beside (b) on a fresh store
#   (f) a daemon that has completed 100,000 aria2 downloads: store size, memory, and the
#       time to answer tellStopped(0, 1000)
# Usage: bench/compare.sh [WORKDIR]     env: RUNS (default 3), JOBS (default "a b c d e f"),
#        HAUL_BINARY (a release haul to use instead of building one)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/common.sh"
timed_bench_setup "${1:-}"
jobs=${JOBS:-"a b c d e f"}
build_haul

mkdir -p "$work/corpus/small" "$work/corpus/throttled"
if [ ! -f "$work/corpus/big.bin" ]; then
    echo "making the corpus…" >&2
    python3 - "$work/corpus/small" <<'PY'
import os, sys
for i in range(5000):
    with open(os.path.join(sys.argv[1], f"f{i:04d}.bin"), "wb") as f:
        f.write(os.urandom(16 * 1024))
PY
    head -c $((1 << 30)) /dev/urandom > "$work/corpus/big.bin"
    head -c $((256 << 20)) /dev/urandom > "$work/corpus/throttled/mid.bin"
fi
port=$(free_port)
# nginx's limit_rate is per connection: what a capped server does to one connection.
nginx_start "$work/corpus" "$port" "location /throttled/ { limit_rate 8m; }"
trap nginx_stop EXIT
base="http://127.0.0.1:$port"
for i in $(seq -f "%04g" 0 4999); do echo "$base/small/f$i.bin"; done > "$work/list"
sed 's/.*/url = "&"/' "$work/list" > "$work/curl-config"

# time_run OUTDIR command… → "wall cpu peakKiB" of one run; the output directory is emptied
# first, and the file system synced, so that no run pays for the previous one's write-back.
time_run() {
    local out=$1; shift
    rm -rf "$out" && mkdir -p "$out"
    sync
    local log; log=$(mktemp)
    (cd "$out" && /usr/bin/time -v "$@" >/dev/null 2>"$log") || { tail -5 "$log" >&2; rm -f "$log"; return 1; }
    awk -F': ' '
        /Elapsed \(wall clock\)/ { split($2, t, ":"); wall = (length(t) == 3) ? t[1]*3600 + t[2]*60 + t[3] : t[1]*60 + t[2] }
        /User time/ { user = $2 } /System time/ { sys = $2 } /Maximum resident/ { rss = $2 }
        END { printf "%.3f %.3f %d\n", wall, user + sys, rss }' "$log"
    rm -f "$log"
}

median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

declare -A WALL
# measure JOB TOOL TARGET command… → runs it RUNS times, checks the output, prints a table row.
measure() {
    local job=$1 tool=$2 target=$3; shift 3
    local out="$target/$job-$tool" samples=()
    for run in $(seq 1 "$runs"); do
        rm -rf "$work/state"
        # (e) starts every run from the same store with history (copied outside the timing).
        [ "$job" = e ] && cp -a "$work/history-state" "$work/state"
        # (b)'s runs each write to a new directory, and none is deleted until every tool has
        # run: ext4 without a journal (as on this machine) skips inodes deleted in the last
        # minutes when it allocates new ones, so creating 5,000 files right after deleting
        # 5,000 costs seconds of system time, whichever tool does it (seen with curl too).
        [ "$job" = b ] || [ "$job" = e ] && out="$target/$job-$tool-$run"
        samples+=("$(time_run "$out" "$@")")
        verify "$job" "$out"
    done
    local wall cpu rss
    wall=$(printf '%s\n' "${samples[@]}" | awk '{ print $1 }' | median)
    cpu=$(printf '%s\n' "${samples[@]}" | awk '{ print $2 }' | median)
    rss=$(printf '%s\n' "${samples[@]}" | awk '{ print $3 }' | median)
    WALL["$job/$where/$tool"]=$wall
    printf "| %s | %s | %s | %.2f | %.2f | %.1f |\n" "$job" "$where" "$tool" "$wall" "$cpu" "$(awk -v r="$rss" "BEGIN { print r / 1024 }")"
}

# verify JOB DIR: every file there matches the corpus (sizes and sha256), so a fast wrong
# answer never counts.
verify() {
    case $1 in
        a) cmp -s "$work/corpus/big.bin" "$(find "$2" -name 'big.bin*' -type f | head -1)" || { echo "(a) output differs in $2" >&2; exit 1; } ;;
        b|e) [ "$(find "$2" -type f -name 'f*.bin' | wc -l)" = 5000 ] || { echo "(b) expected 5000 files in $2" >&2; exit 1; }
           (cd "$2" && sha256sum -- f*.bin) | cmp -s - "$work/expected-small" || { echo "(b) files differ in $2" >&2; exit 1; } ;;
        c) cmp -s "$work/corpus/throttled/mid.bin" "$(find "$2" -name 'mid.bin*' -type f | head -1)" || { echo "(c) output differs in $2" >&2; exit 1; } ;;
    esac
}
(cd "$work/corpus/small" && sha256sum -- f*.bin) > "$work/expected-small"

if [[ " $jobs " == *" e "* ]]; then
    # 20 runs of the same list into other directories: 100,000 finished downloads in haul
    # get's session, as after a few weeks of use (its retention keeps 100,000).
    echo "seeding (e)'s store with 100,000 finished downloads…" >&2
    rm -rf "$work/history-state" "$work/history-out"
    for n in $(seq 1 20); do
        mkdir -p "$work/history-out/$n"
        "$haul" get -q -j 16 --state-dir "$work/history-state" -d "$work/history-out/$n" -i "$work/list"
    done
    rm -rf "$work/history-out"
fi

echo "| job | output | tool | wall s | CPU s | peak MiB |"
echo "|---|---|---|---|---|---|"
for where in tmpfs disk; do
    if [ "$where" = tmpfs ]; then target=$(mktemp -d /dev/shm/haul-compare.XXXXXX); else target="$work/out"; fi
    for job in $jobs; do
        case $job in
        a)
            measure a haul "$target" "$haul" get -q --state-dir "$work/state" -d . "$base/big.bin"
            measure a curl "$target" curl -s -o big.bin "$base/big.bin"
            measure a aria2c "$target" aria2c -q -x1 -s1 --allow-overwrite=true --file-allocation=none -d . "$base/big.bin" ;;
        b)
            measure b haul "$target" "$haul" get -q -j 16 --state-dir "$work/state" -d . -i "$work/list"
            measure b curl "$target" curl -s --parallel --parallel-max 16 --remote-name-all -K "$work/curl-config"
            measure b aria2c "$target" aria2c -q -j 16 --allow-overwrite=true --file-allocation=none -d . -i "$work/list" ;;
        e)
            measure e haul "$target" "$haul" get -q -j 16 --state-dir "$work/state" -d . -i "$work/list" ;;
        c)
            measure c haul "$target" "$haul" get -q -s 8 -x 8 --min-split-size 1M --state-dir "$work/state" -d . "$base/throttled/mid.bin"
            measure c aria2c "$target" aria2c -q -x 8 -s 8 --min-split-size=1M --allow-overwrite=true --file-allocation=none -d . "$base/throttled/mid.bin"
            measure c curl "$target" curl -s -o mid.bin "$base/throttled/mid.bin" ;;
        esac
    done
    if [ "$where" = tmpfs ]; then rm -rf "$target"; else rm -rf "$target"/b-* "$target"/e-*; fi
done

echo
echo "Ratios (Haul's median wall time ÷ the peer's; below 1 means Haul is faster):"
for key in "${!WALL[@]}"; do
    IFS=/ read -r job where tool <<<"$key"
    [ "$tool" = haul ] && continue
    [ "$job" = e ] && continue
    printf "  (%s) %-5s haul/%s = %.2f\n" "$job" "$where" "$tool" "$(awk -v h="${WALL[$job/$where/haul]}" -v p="${WALL[$key]}" "BEGIN { print h / p }")"
done | sort

for where in tmpfs disk; do
    [ -n "${WALL[e/$where/haul]:-}" ] && [ -n "${WALL[b/$where/haul]:-}" ] || continue
    printf "  (e) %-5s haul with 100,000 records / haul on a fresh store = %.2f\n" "$where" \
        "$(awk -v e="${WALL[e/$where/haul]}" -v b="${WALL[b/$where/haul]}" "BEGIN { print e / b }")"
done

if [[ " $jobs " == *" f "* ]]; then
    echo
    echo "(f) a daemon that has completed 100,000 aria2 downloads:"
    HISTORY_DIR="$work" python3 "$here/daemon_history.py" "$haul" "$work/list" 100000
fi

if [[ " $jobs " == *" d "* ]]; then
    echo
    echo "(d) 100,000 queued downloads in the daemon:"
    python3 "$here/daemon_queue.py" "$haul" "$base/throttled/mid.bin" 100000
fi
