#!/usr/bin/env bash
# Issue #6's benchmark: Haul beside curl and aria2c on the same jobs, served by nginx on
# 127.0.0.1, written to tmpfs (/dev/shm) and to disk. Whole-process wall time, CPU time and
# peak memory (GNU time), the median of RUNS runs, and Haul's ratio to each peer.
#   (a) one 1 GiB file                      haul get | curl | aria2c -x1
#   (b) 5,000 × 16 KiB at concurrency 16     haul get -j 16 | curl --parallel --parallel-max 16 | aria2c -j 16
#   (c) 256 MiB, 8 MiB/s per connection      haul get -s 8 -x 8 | aria2c -x 8 -s 8 | curl (one connection)
#   (d) 100,000 queued downloads in the daemon: enqueue time and resident memory; and (b)'s
#       list as one haul.addGroup, to completion, beside haul get
#   (e) (b) again, haul get only, with its store kept from run to run at its retention bound
#       (100,000 finished downloads, so each run also prunes 5,000), beside a fresh store
#   (f) a daemon that has completed 100,000 aria2 downloads: store size, memory, and the
#       time to answer tellStopped(0, 1000)
#   (g) (b)'s command run again in the same directory after its files were deleted
#   (h) then once more, with every file present
#   (i) 600 × 64 KiB over HTTPS with HTTP/2 (nginx) through a forwarder adding 20 ms each way
# The runs of a job take turns between its tools (interleaved), RUNS rounds.
# Usage: bench/compare.sh [WORKDIR]     env: RUNS (default 3), JOBS (default "a b c d e f g i";
#        g also prints h), WHERE (default "tmpfs disk"), HAUL_BINARY (a release haul to use
#        instead of building one)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/common.sh"
timed_bench_setup "${1:-}"
jobs=${JOBS:-"a b c d e f g i"}
build_haul

mkdir -p "$work/corpus/small" "$work/corpus/throttled"
if [ ! -f "$work/corpus/big.bin" ]; then
    echo "making the corpus…" >&2
    small_corpus "$work/corpus/small"
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
    time_run_in "$out" "$@"
}

