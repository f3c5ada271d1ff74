#!/usr/bin/env bash
# Issues #20 and #25: `haul daemon` under abuse (idle and half-open connections, WebSockets, a
# huge batch, large bodies, a flood of wrong secrets) and what a normal client sees meanwhile.
# A script, not a timed test.
#
#   bash bench/abuse.sh            # builds a release haul if needed, prints one table
#   HAUL=/path/to/haul bash bench/abuse.sh
#
# Needs python3; installs the Python package `websockets` when it is missing.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/common.sh"

if [ -n "${HAUL:-}" ]; then
    haul=$HAUL
else
    build_haul
fi
python3 -c 'import websockets' 2>/dev/null || python3 -m pip install --quiet websockets \
    || python3 -m pip install --quiet --break-system-packages websockets
# 10,000 half-open connections and 300 WebSockets need more descriptors than a default soft
# limit (for this script; the daemon is started with 1,024, see abuse.py).
ulimit -n "$(ulimit -Hn)"
echo "haul daemon under abuse: $(uname -srm), $(nproc) cores, $(date -u +%Y-%m-%d)"
python3 "$here/abuse.py" "$haul"
