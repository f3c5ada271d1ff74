/// sessions.js: every session the daemon holds (`haul.sessions`) and, for the one picked,
/// `haul.overview`: its totals, its groups with their progress, and a window of its downloads.
enum DashboardSessionsScript {
    static let source = #"""
"use strict";
window.Haul = window.Haul || {};

Haul.SessionView = class {
  constructor(app) {
    this.app = app;
    this.selected = null;
    this.offset = 0;
    this.pageSize = 20;
    this.list = document.getElementById("session-list");
    this.view = document.getElementById("session-view");
    this.list.addEventListener("click", (event) => {
      const button = event.target.closest("button[data-session]");
      if (!button) return;
      this.selected = button.dataset.session;
      this.offset = 0;
      this.app.refreshSessionsSoon();
    });
    this.view.addEventListener("click", (event) => {
      const button = event.target.closest("button[data-page]");
      if (!button) return;
      this.offset = Math.max(0, this.offset + Number(button.dataset.page) * this.pageSize);
      this.app.refreshSessionsSoon();
    });
  }

  async refresh(rpc) {
    const names = await rpc.call("haul.sessions", []);
    if (!names.includes(this.selected)) { this.selected = names[0] || null; this.offset = 0; }
    this.list.replaceChildren(...names.map((name) =>
      Haul.el("button", { type: "button", className: "session" + (name === this.selected ? " selected" : ""), data: { session: name } }, name)));
    if (!this.selected) { this.view.replaceChildren(Haul.el("p", { className: "note" }, "no sessions")); return; }
    const overview = await rpc.call("haul.overview", [this.selected, this.offset, this.pageSize]);
    this.render(overview);
  }

  render(o) {
    const states = Object.entries(o.states || {}).map(([state, n]) => n + " " + state).join(", ") || "no downloads";
    const summary = Haul.el("p", {}, o.total + " downloads (" + states + "), " + Haul.format.bytes(o.completedBytes) +
      " of " + Haul.format.bytes(o.expectedBytes) + ", " + Haul.format.speed(o.bytesPerSecond));
    const groups = Haul.el("table", { className: "grid session-groups" },
      Haul.el("thead", {}, Haul.el("tr", {}, ...["Group", "Members", "Progress", "Done", "Failed", "Speed", "State"].map((h) => Haul.el("th", {}, h)))));
    const groupBody = Haul.el("tbody");
    for (const g of o.groups || []) {
      const s = g.states || {};
      const finished = (s.complete || 0) + (s.error || 0) + (s.removed || 0);
      const bar = Haul.progressBar();
      Haul.setProgress(bar, g.completedBytes, g.expectedBytes);
      groupBody.appendChild(Haul.el("tr", {}, Haul.el("td", {}, g.name), Haul.el("td", { className: "num" }, String(g.total)),
        Haul.el("td", {}, bar), Haul.el("td", { className: "num" }, String(s.complete || 0)),
        Haul.el("td", { className: "num" }, String(s.error || 0)), Haul.el("td", { className: "num" }, Haul.format.speed(g.bytesPerSecond)),
        Haul.el("td", {}, finished === g.total ? "completed" : "in progress")));
    }
    groups.appendChild(groupBody);
    const downloads = Haul.el("table", { className: "grid session-downloads" },
      Haul.el("thead", {}, Haul.el("tr", {}, ...["Name", "Group", "State", "Progress", "Size", "Speed", "Error"].map((h) => Haul.el("th", {}, h)))));
    const body = Haul.el("tbody");
    for (const d of o.downloads || []) {
      const bar = Haul.progressBar();
      Haul.setProgress(bar, d.completedBytes, d.expectedBytes || 0);
      const name = d.fileURL ? Haul.format.fileURLName(d.fileURL) : (d.request.fileName || Haul.format.baseName(d.request.url));
      body.appendChild(Haul.el("tr", {}, Haul.el("td", { title: d.request.url }, name), Haul.el("td", {}, d.group || ""),
        Haul.el("td", {}, d.state), Haul.el("td", {}, bar), Haul.el("td", { className: "num" }, d.expectedBytes ? Haul.format.bytes(d.expectedBytes) : "?"),
        Haul.el("td", { className: "num" }, d.state === "running" ? Haul.format.speed(d.bytesPerSecond) : ""),
        Haul.el("td", { className: "error-text" }, d.errorMessage || "")));
    }
    downloads.appendChild(body);
    const last = Math.min(o.total, this.offset + this.pageSize);
    const pager = Haul.el("div", { className: "row pager" },
      Haul.el("button", { type: "button", data: { page: -1 }, disabled: this.offset === 0 }, "Previous"),
      Haul.el("span", {}, "rows " + (o.total ? this.offset + 1 : 0) + "–" + last + " of " + o.total),
      Haul.el("button", { type: "button", data: { page: 1 }, disabled: last >= o.total }, "Next"));
    const groupNote = o.groupCount > (o.groups || []).length ? Haul.el("p", { className: "note" }, "first " + o.groups.length + " of " + o.groupCount + " groups") : null;
    const noGroups = Haul.el("p", { className: "note" }, "no groups in this session");
    this.view.replaceChildren(summary, (o.groups || []).length ? groups : noGroups, groupNote || "", downloads, pager);
  }
};
"""#
}
