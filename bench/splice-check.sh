#!/usr/bin/env bash
# The splice test from issue #2, against nginx on 127.0.0.1: each tool starts a 64 MiB
# download (throttled), is interrupted (Ctrl-C or kill -9) part way, the file on the server is
# replaced by a different one of the same size, and the tool is run again with its "continue"
# option. A correct tool ends with the new file (or refuses); a splicing one ends with old
# bytes followed by new ones. Prints one line per tool and signal.
# Usage: bench/splice-check.sh [WORKDIR]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/common.sh"
ensure_peers
work=${1:-/tmp/haul-splice-check}
build_haul
size=$((64 << 20))

rm -rf "$work" && mkdir -p "$work/www"
port=$(free_port)
# Throttled to 4 MiB/s while $work/www/.throttle exists, so the first leg can be interrupted.
nginx_start "$work/www" "$port" 'location / { if (-f $document_root/.throttle) { set $limit_rate 4m; } }'
trap nginx_stop EXIT
url="http://127.0.0.1:$port/file.bin"

dir_bytes() { du -sb "$1" 2>/dev/null | cut -f1; }

run_case() { # tool signal
    local tool=$1 signal=$2 out="$work/$1-$2"
    rm -rf "$out" && mkdir -p "$out"
    head -c "$size" /dev/urandom > "$work/www/file.bin"
    touch "$work/www/.throttle"
    local first=() again=()
    case $tool in
        curl)   first=(curl -s -o "$out/file.bin" "$url");          again=(curl -s -C - -o "$out/file.bin" "$url") ;;
        wget)   first=(wget -q -O "$out/file.bin" "$url");          again=(wget -q -c -O "$out/file.bin" "$url") ;;
        aria2c) first=(aria2c -q -d "$out" -o file.bin "$url");     again=(aria2c -q -c -d "$out" -o file.bin "$url") ;;
        haul)   first=("$haul" get -q --state-dir "$out.state" -d "$out" "$url")
                again=("$haul" get -q --state-dir "$out.state" -d "$out" "$url") ;;
    esac
    "${first[@]}" & local pid=$!
    # Interrupt once 24 MiB are on disk (past Haul's 16 MiB checkpoint).
    while [ "$(dir_bytes "$out")" -lt $((24 << 20)) ]; do sleep 0.2; kill -0 $pid 2>/dev/null || break; done
    kill -s "$signal" $pid 2>/dev/null || true
    wait $pid 2>/dev/null || true
    # The file changes on the server: same size, new bytes, new mtime (nginx's ETag changes).
    head -c "$size" /dev/urandom > "$work/www/file.bin"
    touch -d '+1 minute' "$work/www/file.bin"
    rm -f "$work/www/.throttle"
    local status=0
    "${again[@]}" >/dev/null 2>&1 || status=$?
    local result
    local new; new=$(sha256sum < "$work/www/file.bin")
    if [ -f "$out/file.bin" ] && [ "$(sha256sum < "$out/file.bin")" = "$new" ]; then
        result="correct: the new file"
    elif [ -f "$out/file.bin" ] && [ "$(stat -c %s "$out/file.bin")" = "$size" ]; then
        result="SPLICED: old bytes followed by new ones"
    elif [ $status -ne 0 ]; then
        result="refused (exit $status), no wrong file"
    else
        result="wrong file ($(stat -c %s "$out/file.bin" 2>/dev/null || echo missing) bytes)"
    fi
    printf "| %-7s | %-4s | %s |\n" "$tool" "$signal" "$result"
}

echo "| tool | signal | result after the file changed and the tool continued |"
echo "|---|---|---|"
for tool in curl wget aria2c haul; do
    command -v "$tool" >/dev/null || [ "$tool" = haul ] || continue
    for signal in INT KILL; do run_case "$tool" "$signal"; done
done
