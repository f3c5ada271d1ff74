#!/usr/bin/env bash
# Issue #2's acceptance check: `haul get -j 16 -i list` fetches 5,000 small files and a 1 GiB
# file from nginx on 127.0.0.1, and every file's sha256 equals the source's. Prints wall time,
# CPU time and peak memory for Haul and, for the 1 GiB file, curl beside it.
# Usage: bench/get-check.sh [WORKDIR]   (needs ~3 GiB free; WORKDIR defaults to /tmp/haul-get-check)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/common.sh"
ensure_peers
work=${1:-/tmp/haul-get-check}
build_haul

mkdir -p "$work/corpus/small"
if [ ! -f "$work/corpus/big.bin" ]; then
    echo "making the corpus…"
    python3 - "$work/corpus/small" <<'PY'
import os, sys
root = sys.argv[1]
for i in range(5000):
    with open(os.path.join(root, f"f{i:04d}.bin"), "wb") as f:
        f.write(os.urandom(16 * 1024))
PY
    head -c $((1 << 30)) /dev/urandom > "$work/corpus/big.bin"
fi
port=$(free_port)
nginx_start "$work/corpus" "$port"
trap nginx_stop EXIT

measure() { # label, command… → one table row from GNU time's -v output
    local label=$1; shift
    local log; log=$(mktemp)
    /usr/bin/time -v "$@" >/dev/null 2>"$log" || { cat "$log" >&2; return 1; }
    awk -v label="$label" -F': ' '
        /Elapsed \(wall clock\)/ { split($2, t, ":"); wall = (length(t) == 3) ? t[1]*3600 + t[2]*60 + t[3] : t[1]*60 + t[2] }
        /User time/ { user = $2 } /System time/ { sys = $2 } /Maximum resident/ { rss = $2 }
        END { printf "| %-38s | %8.2f | %8.2f | %8.1f |\n", label, wall, user + sys, rss / 1024 }' "$log"
    rm -f "$log"
}
command -v /usr/bin/time >/dev/null || { apt-get install -y -qq time >/dev/null; }

rm -rf "$work/out" && mkdir -p "$work/out/small" "$work/out/big" "$work/out/curl"
for i in $(seq -f "%04g" 0 4999); do echo "http://127.0.0.1:$port/small/f$i.bin"; done > "$work/list"
echo "| job | wall s | CPU s | peak MiB |"
echo "|---|---|---|---|"
# A fresh store for each run: what is measured is one download of the list, not a store that
# earlier runs of this script filled.
rm -rf "$work/state"
measure "haul get -j 16 -i list (5,000 × 16 KiB)" "$haul" get -q -j 16 --state-dir "$work/state/small" -i "$work/list" -d "$work/out/small"
measure "haul get (1 GiB)" "$haul" get -q --state-dir "$work/state/big" -d "$work/out/big" "http://127.0.0.1:$port/big.bin"
measure "curl (1 GiB)" curl -s -o "$work/out/curl/big.bin" "http://127.0.0.1:$port/big.bin"

echo "verifying sha256…"
(cd "$work/corpus/small" && sha256sum -- *.bin) > "$work/expected-small"
(cd "$work/out/small" && sha256sum -c --quiet "$work/expected-small")
[ "$(ls "$work/out/small" | wc -l)" = 5000 ] || { echo "expected 5000 files" >&2; exit 1; }
[ "$(sha256sum < "$work/corpus/big.bin")" = "$(sha256sum < "$work/out/big/big.bin")" ] || { echo "1 GiB file differs" >&2; exit 1; }
echo "all 5,001 files match their sha256"
