#!/usr/bin/env bash
# Takes docs/dashboard.png, the README's picture of the web dashboard during a batch: runs the
# dashboard's browser test (a real `haul daemon`, downloads from the test server, headless
# Chromium), which saves a screenshot while the batch runs when HAUL_DASHBOARD_SCREENSHOT is set.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -d /opt/swift/usr/bin ]; then export PATH="/opt/swift/usr/bin:$PATH"; fi
if ! command -v chromium >/dev/null; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
fi
mkdir -p docs
swift build --build-tests
HAUL_DASHBOARD_SCREENSHOT="$PWD/docs/dashboard.png" swift test --skip-build --filter DashboardBrowserTests
ls -l docs/dashboard.png
