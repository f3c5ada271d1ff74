#!/usr/bin/env python3
"""Drives `haul daemon`'s web dashboard in headless Chromium, as a person would.

Started by DashboardBrowserTests (Tests/HaulDaemonTests) with a JSON description of the daemon
and of the test server's files on standard input. Talks to Chromium over the DevTools protocol
on a pipe (devtools.py, shared with the other browser checks), so it needs only Python's
standard library. Every wait polls a condition in the page until a deadline;
there is no fixed sleep. Prints one line per step; exits 0 when every check passed, 1 otherwise.
"""
import base64
import json
import sys

import devtools
from devtools import Browser as DevToolsBrowser, Failure, js


class Browser(DevToolsBrowser):
    """The shared DevTools driver, describing the dashboard when a wait fails."""

    def page_state(self):
        try:
            return self.evaluate("JSON.stringify({connection: document.getElementById('connection').textContent,"
                                 " rows: Array.from(document.querySelectorAll('#rows tr')).map(r => r.innerText),"
                                 " result: document.getElementById('action-result').textContent,"
                                 " add: document.getElementById('add-result').textContent,"
                                 " login: document.getElementById('login-error').textContent})")
        except Failure as error:
            return str(error)


def row(name):
    """A JS expression: the row of the visible table whose name is `name`, or undefined."""
    return "Array.from(document.querySelectorAll('#rows tr')).find(r => r.querySelector('button.name').textContent === %s)" % js(name)


def state_of(name):
    return "((r) => r && r.querySelector('td.state').textContent)(%s)" % row(name)


def type_into(element_id, text):
    """A JS expression: sets an input's value and fires its input event, as typing does."""
    return ("((f) => { f.value = %s; f.dispatchEvent(new Event('input')); return true; })(document.getElementById(%s))"
            % (js(text), js(element_id)))


def click(expression):
    return "(%s).click(), true" % expression


