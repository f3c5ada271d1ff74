/// app.js: the secret (asked once, kept in session storage), the connection, and the refresh
/// cycle. State changes arrive as aria2's notifications and refresh the view at once; aria2
/// has no progress notification, so progress is asked for once a second (`getGlobalStat` and
/// the window of rows on show) over the same WebSocket; sessions every two seconds, or less
/// often when `haul.overview` takes long (a session of 100,000 downloads).
enum DashboardAppScript {
    static let source = #"""
"use strict";
window.Haul = window.Haul || {};

Haul.App = class {
  constructor() {
    this.rpc = null;
    this.timer = null;
    this.retry = null;
    this.soon = null;
    this.sessionsDue = 0;
    this.busy = false;
    this.again = false;
    this.chart = new Haul.SpeedChart(document.getElementById("speed-chart"), 300);
    this.table = new Haul.DownloadTable(this);
    this.details = new Haul.Details(this);
    this.add = new Haul.AddForm(this);
    this.sessions = new Haul.SessionView(this);
    this.fleet = new Haul.FleetView();
    // Submitting never navigates (the policy forbids form actions): the handler takes it.
    document.getElementById("login-form").addEventListener("submit", (e) => { e.preventDefault(); this.login(); });
    document.getElementById("logout").addEventListener("click", () => this.logout());
    document.getElementById("global-limit-set").addEventListener("click", () => this.setGlobalLimit());
  }

  static storageKey = "haul.secret";

  start() {
    const secret = sessionStorage.getItem(Haul.App.storageKey);
    if (secret !== null) this.connect(secret); else this.showLogin("");
  }

  showLogin(message) {
    this.stop();
    document.getElementById("main").hidden = true;
    document.getElementById("logout").hidden = true;
    document.getElementById("login").hidden = false;
    Haul.setText(document.getElementById("login-error"), message);
    this.setConnection("not connected", "");
    document.getElementById("secret").focus();
  }

  login() {
    const secret = document.getElementById("secret").value;
    document.getElementById("secret").value = "";
    this.connect(secret);
  }

  logout() {
    sessionStorage.removeItem(Haul.App.storageKey);
    this.showLogin("");
  }

  setConnection(text, state) {
    const badge = document.getElementById("connection");
    Haul.setText(badge, text);
    badge.className = "badge " + state;
  }

  webSocketURL() {
    return (location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/jsonrpc";
  }

  /** Connects with `secret`; `retrying` after a lost connection: try again every 2 s. */
  async connect(secret, retrying) {
    this.stop();
    this.setConnection(retrying ? "reconnecting" : "connecting", retrying ? "failed" : "");
    const rpc = new Haul.RPC(this.webSocketURL(), secret);
    try {
      await rpc.connect();
      // Any method that needs the secret tells whether it is right.
      await rpc.call("aria2.getGlobalOption", []).then((options) => this.showGlobalLimit(options));
    } catch (error) {
      rpc.close();
      if (retrying && !Haul.isUnauthorized(error)) {
        this.setConnection("reconnecting", "failed");
        this.retry = setTimeout(() => this.connect(secret, true), 2000);
        return;
      }
      if (Haul.isUnauthorized(error)) {
        sessionStorage.removeItem(Haul.App.storageKey);
        this.showLogin("The daemon refused this secret.");
      } else {
        this.showLogin(error.message);
      }
      return;
    }
    sessionStorage.setItem(Haul.App.storageKey, secret);
    this.rpc = rpc;
    rpc.onclose = () => this.lost(secret);
    for (const name of ["aria2.onDownloadStart", "aria2.onDownloadPause", "aria2.onDownloadStop", "aria2.onDownloadComplete", "aria2.onDownloadError"]) {
      rpc.on(name, () => this.refreshSoon());
    }
    document.getElementById("login").hidden = true;
    Haul.setText(document.getElementById("login-error"), "");
    document.getElementById("main").hidden = false;
    document.getElementById("logout").hidden = false;
    this.setConnection("connected", "connected");
    this.timer = setInterval(() => this.tick(), 1000);
    this.tick();
  }

  /** The connection dropped (the daemon restarted?): try again with the same secret. */
  lost(secret) {
    this.stop();
    this.setConnection("reconnecting", "failed");
    this.retry = setTimeout(() => this.connect(secret, true), 2000);
  }

  stop() {
    if (this.retry) clearTimeout(this.retry);
    this.retry = null;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    if (this.rpc) { this.rpc.onclose = null; this.rpc.close(); }
    this.rpc = null;
  }

  /** A refresh shortly: after the user acted, or on a notification (a burst of them, when
   * many small downloads finish, makes one refresh). */
  refreshSoon() {
    if (this.soon) return;
    this.soon = setTimeout(() => { this.soon = null; this.refresh(false); }, 100);
  }

  /** The same, with the sessions panel too (the user picked a session or a page). */
  refreshSessionsSoon() {
    this.sessionsDue = 0;
    this.refreshSoon();
  }

  tick() {
    this.refresh(true);
  }

  /** One refresh; `sample` adds a point to the speed chart (once a second). */
  async refresh(sample) {
    const rpc = this.rpc;
    if (!rpc) return;
    if (this.busy) { this.again = true; return; }
    this.busy = true;
    try {
      const stat = await rpc.call("aria2.getGlobalStat", []);
      this.showTotals(stat);
      if (sample) this.chart.push(Number(stat.downloadSpeed));
      await this.table.refresh(rpc, stat);
      if (this.details.gid && sample) await this.details.refresh(rpc);
      if (Date.now() >= this.sessionsDue) {
        // haul.overview walks the session's whole list in the daemon: asked every 2 s, and
        // never more than a tenth of the time, however long it takes.
        const started = performance.now();
        await this.sessions.refresh(rpc);
        await this.fleet.refresh(rpc);
        this.sessionsDue = Date.now() + Math.max(2000, 10 * (performance.now() - started));
      }
    } catch (error) {
      this.report(error);
    } finally {
      this.busy = false;
      if (this.again) { this.again = false; this.refreshSoon(); }
    }
  }

  showTotals(stat) {
    const totals = document.getElementById("totals");
    Haul.fillFields(totals, [
      ["speed", Haul.format.speed(stat.downloadSpeed)],
      ["active", stat.numActive],
      ["waiting", stat.numWaiting],
      ["stopped", stat.numStopped],
    ]);
  }

  showGlobalLimit(options) {
    const limit = options["max-overall-download-limit"];
    Haul.setText(document.getElementById("global-limit-result"), "now: " + (limit && limit !== "0" ? Haul.format.speed(limit) : "no limit"));
  }

  async setGlobalLimit() {
    const value = document.getElementById("global-limit").value.trim() || "0";
    try {
      await this.rpc.call("aria2.changeGlobalOption", [{ "max-overall-download-limit": value }]);
      this.showGlobalLimit(await this.rpc.call("aria2.getGlobalOption", []));
    } catch (error) {
      Haul.setText(document.getElementById("global-limit-result"), error.message);
    }
  }

  /** Calls a method that changes something, shows its error if any, and refreshes. */
  async act(method, params) {
    const result = document.getElementById("action-result");
    try {
      await this.rpc.call(method, params);
      Haul.setText(result, "");
    } catch (error) {
      Haul.setText(result, method.replace("aria2.", "") + ": " + error.message);
    }
    this.refreshSoon();
  }

  report(error) {
    if (Haul.isUnauthorized(error)) { this.logout(); return; }
    Haul.setText(document.getElementById("action-result"), error.message);
  }
};

document.addEventListener("DOMContentLoaded", () => {
  Haul.app = new Haul.App();
  Haul.app.start();
});
"""#
}