# time_run_in DIR command… → like time_run, in DIR as it is (a re-run finds what is there).
time_run_in() {
    local out=$1; shift
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

declare -A WALL CPU
# A tool's command for a job lives in an array named CMD_<job>_<tool>, so that the runs of
# one job can take turns between the tools (interleaved: the machine's drift hits every tool
# alike, and the ratios compare runs made side by side).
# sample JOB TOOL TARGET RUN → one "wall cpu peakKiB" line of the tool's command, checked.
sample() {
    local job=$1 tool=$2 target=$3 run=$4
    local -n command="CMD_${job}_${tool}"
    local out="$target/$job-$tool"
    # Every run but (e)'s kept one starts from a new store.
    rm -rf "$work/state"
    # (b)'s runs each write to a new directory, and none is deleted until every tool has
    # run: ext4 without a journal (as on this machine) skips inodes deleted in the last
    # minutes when it allocates new ones, so creating 5,000 files right after deleting
    # 5,000 costs seconds of system time, whichever tool does it (seen with curl too).
    [ "$job" = b ] || [ "$job" = e ] && out="$target/$job-$tool-$run"
    time_run "$out" "${command[@]}"
    verify "$job" "$out"
}

# row JOB WHERE TOOL SAMPLES… → the table row of the medians, and WALL/CPU for the ratios.
row() {
    local job=$1 where=$2 tool=$3; shift 3
    local wall cpu rss
    wall=$(printf '%s\n' "$@" | awk '{ print $1 }' | median)
    cpu=$(printf '%s\n' "$@" | awk '{ print $2 }' | median)
    rss=$(printf '%s\n' "$@" | awk '{ print $3 }' | median)
    WALL["$job/$where/$tool"]=$wall
    CPU["$job/$where/$tool"]=$cpu
    printf "| %s | %s | %s | %.2f | %.2f | %.1f |\n" "$job" "$where" "$(label "$job" "$tool")" "$wall" "$cpu" "$(awk -v r="$rss" "BEGIN { print r / 1024 }")"
}

# measure JOB TARGET TOOL… → RUNS rounds, each running every tool once in turn; one row per tool.
measure() {
    local job=$1 target=$2; shift 2
    declare -A samples=()
    local run tool
    for run in $(seq 1 "$runs"); do
        for tool in "$@"; do
            samples[$tool]+="$(sample "$job" "$tool" "$target" "$run")"$'\n'
        done
    done
    for tool in "$@"; do
        mapfile -t lines < <(printf '%s' "${samples[$tool]}")
        row "$job" "$where" "$tool" "${lines[@]}"
    done
}

# measure_reruns TARGET TOOL… → (g) and (h): each round, per tool, a first run of (b)'s list
# into a directory with a new state directory, then its files deleted and the same command
# timed again (g), then timed once more with every file present (h). Haul keeps its store
# between the three, as a user's default state directory does. The first run is timed too
# and Haul's is shown: it is (b)'s command, and (g)'s target is a ratio to (b), taken here
# side by side with it (the VM's speed drifts within minutes).
measure_reruns() {
    local target=$1; shift
    declare -A g=() h=() first=()
    local run tool out
    for run in $(seq 1 "$runs"); do
        for tool in "$@"; do
            local -n command="CMD_g_${tool}"
            out="$target/g-$tool-$run"
            rm -rf "$work/state" "$out" && mkdir -p "$out"
            first[$tool]+="$(time_run_in "$out" "${command[@]}")"$'\n'
            verify g "$out"
            find "$out" -name 'f*.bin' -delete
            g[$tool]+="$(time_run_in "$out" "${command[@]}")"$'\n'
            verify g "$out"
            h[$tool]+="$(time_run_in "$out" "${command[@]}")"$'\n'
            verify h "$out"
        done
    done
    mapfile -t lines < <(printf '%s' "${first[haul]}")
    row g "$where" first "${lines[@]}"
    for tool in "$@"; do
        mapfile -t lines < <(printf '%s' "${g[$tool]}")
        row g "$where" "$tool" "${lines[@]}"
    done
    for tool in "$@"; do
        mapfile -t lines < <(printf '%s' "${h[$tool]}")
        row h "$where" "$tool" "${lines[@]}"
    done
}

# The name of a tool in a job's rows: its command line's essence.
label() {
    case "$1/$2" in
        */haul) case $1 in a) echo "haul get" ;; c) echo "haul get -s 8 -x 8" ;; *) echo "haul get -j 16" ;; esac ;;
        e/fresh) echo "haul get -j 16, fresh store" ;;
        g/first) echo "haul get -j 16, the round's first run ((b))" ;;
        e/kept) echo "haul get -j 16, store kept at 100,000" ;;
        a/curl|c/curl) echo "curl (one connection)" ;;
        a/aria2c) echo "aria2c -x1" ;;
        c/aria2c) echo "aria2c -x 8 -s 8" ;;
        i/curl) echo "curl --http2 --parallel --parallel-max 16" ;;
        */curl) echo "curl --parallel --parallel-max 16" ;;
        g/aria2c|h/aria2c) echo "aria2c -j 16 -c" ;;
        */aria2c) echo "aria2c -j 16" ;;
    esac
}

# verify JOB DIR: every file there matches the corpus (sizes and sha256), so a fast wrong
# answer never counts.
verify() {
    case $1 in
        a) cmp -s "$work/corpus/big.bin" "$(find "$2" -name 'big.bin*' -type f | head -1)" || { echo "(a) output differs in $2" >&2; exit 1; } ;;
        b|e|g|h) [ "$(find "$2" -type f -name 'f*.bin' | wc -l)" = 5000 ] || { echo "($1) expected 5000 files in $2" >&2; exit 1; }
           (cd "$2" && sha256sum -- f*.bin) | cmp -s - "$work/expected-small" || { echo "($1) files differ in $2" >&2; exit 1; } ;;
        c) cmp -s "$work/corpus/throttled/mid.bin" "$(find "$2" -name 'mid.bin*' -type f | head -1)" || { echo "(c) output differs in $2" >&2; exit 1; } ;;
        i) [ "$(find "$2" -type f -name 's*.bin' | wc -l)" = 600 ] || { echo "(i) expected 600 files in $2" >&2; exit 1; }
           (cd "$2" && sha256sum -- s*.bin) | cmp -s - "$work/expected-shards" || { echo "(i) files differ in $2" >&2; exit 1; } ;;
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

