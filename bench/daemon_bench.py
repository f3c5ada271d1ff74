"""Shared by the daemon benchmarks: a release `haul daemon` on a fresh state directory with
TCP on a free loopback port, a JSON-RPC caller with its secret, and its resident memory."""
import json, os, re, subprocess, sys, urllib.request


class Daemon:
    def __init__(self, haul, root, out, *extra):
        self.state = os.path.join(root, "state")
        self.process = subprocess.Popen(
            [haul, "daemon", "--socket", os.path.join(root, "d.sock"), "--state-dir", self.state,
             "--rpc-listen-port", "0", "--dir", out, "--log-level", "error", *extra],
            stderr=subprocess.PIPE, text=True)
        # A fleet member (--store) says so on a line of its own before the ready line.
        ready = self.process.stderr.readline()
        for _ in range(5):
            if ready.startswith("haul daemon: ready") or not ready:
                break
            ready = self.process.stderr.readline()
        match = re.search(r"tcp=(\S+)", ready)
        if not match:
            self.stop()
            sys.exit(f"the daemon did not start: {ready!r}")
        self.endpoint = f"http://{match.group(1)}/jsonrpc"
        self.token = "token:" + open(os.path.join(self.state, "rpc-secret")).read().strip()

    def post(self, body):
        request = urllib.request.Request(self.endpoint, json.dumps(body).encode(), {"Content-Type": "application/json"})
        return json.load(urllib.request.urlopen(request, timeout=600))

    def call(self, method, *params):
        answer = self.post({"jsonrpc": "2.0", "id": 1, "method": method, "params": [self.token, *params]})
        if "error" in answer:
            sys.exit(f"{method}: {answer['error']}")
        return answer["result"]

    def cpu(self):
        """The daemon's CPU time so far (user and system), in seconds."""
        with open(f"/proc/{self.process.pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def rss(self):
        with open(f"/proc/{self.process.pid}/status") as status:
            return int(re.search(r"VmRSS:\s+(\d+)", status.read()).group(1)) * 1024

    def stop(self):
        self.process.terminate()
        self.process.wait(timeout=60)
