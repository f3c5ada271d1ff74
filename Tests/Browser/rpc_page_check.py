#!/usr/bin/env python3
"""A web page of another origin drives `haul daemon` from headless Chromium, as aria2's browser
front-ends (AriaNg, webui-aria2) do.

Started by RPCBrowserPageTests (Tests/HaulDaemonTests) with a JSON description on standard input:
the daemon's port and secret (the daemon runs with --rpc-allow-origin-all), a file URL of the
test server to download, its name. Serves a blank page on another port of 127.0.0.1 (another
origin), then in that page: `fetch` POST with a JSON content type (so Chromium sends a CORS
preflight), `fetch` GET with base64 params, JSONP through a script tag, and a WebSocket that
adds a download and receives its notifications. Every wait polls until a deadline (devtools.py).
Prints one line per step; exits 0 when every check passed, 1 otherwise.
"""
import http.server
import json
import sys
import threading

import devtools
from devtools import Browser, Failure, js


class BlankPage(http.server.BaseHTTPRequestHandler):
    """The page of the other origin: an empty document; the checks run their scripts in it."""

    def do_GET(self):
        body = b"<!doctype html><html><head><title>other origin</title></head><body></body></html>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def step(text):
    print("ok: " + text, flush=True)


def run(spec, browser):
    daemon = "http://127.0.0.1:%d" % spec["port"]
    token = "token:" + spec["secret"]
    page_server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), BlankPage)
    threading.Thread(target=page_server.serve_forever, daemon=True).start()
    try:
        page = "http://127.0.0.1:%d/" % page_server.server_address[1]
        browser.open_page()
        browser.send("Page.navigate", {"url": page})
        browser.wait_for("document.title === 'other origin' && location.href === %s" % js(page), "the page of the other origin")
        step("a page of another origin is open: " + page)

        posted = browser.evaluate("""(async () => {
            const response = await fetch(%s + '/jsonrpc', {method: 'POST', headers: {'Content-Type': 'application/json'},
                body: JSON.stringify({jsonrpc: '2.0', id: 'post', method: 'aria2.getVersion', params: [%s]})});
            return {status: response.status, body: await response.json()};
        })()""" % (js(daemon), js(token)))
        if posted["status"] != 200 or not posted["body"].get("result", {}).get("version"):
            raise Failure("POST from the page: %r" % posted)
        step("fetch POST with a preflight answers aria2.getVersion (%s)" % posted["body"]["result"]["version"])

        got = browser.evaluate("""(async () => {
            const params = btoa(JSON.stringify([%s]));
            const response = await fetch(%s + '/jsonrpc?method=aria2.getGlobalStat&id=get&params=' + encodeURIComponent(params));
            return {status: response.status, body: await response.json()};
        })()""" % (js(token), js(daemon)))
        if got["status"] != 200 or got["body"].get("id") != "get" or "numActive" not in got["body"].get("result", {}):
            raise Failure("GET from the page: %r" % got)
        step("fetch GET with base64 params answers aria2.getGlobalStat")

        browser.evaluate("""(() => {
            window.haulJsonp = (answer) => { window.haulJsonpAnswer = answer; };
            const script = document.createElement('script');
            script.src = %s + '/jsonrpc?method=aria2.getVersion&id=jsonp&jsoncallback=haulJsonp&params='
                + encodeURIComponent(btoa(JSON.stringify([%s])));
            document.head.appendChild(script);
            return true;
        })()""" % (js(daemon), js(token)))
        browser.wait_for("window.haulJsonpAnswer && window.haulJsonpAnswer.id === 'jsonp' && window.haulJsonpAnswer.result.version",
                         "the JSONP answer")
        step("JSONP through a script tag calls back with the answer")

        browser.evaluate("""(() => {
            window.haulMessages = [];
            const socket = new WebSocket(%s + '/jsonrpc');
            socket.onmessage = (event) => window.haulMessages.push(JSON.parse(event.data));
            socket.onopen = () => socket.send(JSON.stringify({jsonrpc: '2.0', id: 'add', method: 'aria2.addUri',
                params: [%s, [%s]]}));
            window.haulSocket = socket;
            return true;
        })()""" % (js(daemon.replace("http:", "ws:")), js(token), js(spec["file"])))
        browser.wait_for("window.haulMessages.some(m => m.id === 'add' && typeof m.result === 'string')", "the WebSocket's addUri answer")
        gid = browser.evaluate("window.haulMessages.find(m => m.id === 'add').result")
        step("a WebSocket call adds a download (gid %s)" % gid)
        browser.wait_for("window.haulMessages.some(m => m.method === 'aria2.onDownloadComplete' && m.params[0].gid === %s)" % js(gid),
                         "the onDownloadComplete notification")
        step("the WebSocket receives onDownloadComplete for it")
        browser.evaluate("""(() => { window.haulSocket.send(JSON.stringify({jsonrpc: '2.0', id: 'status', method: 'aria2.tellStatus',
            params: [%s, %s, ['status', 'files']]})); return true; })()""" % (js(token), js(gid)))
        browser.wait_for("window.haulMessages.some(m => m.id === 'status')", "the tellStatus answer")
        status = browser.evaluate("window.haulMessages.find(m => m.id === 'status')")
        result = status.get("result", {})
        if result.get("status") != "complete" or not result["files"][0]["path"].endswith("/" + spec["fileName"]):
            raise Failure("tellStatus over the WebSocket: %r" % status)
        step("tellStatus over the WebSocket says complete, at %s" % result["files"][0]["path"])

        problems = browser.problems()
        if problems:
            raise Failure("the page reported errors: %r" % problems)
        step("no console errors (no CORS refusals)")
    finally:
        page_server.shutdown()
        page_server.server_close()


if __name__ == "__main__":
    sys.exit(devtools.main(run))
