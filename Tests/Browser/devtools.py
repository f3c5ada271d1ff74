"""Headless Chromium over the DevTools protocol, with only Python's standard library.

Shared by the browser checks in this directory (dashboard_check.py, rpc_page_check.py). Talks
to Chromium on a pipe (`--remote-debugging-pipe`: file descriptors 3 and 4, NUL-terminated
JSON). Every wait polls a condition in the page until a deadline; there is no fixed sleep.
"""
import json
import os
import subprocess
import sys
import tempfile
import time

STEP_TIMEOUT = 45.0


class Failure(Exception):
    pass


class Browser:
    def __init__(self, chromium):
        self.profile = tempfile.TemporaryDirectory(prefix="haul-chromium-")
        to_child_read, self.to_child = os.pipe()
        self.from_child, from_child_write = os.pipe()

        def map_pipes():
            # The child's descriptors 3 (commands in) and 4 (answers out); through fresh
            # descriptors first, in case a pipe end already sits on 3 or 4.
            commands, answers = os.dup(to_child_read), os.dup(from_child_write)
            os.dup2(commands, 3)
            os.dup2(answers, 4)

        self.process = subprocess.Popen(
            [chromium, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--no-default-browser-check", "--disable-extensions", "--disable-dev-shm-usage",
             "--user-data-dir=" + self.profile.name, "--remote-debugging-pipe",
             "--window-size=1280,1100", "about:blank"],
            pass_fds=(3, 4, to_child_read, from_child_write), preexec_fn=map_pipes,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL if os.environ.get("HAUL_CHROMIUM_LOG") is None else None)
        os.close(to_child_read)
        os.close(from_child_write)
        self.buffer = b""
        self.next_id = 0
        self.events = []
        self.session = None

    def send(self, method, params=None, session=True):
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params or {}}
        if session and self.session:
            message["sessionId"] = self.session
        os.write(self.to_child, json.dumps(message).encode() + b"\0")
        while True:
            answer = self.read()
            if answer.get("id") == self.next_id:
                if "error" in answer:
                    raise Failure("%s: %s" % (method, answer["error"]))
                return answer.get("result", {})
            self.events.append(answer)

    def read(self):
        while b"\0" not in self.buffer:
            chunk = os.read(self.from_child, 1 << 16)
            if not chunk:
                raise Failure("Chromium closed the DevTools pipe")
            self.buffer += chunk
        message, self.buffer = self.buffer.split(b"\0", 1)
        return json.loads(message)

    def open_page(self):
        targets = self.send("Target.getTargets", session=False)["targetInfos"]
        page = next(t for t in targets if t["type"] == "page")
        self.session = self.send("Target.attachToTarget", {"targetId": page["targetId"], "flatten": True}, session=False)["sessionId"]
        self.send("Page.enable")
        self.send("Runtime.enable")
        self.send("Log.enable")

    def evaluate(self, expression):
        result = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": True})
        if "exceptionDetails" in result:
            raise Failure("script failed: %s\n%s" % (expression, json.dumps(result["exceptionDetails"])[:800]))
        return result["result"].get("value")

    def wait_for(self, expression, what, timeout=STEP_TIMEOUT):
        deadline = time.monotonic() + timeout
        last = None
        while time.monotonic() < deadline:
            last = self.evaluate("!!(%s)" % expression)
            if last:
                return True
            # Lets the page run between polls without spinning; not a synchronisation.
            time.sleep(0.1)
        raise Failure("timed out waiting for %s (last value %r)\npage: %s" % (what, last, self.page_state()))

    def page_state(self):
        """What the page shows, for failure messages; subclasses describe their own page."""
        try:
            return self.evaluate("document.body ? document.body.innerText.slice(0, 2000) : ''")
        except Failure as error:
            return str(error)

    def problems(self):
        """Console errors and Content-Security-Policy violations the page reported."""
        found = []
        for event in self.events:
            if event.get("method") == "Log.entryAdded":
                entry = event["params"]["entry"]
                if entry.get("level") == "error" and "favicon" not in entry.get("url", ""):
                    found.append(entry.get("text", ""))
            elif event.get("method") == "Runtime.exceptionThrown":
                found.append(json.dumps(event["params"]["exceptionDetails"])[:400])
        return found

    def close(self):
        try:
            self.send("Browser.close", session=False)
        except Failure:
            pass
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.profile.cleanup()


def js(value):
    return json.dumps(value)


def main(run, browser_class=Browser, failures=(Failure,)):
    """Runs a check script: reads its spec (JSON) from standard input, opens Chromium (as
    `browser_class`), runs `run(spec, browser)`, and prints FAIL with the reason (exit 1) on
    one of `failures`."""
    spec = json.load(sys.stdin)
    browser = browser_class(spec["chromium"])
    try:
        run(spec, browser)
    except failures as error:
        print("FAIL: %s" % error, flush=True)
        return 1
    finally:
        browser.close()
    return 0
