#!/usr/bin/env python3
"""Drive a running `haul daemon` with aria2p, an unchanged aria2 client library from PyPI.

The issue's acceptance check: an existing aria2 client adds downloads, lists them, pauses,
resumes and removes them, and reads their status. Every step asserts what it got; the first
failure prints what was expected and exits with status 1 (2 for bad usage or a missing aria2p).

The downloads come from an HTTP server with the test server's `/file/NAME?size=N&seed=S&rate=R`
endpoint (`haul-test-server`): `rate` makes a download slow, and `hold=N` stops it at byte N until
`POST /control/release?key=PATH`, so that it is still running when it is paused.

    pip install aria2p
    python3 Tests/Integration/aria2p_check.py --rpc http://127.0.0.1:6800/jsonrpc \\
        --secret "$(cat ~/.local/state/haul/rpc-secret)" --base http://127.0.0.1:8080

The secret may also come from the environment: HAUL_RPC_SECRET.
"""

import argparse
import os
import sys
import threading
import time
import urllib.parse
import urllib.request
import uuid

try:
    import aria2p
except ImportError:
    print("aria2p is not installed: pip install aria2p", file=sys.stderr)
    sys.exit(2)


class CheckFailed(Exception):
    pass


def check(condition, what):
    if not condition:
        raise CheckFailed(what)


