/// details.js: one download in full (`tellStatus`, `getOption`, `getServers` while it runs),
/// its own speed chart, and its speed limit (`changeOption`, applied at once by the daemon).
enum DashboardDetailsScript {
    static let source = #"""
"use strict";
window.Haul = window.Haul || {};

Haul.Details = class {
  constructor(app) {
    this.app = app;
    this.gid = null;
    this.panel = document.getElementById("details");
    this.fields = document.getElementById("details-fields");
    this.chart = new Haul.SpeedChart(document.getElementById("details-chart"), 300);
    document.getElementById("details-close").addEventListener("click", () => this.hide());
    document.getElementById("details-limit-set").addEventListener("click", () => this.setLimit());
  }

  show(gid) {
    if (this.gid !== gid) this.chart.clear();
    this.gid = gid;
    this.panel.hidden = false;
    Haul.setText(document.getElementById("details-result"), "");
    this.refresh(this.app.rpc).catch((error) => this.app.report(error));
    this.panel.scrollIntoView({ block: "nearest" });
  }

  hide() {
    this.gid = null;
    this.panel.hidden = true;
  }

  async refresh(rpc) {
    const gid = this.gid;
    if (!gid) return;
    const status = await rpc.call("aria2.tellStatus", [gid]);
    const options = await rpc.call("aria2.getOption", [gid]);
    let currentUri = "";
    if (status.status === "active") {
      try {
        const servers = await rpc.call("aria2.getServers", [gid]);
        currentUri = ((((servers[0] || {}).servers) || [])[0] || {}).currentUri || "";
      } catch (error) { currentUri = ""; }
    }
    if (gid !== this.gid) return;
    const file = (status.files || [])[0] || {};
    const uri = ((file.uris || [])[0] || {}).uri || "";
    const pairs = [
      ["GID", status.gid],
      ["State", status.status],
      ["Name", Haul.DownloadTable.nameOf(status)],
      ["Path", file.path || "(named when the server answers)"],
      ["URL", uri],
      ["Fetching from", currentUri || "(only while it runs)"],
      ["Size", Number(status.totalLength) > 0 ? Haul.format.bytes(status.totalLength) + " (" + status.totalLength + " bytes)" : "unknown yet"],
      ["Done", Haul.format.bytes(status.completedLength) + " (" + Haul.format.percent(status.completedLength, status.totalLength) + ")"],
      ["Speed", status.status === "active" ? Haul.format.speed(status.downloadSpeed) : ""],
      ["Connections", status.connections],
      ["Split / per server", (options.split || "") + " / " + (options["max-connection-per-server"] || "")],
      ["Speed limit", options["max-download-limit"] && options["max-download-limit"] !== "0" ? options["max-download-limit"] + " B/s" : "none"],
      ["Checksum", options.checksum || "none asked"],
      ["Directory", status.dir || options.dir || ""],
    ];
    if (status.errorCode !== undefined) pairs.push(["Result", status.errorCode + " " + (status.errorMessage || "")]);
    Haul.fillFields(this.fields, pairs);
    this.chart.push(status.status === "active" ? Number(status.downloadSpeed) : 0);
  }

  async setLimit() {
    const value = document.getElementById("details-limit").value.trim() || "0";
    const result = document.getElementById("details-result");
    try {
      await this.app.rpc.call("aria2.changeOption", [this.gid, { "max-download-limit": value }]);
      Haul.setText(result, "limit set to " + value);
      this.app.refreshSoon();
    } catch (error) {
      Haul.setText(result, error.message);
    }
  }
};
"""#
}
