#!/usr/bin/env python3
"""What the web dashboard's calls cost with many downloads in the daemon.

Starts `haul daemon` (HAUL_BINARY, else .build/release/haul) in a temporary directory, adds
N paused downloads (default 100,000; `--count N`) over JSON-RPC in batches of 1,000 addUri
calls, then times each call the dashboard makes once a second (median and worst of `--runs`),
the whole set of them, and, for comparison, `haul.list`, which answers a session's whole list.
Standard library only. Prints a Markdown table.
"""
import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

SECRET = "dashboard-scale"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--count", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    binary = os.environ.get("HAUL_BINARY") or os.path.join(root, ".build/release/haul")
    directory = tempfile.mkdtemp(prefix="haul-dash-")
    os.makedirs(os.path.join(directory, "downloads"))
    daemon = subprocess.Popen(
        [binary, "daemon", "--socket", os.path.join(directory, "haul.sock"), "--state-dir", os.path.join(directory, "state"),
         "--dir", os.path.join(directory, "downloads"), "--rpc-listen-port", "0", "--rpc-secret", SECRET],
        stderr=subprocess.PIPE, text=True)
    try:
        port = None
        for line in daemon.stderr:
            if line.startswith("haul daemon: ready "):
                port = int(line.split("tcp=")[1].split()[0].rsplit(":", 1)[1])
                break
        if port is None:
            sys.exit("the daemon did not start")
        url = "http://127.0.0.1:%d/jsonrpc" % port

        def post(body):
            request = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
            with urllib.request.urlopen(request, timeout=600) as response:
                return response.read()

        def call(method, *params):
            return {"jsonrpc": "2.0", "id": "1", "method": method, "params": ["token:" + SECRET] + list(params)}

        started = time.monotonic()
        for first in range(0, args.count, 1000):
            batch = [call("aria2.addUri", ["http://127.0.0.1:9/%d.bin" % n], {"pause": "true"})
                     for n in range(first, min(args.count, first + 1000))]
            post([dict(c, id=str(i)) for i, c in enumerate(batch)])
        added = time.monotonic() - started
        print("added %d paused downloads in %.1f s (%s)" % (args.count, added, os.path.basename(binary)))

        keys = ["gid", "status", "totalLength", "completedLength", "downloadSpeed", "connections", "errorCode", "errorMessage", "files"]
        calls = [
            ("aria2.getGlobalStat", call("aria2.getGlobalStat")),
            ("aria2.tellActive(keys)", call("aria2.tellActive", keys)),
            ("aria2.tellWaiting(0, 50, keys)", call("aria2.tellWaiting", 0, 50, keys)),
            ("aria2.tellWaiting(N-50, 50, keys)", call("aria2.tellWaiting", args.count - 50, 50, keys)),
            ("aria2.tellStopped(-1, 50, keys)", call("aria2.tellStopped", -1, 50, keys)),
            ("haul.sessions", call("haul.sessions")),
            ("haul.overview(daemon, 0, 20)", call("haul.overview", "daemon", 0, 20)),
        ]
        rows = []
        for name, body in calls + [("haul.list(daemon), the whole list", call("haul.list", "daemon"))]:
            times, size = [], 0
            for _ in range(args.runs if "whole list" not in name else 3):
                t = time.monotonic()
                size = len(post(body))
                times.append(time.monotonic() - t)
            rows.append((name, statistics.median(times) * 1000, max(times) * 1000, size))
        tick = []
        for _ in range(args.runs):
            t = time.monotonic()
            for _, body in calls[:3] + calls[5:]:
                post(body)
            tick.append(time.monotonic() - t)
        rows.append(("one refresh of the page (stat, active, waiting, sessions, overview)",
                     statistics.median(tick) * 1000, max(tick) * 1000, 0))
        print()
        print("| call | median ms | worst ms | answer bytes |")
        print("|---|---|---|---|")
        for name, median, worst, size in rows:
            print("| %s | %.1f | %.1f | %s |" % (name, median, worst, "{:,}".format(size) if size else ""))
    finally:
        daemon.send_signal(signal.SIGTERM)
        try:
            daemon.wait(timeout=60)
        except subprocess.TimeoutExpired:
            daemon.kill()
        shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    main()