def wait_until(predicate, what, timeout=60.0):
    """Polls `predicate` until it is true; a timeout is a failure that names `what`."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise CheckFailed(f"timed out after {timeout:.0f} s waiting for {what}")


def expect_client_error(call, what, code=None, mention=None):
    """`call` must fail with an aria2 JSON-RPC error (and this code and message, if given)."""
    try:
        call()
    except aria2p.ClientException as error:
        check(code is None or error.code == code, f"{what}: expected error code {code}, got {error.code} ({error.message})")
        check(mention is None or mention in error.message, f"{what}: expected '{mention}' in the error, got '{error.message}'")
        return error
    raise CheckFailed(f"{what}: expected an error, the call succeeded")


class Run:
    def __init__(self, arguments):
        parts = urllib.parse.urlsplit(arguments.rpc)
        check(parts.scheme in ("http", "https") and parts.hostname and parts.port and parts.path == "/jsonrpc",
              f"--rpc must look like http://127.0.0.1:6800/jsonrpc, got {arguments.rpc}")
        self.host = f"{parts.scheme}://{parts.hostname}"
        self.port = parts.port
        self.secret = arguments.secret
        self.base = arguments.base.rstrip("/")
        self.api = aria2p.API(aria2p.Client(host=self.host, port=self.port, secret=self.secret, timeout=30))
        self.tag = uuid.uuid4().hex[:8]
        self.steps = 0
        self.notifications = []
        self.notifications_lock = threading.Lock()

    def step(self, name):
        self.steps += 1
        print(f"[{self.steps:2d}] {name}", flush=True)

    def path(self, name):
        return f"/file/aria2p-{self.tag}-{name}"

    def url(self, name, size, seed, rate=None, hold=None):
        query = {"size": str(size), "seed": str(seed)}
        if rate is not None:
            query["rate"] = str(rate)
        if hold is not None:
            query["hold"] = str(hold)
        return f"{self.base}{self.path(name)}?{urllib.parse.urlencode(query)}"

    def release(self, name):
        """Lets the server send the rest of a download started with `hold=`."""
        query = urllib.parse.urlencode({"key": self.path(name)})
        request = urllib.request.Request(f"{self.base}/control/release?{query}", method="POST")
        with urllib.request.urlopen(request, timeout=30) as response:
            check(response.status == 204, f"release of {name}: status {response.status}")

    def download(self, gid):
        return self.api.get_download(gid)

    def listen(self):
        """Listens to notifications over WebSocket (ws://…/jsonrpc), as aria2p does, in a thread."""
        def record(kind):
            def callback(gid):
                with self.notifications_lock:
                    self.notifications.append((kind, gid))
            return callback

        client = self.api.client
        thread = threading.Thread(
            target=client.listen_to_notifications,
            kwargs={
                "on_download_start": record("start"), "on_download_pause": record("pause"),
                "on_download_stop": record("stop"), "on_download_complete": record("complete"),
                "on_download_error": record("error"), "timeout": 1, "handle_signals": False,
            },
            daemon=True)
        thread.start()
        return thread

    def gone_or_removed(self, gid):
        """After aria2p's remove (remove, then removeDownloadResult), a download is forgotten, or
        still listed as removed when the daemon stops it asynchronously (aria2c does)."""
        try:
            return self.download(gid).status == "removed"
        except aria2p.ClientException as error:
            return "not found" in error.message

    def notified(self, kind, gid):
        with self.notifications_lock:
            return (kind, gid) in self.notifications

    def run(self, websocket):
        self.step("the daemon answers, and refuses a wrong or missing secret")
        version = self.api.client.get_version()
        check(isinstance(version.get("version"), str), f"getVersion: {version}")
        wrong = aria2p.Client(host=self.host, port=self.port, secret="not-the-secret", timeout=30)
        expect_client_error(wrong.get_version, "a wrong secret", code=1, mention="Unauthorized")
        missing = aria2p.Client(host=self.host, port=self.port, secret="", timeout=30)
        expect_client_error(missing.get_global_stat, "no secret", code=1, mention="Unauthorized")
        check("aria2.addUri" in self.api.client.list_methods(), "listMethods lacks aria2.addUri")

        listener = None
        if websocket:
            self.step("listen to notifications over WebSocket")
            listener = self.listen()
            # Notifications sent before the handshake completed are missed, and aria2p does not
            # say when it is connected: small probes are added until one's completion arrives.
            deadline = time.monotonic() + 30
            while True:
                probe = self.api.add_uris([self.url(f"probe-{uuid.uuid4().hex[:6]}.bin", 1024, 30)])
                try:
                    wait_until(lambda: self.notified("complete", probe.gid), "a probe's notification", timeout=2)
                    break
                except CheckFailed:
                    check(time.monotonic() < deadline, "no notification arrived over WebSocket within 30 s")

        self.step("add a fast and a slow download")
        fast_size, slow_size = 64 * 1024, 400 * 1024
        fast = self.api.add_uris([self.url("fast.bin", fast_size, 1)], options={"out": f"aria2p-{self.tag}-fast.bin"})
        slow = self.api.add_uris([self.url("slow.bin", slow_size, 2, rate=100 * 1024, hold=slow_size // 2)])
        for download in (fast, slow):
            check(len(download.gid) == 16 and all(c in "0123456789abcdef" for c in download.gid), f"GID {download.gid!r}")
            check(download.status in ("waiting", "active", "complete"), f"{download.gid} status {download.status}")

        self.step("list downloads")
        listed = {download.gid: download for download in self.api.get_downloads()}
        check(fast.gid in listed and slow.gid in listed, f"get_downloads lacks {fast.gid} or {slow.gid}: {sorted(listed)}")
        stats = self.api.get_stats()
        counted = stats.num_active + stats.num_waiting + stats.num_stopped
        check(counted >= 2, f"getGlobalStat counts {counted} downloads, expected at least 2")

        self.step("the fast download completes, with its status")
        wait_until(lambda: self.download(fast.gid).is_complete, f"{fast.gid} to complete")
        done = self.download(fast.gid)
        check(done.total_length == fast_size and done.completed_length == fast_size,
              f"lengths {done.completed_length}/{done.total_length}, expected {fast_size}")
        check(done.files and str(done.files[0].path).endswith(f"aria2p-{self.tag}-fast.bin"), f"path {done.files[0].path}")
        check(done.name == f"aria2p-{self.tag}-fast.bin", f"name {done.name!r}")
        check(done.error_code == "0", f"errorCode {done.error_code!r}")
        options = self.api.get_options([done])[0]
        check(options.get("out") == f"aria2p-{self.tag}-fast.bin", f"getOption out {options.get('out')!r}")

        self.step("pause the slow download while it runs")
        wait_until(lambda: self.download(slow.gid).completed_length > 0, f"{slow.gid} to receive bytes")
        check(self.api.pause([self.download(slow.gid)]) == [True], "pause did not succeed")
        wait_until(lambda: self.download(slow.gid).is_paused, f"{slow.gid} to be paused", timeout=10)
        paused = self.download(slow.gid)
        kept = paused.completed_length
        check(0 < kept < slow_size, f"a paused download keeps its bytes: {kept} of {slow_size}")
        waiting = self.api.client.tell_waiting(0, 1000, ["gid", "status"])
        check({"gid": slow.gid, "status": "paused"} in waiting, f"tellWaiting lacks the paused download: {waiting}")

        self.step("resume it; it continues and completes")
        self.release("slow.bin")
        check(self.api.resume([paused]) == [True], "resume did not succeed")
        check(self.download(slow.gid).status in ("waiting", "active", "complete"), "status after resume")
        wait_until(lambda: self.download(slow.gid).is_complete, f"{slow.gid} to complete")
        finished = self.download(slow.gid)
        check(finished.completed_length == slow_size == finished.total_length,
              f"lengths {finished.completed_length}/{finished.total_length}, expected {slow_size}")

        self.step("remove a running download")
        doomed = self.api.add_uris([self.url("removed.bin", 4 * 1024 * 1024, 3, rate=100 * 1024)])
        wait_until(lambda: self.download(doomed.gid).is_active, f"{doomed.gid} to start")
        check(self.api.remove([self.download(doomed.gid)]) == [True], "remove did not succeed")
        check(self.gone_or_removed(doomed.gid), f"{doomed.gid} is neither forgotten nor removed")

        self.step("pause all, resume all, remove a waiting download")
        queued = self.api.add_uris([self.url("queued.bin", 4 * 1024 * 1024, 4, rate=100 * 1024)])
        check(self.api.pause_all(), "pauseAll did not answer OK")
        # aria2c pauses a running download a moment after answering; Haul answers once it stopped.
        wait_until(lambda: self.download(queued.gid).is_paused, f"{queued.gid} to be paused after pauseAll", timeout=10)
        check(self.api.resume_all(), "unpauseAll did not answer OK")
        check(self.download(queued.gid).status in ("waiting", "active"), f"after unpauseAll: {self.download(queued.gid).status}")
        check(self.api.remove([self.download(queued.gid)]) == [True], "remove did not succeed")

        self.step("paused downloads keep their place in the waiting queue and move in it")
        held = [self.api.add_uris([self.url(f"held-{n}.bin", 1024, 10 + n)], options={"pause": "true"}) for n in range(3)]
        first, second, third = (download.gid for download in held)

        def waiting_order():
            mine = {first, second, third}
            return [entry["gid"] for entry in self.api.client.tell_waiting(0, 1000, ["gid"]) if entry["gid"] in mine]

        check(waiting_order() == [first, second, third], f"tellWaiting order {waiting_order()}")
        check(self.api.move_to_top(self.download(third)) == 0, "move_to_top of a paused download did not answer 0")
        check(waiting_order() == [third, first, second], f"after move_to_top: {waiting_order()}")
        moved = self.api.move_up(self.download(second))
        check(waiting_order() == [third, second, first], f"after move_up: {waiting_order()} (answered {moved})")
        check(all(self.download(gid).is_paused for gid in (first, second, third)), "a moved download is no longer paused")
        check(self.api.remove([self.download(gid) for gid in (first, second, third)]) == [True, True, True],
              "remove of the paused downloads")

        self.step("remove the finished downloads' results")
        check(self.api.remove([self.download(fast.gid), self.download(slow.gid)]) == [True, True], "remove of results")
        remaining = {download.gid for download in self.api.get_downloads()}
        check(not remaining & {fast.gid, slow.gid}, f"still listed: {remaining & {fast.gid, slow.gid}}")
        check(self.gone_or_removed(queued.gid), f"{queued.gid} is neither forgotten nor removed")

        self.step("an unknown GID is refused")
        expect_client_error(lambda: self.api.client.tell_status("0123456789abcdef"), "unknown GID", code=1, mention="not found")

        if listener is not None:
            self.step("notifications arrived over WebSocket")
            for kind, gid in [("start", slow.gid), ("pause", slow.gid), ("complete", slow.gid),
                              ("complete", fast.gid), ("stop", doomed.gid)]:
                wait_until(lambda: self.notified(kind, gid), f"a {kind} notification for {gid}", timeout=10)
            self.api.client.stop_listening()
            listener.join(timeout=5)

        # Last, because aria2c itself fails it: it writes wherever `out` points.
        self.step("an out that escapes the download directory is refused")
        expect_client_error(lambda: self.api.client.add_uri([self.url("escape.bin", 10, 5)], {"out": "../escape.bin"}),
                            "an out that escapes the download directory", code=1)

        # Haul's own, after the above: aria2c answers "OK" to options it ignores.
        self.step("options as aria2p reads and sets them; one Haul does not honour is refused by name")
        options = self.api.get_global_options()
        for name in ("dir", "split", "max-connection-per-server", "min-split-size", "timeout", "connect-timeout",
                     "max-tries", "retry-wait", "max-concurrent-downloads", "max-overall-download-limit",
                     "max-download-limit", "user-agent", "check-certificate", "continue", "max-download-result"):
            check(isinstance(options.get(name), str), f"getGlobalOption lacks {name}: {sorted(options.get_struct())}")
        check(options.timeout > 0 and options.min_split_size > 0, f"timeout {options.timeout}, min-split-size {options.min_split_size}")
        concurrent = options.max_concurrent_downloads
        check(self.api.set_global_options({"max-concurrent-downloads": concurrent + 1, "max-overall-download-limit": "0"}),
              "set_global_options with typical values")
        check(self.api.get_global_options().max_concurrent_downloads == concurrent + 1, "max-concurrent-downloads not applied")
        options = self.api.get_global_options()
        options.max_concurrent_downloads = concurrent  # aria2p's setter: one changeGlobalOption
        check(self.api.get_global_options().max_concurrent_downloads == concurrent, "the Options setter did not apply")
        check(self.api.set_global_options(options.get_struct()), "getGlobalOption given back to changeGlobalOption")
        check(self.api.set_global_options({"bt-max-peers": "55", "http-user": ""}), "blind-sent options and blank values")
        expect_client_error(lambda: self.api.set_global_options({"no-such-option": "1"}), "an unknown global option",
                            code=1, mention="'--no-such-option'")
        expect_client_error(lambda: self.api.set_global_options({"timeout": "1"}), "a daemon setting changed over RPC",
                            code=1, mention="--timeout")

        tuned = self.api.add_uris([self.url("tuned.bin", 1024, 20)],
                                  options={"pause": "true", "split": 2, "max-connection-per-server": "2", "dir": f"opts-{self.tag}"})
        listed = self.api.get_options([tuned])[0]
        check(listed.split == 2 and listed.max_connection_per_server == 2, f"getOption split/connections {listed.get_struct()}")
        check(listed.dir.endswith(f"opts-{self.tag}"), f"getOption dir {listed.dir}")
        check(self.api.set_options({"max-download-limit": "50K"}, [tuned]) == [True], "change_option max-download-limit")
        check(self.api.get_options([tuned])[0].get("max-download-limit") == str(50 * 1024), "max-download-limit not applied")
        expect_client_error(lambda: self.api.set_options({"max-tries": "9"}, [tuned]), "changing max-tries of one download",
                            code=1, mention="'--max-tries'")
        expect_client_error(lambda: self.api.add_uris([self.url("creds.bin", 10, 21)], options={"http-passwd": "pw"}),
                            "an option Haul does not honour in addUri", code=1, mention="'--http-passwd'")
        check(self.api.remove([self.download(tuned.gid)]) == [True], "remove of the tuned download")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rpc", required=True, help="the daemon's JSON-RPC URL, e.g. http://127.0.0.1:6800/jsonrpc")
    parser.add_argument("--secret", default=os.environ.get("HAUL_RPC_SECRET"),
                        help="the RPC secret (default: $HAUL_RPC_SECRET)")
    parser.add_argument("--base", required=True,
                        help="base URL of a server with haul-test-server's /file endpoint, e.g. http://127.0.0.1:8080")
    parser.add_argument("--no-websocket", action="store_true", help="skip the WebSocket notification check")
    arguments = parser.parse_args()
    if not arguments.secret:
        parser.error("give the secret with --secret or HAUL_RPC_SECRET")
    try:
        run = Run(arguments)
        run.run(websocket=not arguments.no_websocket)
    except CheckFailed as failure:
        print(f"FAIL: {failure}", file=sys.stderr)
        sys.exit(1)
    except aria2p.ClientException as error:
        print(f"FAIL: unexpected JSON-RPC error {error.code}: {error.message}", file=sys.stderr)
        sys.exit(1)
    except Exception as error:  # connection refused, a malformed answer, …: still a clear failure
        print(f"FAIL: {type(error).__name__}: {error}", file=sys.stderr)
        sys.exit(1)
    print(f"aria2p check passed: {run.steps} steps against {arguments.rpc}")


if __name__ == "__main__":
    main()
