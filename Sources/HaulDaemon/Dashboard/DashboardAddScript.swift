/// add.js: adds one or many URLs with aria2's `addUri`, one call per URL, with the options
/// given (dir, out, checksum, split, connections per server, limit, paused).
enum DashboardAddScript {
    static let source = #"""
"use strict";
window.Haul = window.Haul || {};

Haul.AddForm = class {
  constructor(app) {
    this.app = app;
    document.getElementById("add-button").addEventListener("click", () => this.add());
  }

  value(id) { return document.getElementById(id).value.trim(); }

  options(count) {
    const options = {};
    const put = (key, id) => { const v = this.value(id); if (v) options[key] = v; };
    put("dir", "add-dir");
    put("out", "add-out");
    put("checksum", "add-checksum");
    put("split", "add-split");
    put("max-connection-per-server", "add-connections");
    put("max-download-limit", "add-limit");
    if (document.getElementById("add-paused").checked) options.pause = "true";
    if (options.out && count > 1) throw new Error("out names one file: give it with a single URL");
    return options;
  }

  async add() {
    const result = document.getElementById("add-result");
    const urls = this.value("add-urls").split(/\r?\n/).map((line) => line.trim()).filter((line) => line && !line.startsWith("#"));
    if (urls.length === 0) { Haul.setText(result, "no URL given"); return; }
    let options;
    try { options = this.options(urls.length); } catch (error) { Haul.setText(result, error.message); return; }
    const failures = [];
    let added = 0;
    for (const url of urls) {
      try {
        await this.app.rpc.call("aria2.addUri", [[url], options]);
        added += 1;
      } catch (error) {
        failures.push(url + ": " + error.message);
      }
    }
    Haul.setText(result, "added " + added + (failures.length ? "; refused: " + failures.join("; ") : ""));
    if (failures.length === 0) document.getElementById("add-urls").value = "";
    this.app.refreshSoon();
  }
};
"""#
}