CMD_a_haul=("$haul" get -q --state-dir "$work/state" -d . "$base/big.bin")
CMD_a_curl=(curl -s -o big.bin "$base/big.bin")
CMD_a_aria2c=(aria2c -q -x1 -s1 --allow-overwrite=true --file-allocation=none -d . "$base/big.bin")
CMD_b_haul=("$haul" get -q -j 16 --state-dir "$work/state" -d . -i "$work/list")
CMD_b_curl=(curl -s --parallel --parallel-max 16 --remote-name-all -K "$work/curl-config")
CMD_b_aria2c=(aria2c -q -j 16 --allow-overwrite=true --file-allocation=none -d . -i "$work/list")
# (e): a fresh store and the kept one take turns; the kept one is the seeded store, used by
# every run after (so each run adds 5,000 and retention prunes 5,000).
CMD_e_fresh=("${CMD_b_haul[@]}")
CMD_e_kept=("$haul" get -q -j 16 --state-dir "$work/kept-state" -d . -i "$work/list")
CMD_c_haul=("$haul" get -q -s 8 -x 8 --min-split-size 1M --state-dir "$work/state" -d . "$base/throttled/mid.bin")
CMD_c_aria2c=(aria2c -q -x 8 -s 8 --min-split-size=1M --allow-overwrite=true --file-allocation=none -d . "$base/throttled/mid.bin")
CMD_c_curl=(curl -s -o mid.bin "$base/throttled/mid.bin")
# (g), (h): what each tool does when the same command is run again. curl fetches every file
# again (it has no way to skip a file that is there); aria2c -c asks the server and keeps a
# file whose length matches; Haul finds its earlier downloads in its store.
CMD_g_haul=("${CMD_b_haul[@]}")
CMD_g_curl=("${CMD_b_curl[@]}")
CMD_g_aria2c=(aria2c -q -j 16 -c --auto-file-renaming=false --file-allocation=none -d . -i "$work/list")

if [[ " $jobs " == *" i "* ]]; then
    # (i): 600 shards of 64 KiB over HTTPS with HTTP/2 (nginx), through a forwarder adding
    # 20 ms each way: a long-haul link, where the network decides the time.
    mkdir -p "$work/corpus-tls/shards"
    if [ "$(find "$work/corpus-tls/shards" -name 's*.bin' | wc -l)" != 600 ]; then
        python3 - "$work/corpus-tls/shards" <<'PY'
import os, sys
for i in range(600):
    with open(os.path.join(sys.argv[1], f"s{i:03d}.bin"), "wb") as f:
        f.write(os.urandom(64 * 1024))
PY
    fi
    (cd "$work/corpus-tls/shards" && sha256sum -- s*.bin) > "$work/expected-shards"
    [ -f "$work/tls/cert.pem" ] || { mkdir -p "$work/tls" && openssl req -x509 -newkey rsa:2048 -nodes -days 30 \
        -keyout "$work/tls/key.pem" -out "$work/tls/cert.pem" -subj /CN=127.0.0.1 \
        -addext subjectAltName=IP:127.0.0.1 2>/dev/null; }
    tls_port=$(free_port)
    nginx_start "$work/corpus-tls" "$tls_port" "" "$work/tls/cert.pem" "$work/tls/key.pem"
    delay_port=$(free_port)
    coproc DELAY { exec python3 "$here/delay_proxy.py" "$delay_port" "$tls_port" 20; }
    delay_pid=$DELAY_PID
    read -r _ <&"${DELAY[0]}"
    trap 'nginx_stop; kill $delay_pid 2>/dev/null || true' EXIT
    for i in $(seq -f "%03g" 0 599); do echo "https://127.0.0.1:$delay_port/shards/s$i.bin"; done > "$work/tls-list"
    sed 's/.*/url = "&"/' "$work/tls-list" > "$work/tls-curl-config"
    CMD_i_haul=("$haul" get -q -j 16 --ca-certificate "$work/tls/cert.pem" --state-dir "$work/state" -d . -i "$work/tls-list")
    CMD_i_curl=(curl -s --http2 --parallel --parallel-max 16 --cacert "$work/tls/cert.pem" --remote-name-all -K "$work/tls-curl-config")
    CMD_i_aria2c=(aria2c -q -j 16 --ca-certificate="$work/tls/cert.pem" --allow-overwrite=true --file-allocation=none -d . -i "$work/tls-list")
