#!/usr/bin/env bash
# Issue #27: Haul and aria2c on the same Metalink 4 document: one 4 MiB file with sha-256 piece
# hashes (256 KiB pieces) and two mirrors on nginx (127.0.0.1), the preferred one (priority 1)
# serving piece 5 corrupted. For each tool: exit status, whether the file is right, what was
# left in the directory, and the requests each mirror saw. docs/playlists.md records a run.
# Usage: bench/metalink-aria2.sh [WORKDIR]     env: HAUL_BINARY (a haul to use instead of building one)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/common.sh"
work=${1:-$(mktemp -d /tmp/haul-meta4.XXXXXX)}
mkdir -p "$work"
command -v aria2c >/dev/null || { echo "aria2c is not installed (apt-get install aria2)" >&2; exit 1; }
build_haul

rm -rf "$work/www" "$work/haul-out" "$work/aria2-out" "$work/state"
mkdir -p "$work/www/m1" "$work/www/m2"
port=$(free_port)
python3 - "$work" "$port" <<'PY'
import hashlib, os, sys
work, port = sys.argv[1], sys.argv[2]
data = os.urandom(4 << 20)
piece = 256 << 10
bad = bytearray(data)
for i in range(5 * piece, 5 * piece + 1000):
    bad[i] ^= 0xFF
open(f"{work}/www/m2/data.bin", "wb").write(data)
open(f"{work}/www/m1/data.bin", "wb").write(bytes(bad))
open(f"{work}/expected.sha256", "w").write(hashlib.sha256(data).hexdigest())
hashes = "\n".join(f"      <hash>{hashlib.sha256(data[i:i + piece]).hexdigest()}</hash>" for i in range(0, len(data), piece))
open(f"{work}/data.meta4", "w").write(f"""<?xml version="1.0" encoding="UTF-8"?>
<metalink xmlns="urn:ietf:params:xml:ns:metalink">
  <file name="data.bin">
    <size>{len(data)}</size>
    <hash type="sha-256">{hashlib.sha256(data).hexdigest()}</hash>
    <pieces length="{piece}" type="sha-256">
{hashes}
    </pieces>
    <url priority="1">http://127.0.0.1:{port}/m1/data.bin</url>
    <url priority="2">http://127.0.0.1:{port}/m2/data.bin</url>
  </file>
</metalink>
""")
PY
# The same modification time: the two copies have the same ETag, as mirrors of one file do.
touch -d "2026-01-01 00:00:00" "$work/www/m1/data.bin" "$work/www/m2/data.bin"
nginx_start "$work/www" "$port" "access_log $work/access.log;"
trap nginx_stop EXIT

report() {
    local tool=$1 status=$2 dir=$3
    local actual="missing"
    [ -f "$dir/data.bin" ] && actual=$(sha256sum "$dir/data.bin" | cut -d' ' -f1)
    local verdict="WRONG"
    [ "$actual" = "$(cat "$work/expected.sha256")" ] && verdict="right"
    [ "$actual" = "missing" ] && verdict="not placed"
    local m1 m2
    m1=$(grep -c ' /m1/data.bin ' "$work/access.log" || true)
    m2=$(grep -c ' /m2/data.bin ' "$work/access.log" || true)
    local m2bytes
    m2bytes=$(awk '$7 == "/m2/data.bin" { sum += $10 } END { print sum + 0 }' "$work/access.log")
    printf '| %s | %s | %s | %s | %s requests | %s requests, %s bytes |\n' \
        "$tool" "$status" "$verdict" "$(ls -A "$dir" 2>/dev/null | tr '\n' ' ')" "$m1" "$m2" "$m2bytes"
    : > "$work/access.log"
}

echo "| tool | exit | data.bin | left in the directory | mirror 1 (corrupt piece) | mirror 2 |"
echo "|---|---|---|---|---|---|"
status=0
(cd "$work" && "$haul" get -q --state-dir "$work/state" -d haul-out data.meta4) || status=$?
report "haul get" "$status" "$work/haul-out"
status=0
rm -f "$work/aria2.log"
(cd "$work" && aria2c -q -M data.meta4 -d aria2-out --allow-overwrite=true --file-allocation=none \
    --max-tries=3 --retry-wait=1 --connect-timeout=5 --timeout=10 -l "$work/aria2.log" --log-level=info) || status=$?
report "aria2c $(aria2c --version | head -1 | awk '{ print $3 }')" "$status" "$work/aria2-out"
echo
echo "aria2c's log about hashes and errors ($work/aria2.log):"
grep -iE "hash|checksum|piece|error|mirror|/m[12]/" "$work/aria2.log" | sed -E 's/^[0-9: .-]+//' | sort | uniq -c | sort -rn | head -12