def run(spec, browser):
    step = lambda text: print("ok: " + text, flush=True)
    browser.open_page()
    browser.send("Page.navigate", {"url": spec["url"]})
    browser.wait_for("document.readyState === 'complete' && !document.getElementById('login').hidden", "the login form")
    step("the page asks for the secret")

    browser.evaluate("document.getElementById('secret').value = 'not-the-secret'; document.getElementById('login-button').click(); true")
    browser.wait_for("document.getElementById('login-error').textContent.includes('refused')", "a wrong secret to be refused")
    step("a wrong secret is refused")

    browser.evaluate("document.getElementById('secret').value = %s; document.getElementById('login-button').click(); true" % js(spec["secret"]))
    browser.wait_for("!document.getElementById('main').hidden && document.getElementById('connection').textContent === 'connected'", "the dashboard")
    if browser.evaluate("sessionStorage.getItem('haul.secret')") != spec["secret"]:
        raise Failure("the secret is not kept in session storage")
    step("connected with the secret, kept in session storage")

    urls = spec["slow"] + [spec["quick"], spec["failing"], spec["hostile"]]
    browser.evaluate("document.getElementById('add-urls').value = %s; document.getElementById('add-button').click(); true" % js("\n".join(urls)))
    browser.wait_for("document.getElementById('add-result').textContent === %s" % js("added %d" % len(urls)), "the downloads to be added")
    step("added %d downloads" % len(urls))

    slow = spec["slowNames"][0]
    browser.wait_for("%s === 'active'" % state_of(slow), "%s to be active" % slow)
    browser.evaluate(click("%s.querySelector('button[data-action=pause]')" % row(slow)))
    browser.evaluate(click("document.querySelector('.tab[data-list=waiting]')"))
    browser.wait_for("%s === 'paused'" % state_of(slow), "%s to be paused" % slow)
    step("paused " + slow)
    browser.evaluate(click("%s.querySelector('button[data-action=resume]')" % row(slow)))
    browser.evaluate(click("document.querySelector('.tab[data-list=active]')"))
    browser.wait_for("%s === 'active'" % state_of(slow), "%s to be active again" % slow)
    step("resumed " + slow)

    second = spec["slowNames"][1]
    browser.evaluate(type_into("filter", second))
    browser.wait_for("document.querySelectorAll('#rows tr').length === 1 && %s === 'active'" % state_of(second), "the filter to leave one row")
    browser.evaluate(type_into("filter", ""))
    browser.wait_for("document.querySelectorAll('#rows tr').length === %d" % len(spec["slowNames"]), "the filter to be cleared")
    step("the filter narrows the rows")

    browser.evaluate(click("%s.querySelector('button.name')" % row(second)))
    browser.wait_for("!document.getElementById('details').hidden && document.getElementById('details-fields').textContent.includes(%s)" % js(second), "the details of " + second)
    browser.evaluate("document.getElementById('details-limit').value = '100K'; document.getElementById('details-limit-set').click(); true")
    browser.wait_for("document.getElementById('details-result').textContent === 'limit set to 100K'", "the download's limit to be set")
    browser.wait_for("document.getElementById('details-fields').textContent.includes('102400 B/s')", "the details to show the new limit")
    step("set a download's speed limit from its details")

    browser.evaluate("document.getElementById('global-limit').value = '50M'; document.getElementById('global-limit-set').click(); true")
    browser.wait_for("document.getElementById('global-limit-result').textContent === 'now: 50.0 MiB/s'", "the overall limit to be set")
    step("set the overall speed limit")

    browser.wait_for("Haul.app.chart.samples.filter(v => v > 0).length >= 3", "the speed chart to have samples")
    step("the speed chart draws samples")
    if spec.get("screenshot"):
        shot = browser.send("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True})
        with open(spec["screenshot"], "wb") as out:
            out.write(base64.b64decode(shot["data"]))
        step("screenshot written to " + spec["screenshot"])

    browser.evaluate(click("document.querySelector('.tab[data-list=stopped]')"))
    browser.wait_for("%s === 'complete'" % state_of(spec["quickName"]), "%s to complete" % spec["quickName"])
    step(spec["quickName"] + " completed")
    browser.wait_for("%s === 'error'" % state_of(spec["failingName"]), "%s to fail" % spec["failingName"])
    error = browser.evaluate("%s.querySelector('td.error-text').textContent" % row(spec["failingName"]))
    if "404" not in error:
        raise Failure("the failed download's error does not say 404: %r" % error)
    step("the failed download shows its error: " + error)

    hostile = spec["hostileName"]
    browser.wait_for("%s === 'complete'" % state_of(hostile), "the hostile name shown as text")
    if browser.evaluate("document.querySelectorAll('#rows img, #details img, #session-view img').length") != 0:
        raise Failure("an <img> element was created from a file name")
    if browser.evaluate("window.__haulPwned === undefined") is not True:
        raise Failure("a file name's markup ran")
    step("the hostile file name is shown as text")

    # A playlist added as a resource is one row, named for the playlist, with its files' count.
    browser.evaluate("Haul.app.rpc.call('haul.addResource', ['daemon', 'show', %s, {kind: 'hls', directory: 'show'}]); true" % js(spec["resource"]))
    resource_row = "document.querySelector('#rows tr[data-gid=\"resource:show\"]')"
    browser.wait_for("%s && %s.querySelector('button.name').textContent === %s && %s.querySelector('td.state').textContent === 'complete'"
                     % (resource_row, resource_row, js(spec["resourceName"] + " · 3/3 files"), resource_row), "the resource as one complete row")
    if browser.evaluate(row(spec["segmentNames"][0]) + " !== undefined"):
        raise Failure("a file of the resource has a row of its own")
    step("the playlist is one row with its progress")

    quick_gid = browser.evaluate("%s.dataset.gid" % row(spec["quickName"]))
    browser.evaluate(click("%s.querySelector('button[data-action=remove]')" % row(spec["quickName"])))
    browser.wait_for("!document.querySelector('#rows tr[data-gid=\"%s\"]')" % quick_gid, "the removed result to leave the list")
    step("removed a finished download from the list")

    browser.evaluate(click("%s.querySelector('button.name')" % row(spec["failingName"])))
    browser.wait_for("!document.getElementById('details').hidden && document.getElementById('details-fields').textContent.includes('404')", "the details view")
    step("the details view shows the failed download")

    browser.wait_for("document.querySelector('#session-list button[data-session=daemon]') && document.querySelector('#session-view table')", "the sessions panel")
    step("the sessions panel lists the daemon's session")

    browser.evaluate(click("document.querySelector('.tab[data-list=active]')"))
    browser.evaluate(click("document.getElementById('pause-all')"))
    browser.evaluate(click("document.querySelector('.tab[data-list=waiting]')"))
    browser.wait_for(" && ".join("%s === 'paused'" % state_of(name) for name in spec["slowNames"]), "pause all")
    browser.evaluate(click("document.getElementById('resume-all')"))
    browser.wait_for(" && ".join("%s !== 'paused'" % state_of(name) for name in spec["slowNames"]), "resume all")
    step("paused and resumed all")

    # Three more: with four slots and the three above running, two of them wait in the queue.
    browser.evaluate("document.getElementById('add-urls').value = %s; document.getElementById('add-button').click(); true" % js("\n".join(spec["more"])))
    browser.wait_for("document.getElementById('add-result').textContent === %s" % js("added %d" % len(spec["more"])), "more downloads to be added")
    waiting_gids = "Array.from(document.querySelectorAll('#rows tr')).filter(r => r.querySelector('td.state').textContent === 'waiting').map(r => r.dataset.gid)"
    browser.wait_for("%s.length >= 2" % waiting_gids, "two downloads waiting in the queue")
    first, second_gid = browser.evaluate(waiting_gids)[:2]
    order = "%s.slice(0, 2).join(' ')" % waiting_gids
    browser.evaluate(click("document.querySelector('#rows tr[data-gid=\"%s\"] button[data-action=down]')" % first))
    browser.wait_for("%s === %s" % (order, js(second_gid + " " + first)), "the first waiting download to move down")
    browser.evaluate(click("document.querySelector('#rows tr[data-gid=\"%s\"] button[data-action=top]')" % first))
    browser.wait_for("%s === %s" % (order, js(first + " " + second_gid)), "it to move back to the top")
    step("moved a waiting download down and back to the top")

    problems = browser.problems()
    if problems:
        raise Failure("the page reported errors: %s" % problems)
    step("no console errors or policy violations")


if __name__ == "__main__":
    sys.exit(devtools.main(run, Browser, (Failure, StopIteration)))