fi

echo "| job | output | tool | wall s | CPU s | peak MiB |"
echo "|---|---|---|---|---|---|"
for where in ${WHERE:-tmpfs disk}; do
    if [ "$where" = tmpfs ]; then target=$(mktemp -d /dev/shm/haul-compare.XXXXXX); else target="$work/out"; fi
    for job in $jobs; do
        case $job in
        a|b|c|i) measure "$job" "$target" haul curl aria2c ;;
        e) rm -rf "$work/kept-state" && cp -a "$work/history-state" "$work/kept-state"
           measure e "$target" fresh kept ;;
        g) measure_reruns "$target" haul curl aria2c ;;
        esac
        # The large outputs go once checked: three copies of (a)'s 1 GiB left in tmpfs made
        # every tool's (b) slower (curl 0.19 s → 0.31–0.39 s, Haul 0.57 → 0.64–0.66 s).
        case $job in a|c) rm -rf "$target/$job"-* ;; esac
    done
    if [ "$where" = tmpfs ]; then rm -rf "$target"; else rm -rf "$target"/b-* "$target"/e-* "$target"/g-*; fi
done

echo
echo "Ratios (Haul's median wall time ÷ the peer's; below 1 means Haul is faster; CPU in brackets):"
for key in "${!WALL[@]}"; do
    IFS=/ read -r job where tool <<<"$key"
    [ "$tool" = haul ] && continue
    [ "$job" = e ] && continue
    [ "$job" = h ] && continue
    [ "$tool" = first ] && continue
    printf "  (%s) %-5s haul/%s = %.2f (CPU %.2f)\n" "$job" "$where" "$tool" \
        "$(awk -v h="${WALL[$job/$where/haul]}" -v p="${WALL[$key]}" "BEGIN { print h / p }")" \
        "$(awk -v h="${CPU[$job/$where/haul]}" -v p="${CPU[$key]}" "BEGIN { print (p > 0) ? h / p : 0 }")"
done | sort

for where in tmpfs disk; do
    [ -n "${WALL[e/$where/kept]:-}" ] && printf "  (e) %-5s store kept at its bound ÷ fresh store = %.2f\n" "$where" \
        "$(awk -v e="${WALL[e/$where/kept]}" -v b="${WALL[e/$where/fresh]}" "BEGIN { print e / b }")"
    [ -n "${WALL[g/$where/haul]:-}" ] && printf "  (g) %-5s haul's re-run ÷ the first runs of its rounds ((b) side by side) = %.2f\n" "$where" \
        "$(awk -v e="${WALL[g/$where/haul]}" -v b="${WALL[g/$where/first]}" "BEGIN { print e / b }")"
    [ -n "${WALL[g/$where/haul]:-}" ] && [ -n "${WALL[b/$where/haul]:-}" ] && printf "  (g) %-5s haul's re-run ÷ (b)'s rows, measured minutes earlier = %.2f\n" "$where" \
        "$(awk -v e="${WALL[g/$where/haul]}" -v b="${WALL[b/$where/haul]}" "BEGIN { print e / b }")"
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
    # The daemon's state and downloads, and haul get's, in a temporary directory on each
    # medium: on disk, creating 5,000 files right after deleting 5,000 weighs on both sides.
    for where in ${WHERE:-tmpfs disk}; do
        echo
        echo "(d) (b)'s list as one haul.addGroup to the daemon, beside haul get ($where):"
        if [ "$where" = tmpfs ]; then
            TMPDIR=/dev/shm python3 "$here/daemon_batch.py" "$haul" "$work/list" "$runs"
        else
            TMPDIR="$work" python3 "$here/daemon_batch.py" "$haul" "$work/list" "$runs"
        fi
    done
fi
