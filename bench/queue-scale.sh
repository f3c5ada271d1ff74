#!/usr/bin/env bash
# Issue #3's scale check: enqueue 100,000 downloads in one group and report the enqueue time,
# the resident memory they add, and the time to reopen the store and find them.
# Usage: bench/queue-scale.sh [COUNT [BATCH]]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/common.sh"
export PATH="/opt/swift/usr/bin:$PATH"
cd "$here/.."
swift build "${release_build_flags[@]}" --product haul-queue-scale >/dev/null
.build/release/haul-queue-scale "${1:-100000}" ${2:+"$2"}
