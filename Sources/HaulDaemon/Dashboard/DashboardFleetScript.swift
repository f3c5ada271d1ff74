/// fleet.js: the daemons alive in this daemon's fleet (`haul.fleet`), shown only on a
/// PostgreSQL store; this daemon's row is marked. Refreshed with the sessions panel.
enum DashboardFleetScript {
    static let source = #"""
"use strict";
window.Haul = window.Haul || {};

Haul.FleetView = class {
  constructor() {
    this.panel = document.getElementById("fleet");
    this.rows = document.getElementById("fleet-rows");
  }

  async refresh(rpc) {
    const fleet = await rpc.call("haul.fleet", []);
    const daemons = fleet.daemons || [];
    this.panel.hidden = daemons.length === 0;
    this.rows.replaceChildren(...daemons.map((d) => Haul.el("tr", { className: d.id === fleet.self ? "selected" : "" },
      Haul.el("td", { title: d.id }, d.id.slice(0, 8) + (d.id === fleet.self ? " (this one)" : "")),
      Haul.el("td", {}, d.host), Haul.el("td", { className: "num" }, String(d.pid)),
      Haul.el("td", {}, new Date(d.started).toLocaleString()), Haul.el("td", {}, new Date(d.lastSeen).toLocaleString()))));
  }
};
"""#
}
