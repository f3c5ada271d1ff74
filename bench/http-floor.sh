#!/usr/bin/env bash
# The floor under job (b): AsyncHTTPClient alone fetching the 5,000 × 16 KiB corpus at
# concurrency 16 from nginx on 127.0.0.1, bodies read (and, in the next rows, written to tmpfs),
# beside `haul get -j 16` on the same list. What Haul adds per file is the difference. The
# rows that write files make the system calls every downloader makes (a part file created,
# written, closed, renamed into place), read through the client's `async` API or written from
# the event loop by a response delegate; and once with no HTTP client at all (SwiftNIO's
# HTTP/1.1 codec on keep-alive connections): what the client's own machinery costs.
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
    (cd "$here/.." && swift build "${release_build_flags[@]}" --product haul-http-floor >/dev/null)
    floor="$here/../.build/release/haul-http-floor"
fi

small_corpus "$work/corpus/small"
port=$(free_port)
nginx_start "$work/corpus" "$port"
trap nginx_stop EXIT
for i in $(seq -f "%04g" 0 4999); do echo "http://127.0.0.1:$port/small/f$i.bin"; done > "$work/floor-list"
sed 's/.*/url = "&"/' "$work/floor-list" > "$work/floor-curl-config"

# The commands, each an array CMD_<n>, with its label; they take turns in each of RUNS rounds
# (interleaved: the VM's drift hits every command alike), each run in an empty tmpfs
# directory, and each row shows the median wall and CPU seconds, and the ratio to curl's.
labels=(
    "AsyncHTTPClient alone, bodies read"
    "AsyncHTTPClient alone, bodies written to files (FileManager)"
    "AsyncHTTPClient alone, bodies written as part files and renamed"
    "AsyncHTTPClient alone, the same from the event loop (response delegate)"
    "AsyncHTTPClient alone, the same with no task per file"
    "No HTTP client: SwiftNIO's HTTP/1.1 codec, 16 keep-alive connections, the same files"
    "haul get -j 16"
    "curl --parallel --parallel-max 16"
)
CMD_0=("$floor" "$work/floor-list" 16)
CMD_1=("$floor" "$work/floor-list" 16 --write)
CMD_2=("$floor" "$work/floor-list" 16 --write-posix)
CMD_3=("$floor" "$work/floor-list" 16 --delegate)
CMD_4=("$floor" "$work/floor-list" 16 --delegate --chain)
CMD_5=("$floor" "$work/floor-list" 16 --bare-nio)
CMD_6=("$haul" get -q -j 16 --state-dir "$work/floor-state" -d . -i "$work/floor-list")
CMD_7=(curl -s --parallel --parallel-max 16 --remote-name-all -K "$work/floor-curl-config")
curl_index=7

declare -A walls cpus
for _ in $(seq 1 "$runs"); do
    for index in "${!labels[@]}"; do
        command_ref="CMD_$index[@]"
        out=$(mktemp -d /dev/shm/haul-floor.XXXXXX)
        rm -rf "$work/floor-state"
        line=$(cd "$out" && /usr/bin/time -f "%e %U %S" "${!command_ref}" 2>&1 >/dev/null | tail -1)
        files=$(find "$out" -maxdepth 1 -name 'f*.bin' | wc -l)
        rm -rf "$out"
        # Every writing command must have placed every file (the first only reads).
        if [ "$index" != 0 ] && [ "$files" != 5000 ]; then echo "${labels[$index]}: $files files, expected 5000" >&2; exit 1; fi
        walls[$index]+="$(echo "$line" | awk '{ print $1 }') "
        cpus[$index]+="$(echo "$line" | awk '{ print $2 + $3 }') "
    done
done
median() { tr ' ' '\n' | grep -v '^$' | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
curl_wall=$(echo "${walls[$curl_index]}" | median)
curl_cpu=$(echo "${cpus[$curl_index]}" | median)
echo "| 5,000 × 16 KiB, 16 at once, to tmpfs | wall s | CPU s | wall ÷ curl | CPU ÷ curl |"
echo "|---|---|---|---|---|"
for index in "${!labels[@]}"; do
    wall=$(echo "${walls[$index]}" | median)
    cpu=$(echo "${cpus[$index]}" | median)
    awk -v l="${labels[$index]}" -v w="$wall" -v c="$cpu" -v cw="$curl_wall" -v cc="$curl_cpu" \
        'BEGIN { printf "| %s | %.2f | %.2f | %.2f | %.2f |\n", l, w, c, w / cw, c / cc }'
done
