/// downloads.js: the table of the daemon's own downloads (aria2's methods), one window of
/// rows at a time: `tellActive`, `tellWaiting(offset, num)` or `tellStopped(offset, num)`,
/// never the whole list. Rows are kept by GID and updated in place, so buttons stay put
/// between refreshes. Filter and sort apply to the rows of the window.
///
/// The files of a resource (an HLS playlist or Metalink document added with
/// `haul.addResource`/`haul add`) are one row, named for the document, with the progress of
/// its whole group (`haul.groupProgress`: files done/total, bytes), not one row per file.
enum DashboardDownloadsScript {
    static let source = #"""
"use strict";
window.Haul = window.Haul || {};

Haul.DownloadTable = class {
  constructor(app) {
    this.app = app;
    this.list = "active";
    this.offset = 0;
    this.pageSize = 50;
    this.filter = "";
    this.sort = "queue";
    this.count = 0;
    this.rows = new Map();
    this.body = document.getElementById("rows");
    this.body.addEventListener("click", (event) => this.clicked(event));
    for (const tab of document.querySelectorAll(".tab")) {
      tab.addEventListener("click", () => this.show(tab.dataset.list));
    }
    document.getElementById("filter").addEventListener("input", (e) => { this.filter = e.target.value.toLowerCase(); this.app.refreshSoon(); });
    document.getElementById("sort").addEventListener("change", (e) => { this.sort = e.target.value; this.app.refreshSoon(); });
    document.getElementById("page-prev").addEventListener("click", () => this.page(-1));
    document.getElementById("page-next").addEventListener("click", () => this.page(1));
    document.getElementById("pause-all").addEventListener("click", () => this.app.act("aria2.pauseAll", []));
    document.getElementById("resume-all").addEventListener("click", () => this.app.act("aria2.unpauseAll", []));
    document.getElementById("purge").addEventListener("click", () => this.app.act("aria2.purgeDownloadResult", []));
    this.markTab();
  }

  static keys = ["gid", "status", "totalLength", "completedLength", "downloadSpeed", "connections", "errorCode", "errorMessage", "files", "haulResource"];

  show(list) {
    this.list = list;
    this.offset = 0;
    this.markTab();
    this.app.refreshSoon();
  }

  markTab() {
    for (const tab of document.querySelectorAll(".tab")) tab.classList.toggle("selected", tab.dataset.list === this.list);
  }

  page(direction) {
    const next = this.offset + direction * this.pageSize;
    if (next < 0 || (direction > 0 && next >= this.count)) return;
    this.offset = next;
    this.app.refreshSoon();
  }

  /** Asks the daemon for the window on show; `stat` is aria2's getGlobalStat. */
  async refresh(rpc, stat) {
    const keys = Haul.DownloadTable.keys;
    let entries;
    if (this.list === "active") {
      this.count = Number(stat.numActive) || 0;
      entries = (await rpc.call("aria2.tellActive", [keys])).slice(this.offset, this.offset + this.pageSize);
    } else if (this.list === "waiting") {
      this.count = Number(stat.numWaiting) || 0;
      entries = await rpc.call("aria2.tellWaiting", [this.offset, this.pageSize, keys]);
    } else {
      // Newest first: aria2's negative offsets count from the end and run backwards.
      this.count = Number(stat.numStopped) || 0;
      entries = await rpc.call("aria2.tellStopped", [-1 - this.offset, this.pageSize, keys]);
    }
    this.render(await this.collapse(rpc, entries));
  }

  /** The window's entries with each resource's files replaced by one entry for the resource
      (at the place of its first file), carrying its group's progress. */
  async collapse(rpc, entries) {
    const groups = [...new Set(entries.filter((e) => e.haulResource).map((e) => e.haulResource.group))];
    if (groups.length === 0) return entries;
    const progress = new Map();
    for (const g of await rpc.call("haul.groupProgress", ["daemon", groups.slice(0, 200)])) progress.set(g.name, g);
    const out = [];
    const placed = new Map();
    for (const entry of entries) {
      const resource = entry.haulResource;
      const group = resource && progress.get(resource.group);
      if (!group) { out.push(entry); continue; }
      let row = placed.get(resource.group);
      if (!row) {
        const done = group.completed + group.failed + group.canceled;
        row = {
          gid: "resource:" + resource.group, resource: resource, group: group,
          status: group.failed > 0 && done === group.total ? "error" : done === group.total ? "complete" : entry.status,
          totalLength: String(group.expectedBytes), completedLength: String(group.completedBytes),
          downloadSpeed: String(group.bytesPerSecond), connections: "", files: [{ path: resource.source }],
          errorMessage: group.failed > 0 ? group.failed + " of " + group.total + " files failed" : "",
        };
        placed.set(resource.group, row);
        out.push(row);
      } else if (entry.status === "active") {
        row.status = "active";
      }
    }
    return out;
  }

  static nameOf(entry) {
    const file = (entry.files || [])[0] || {};
    if (file.path) return Haul.format.baseName(file.path);
    const uri = ((file.uris || [])[0] || {}).uri;
    return uri ? Haul.format.baseName(uri) : entry.gid;
  }

  sorted(entries) {
    const shown = entries.filter((entry) => {
      if (!this.filter) return true;
      const uri = ((((entry.files || [])[0] || {}).uris || [])[0] || {}).uri || "";
      return (Haul.DownloadTable.nameOf(entry) + " " + uri + " " + entry.status + " " + entry.gid).toLowerCase().includes(this.filter);
    });
    const by = {
      name: (a, b) => Haul.DownloadTable.nameOf(a).localeCompare(Haul.DownloadTable.nameOf(b)),
      progress: (a, b) => Haul.format.fraction(b.completedLength, b.totalLength) - Haul.format.fraction(a.completedLength, a.totalLength),
      speed: (a, b) => Number(b.downloadSpeed) - Number(a.downloadSpeed),
      size: (a, b) => Number(b.totalLength) - Number(a.totalLength),
    }[this.sort];
    return by ? shown.slice().sort(by) : shown;
  }

  render(entries) {
    const shown = this.sorted(entries);
    const seen = new Set();
    for (const entry of shown) {
      seen.add(entry.gid);
      let row = this.rows.get(entry.gid);
      if (!row) {
        row = this.makeRow(entry.gid);
        this.rows.set(entry.gid, row);
      }
      this.update(row, entry);
      this.body.appendChild(row.tr);
    }
    for (const [gid, row] of this.rows) {
      if (!seen.has(gid)) { row.tr.remove(); this.rows.delete(gid); }
    }
    const first = this.count === 0 ? 0 : this.offset + 1;
    const last = Math.min(this.count, this.offset + this.pageSize);
    Haul.setText(document.getElementById("page-info"),
      "rows " + first + "–" + last + " of " + this.count + (shown.length !== entries.length ? " (" + shown.length + " match the filter)" : ""));
  }

  makeRow(gid) {
    const cell = (className) => Haul.el("td", { className: className || "" });
    const row = { tr: Haul.el("tr", { data: { gid } }), cells: {} };
    const name = Haul.el("button", { type: "button", className: "name", data: { action: "details" } });
    row.cells.name = cell("name-cell");
    row.cells.name.appendChild(name);
    row.name = name;
    row.cells.state = cell("state");
    row.bar = Haul.progressBar();
    row.cells.progress = cell();
    row.cells.progress.appendChild(row.bar);
    row.cells.size = cell("num");
    row.cells.speed = cell("num");
    row.cells.eta = cell("num");
    row.cells.connections = cell("num");
    row.cells.error = cell("error-text");
    row.cells.actions = cell("actions");
    row.buttons = {};
    for (const [action, label] of [["pause", "Pause"], ["resume", "Resume"], ["up", "↑"], ["down", "↓"], ["top", "Top"], ["remove", "Remove"]]) {
      row.buttons[action] = Haul.el("button", { type: "button", data: { action }, title: action }, label);
      row.cells.actions.appendChild(row.buttons[action]);
    }
    for (const key of ["name", "state", "progress", "size", "speed", "eta", "connections", "error", "actions"]) row.tr.appendChild(row.cells[key]);
    return row;
  }

  update(row, entry) {
    const name = Haul.DownloadTable.nameOf(entry);
    const group = entry.group;
    Haul.setText(row.name, group ? name + " · " + group.completed + "/" + group.total + " files" : name);
    row.name.title = group ? entry.resource.source + " (group " + entry.resource.group + ")" : name;
    row.tr.classList.toggle("resource", !!group);
    Haul.setText(row.cells.state, entry.status);
    row.cells.state.className = "state state-" + entry.status;
    Haul.setProgress(row.bar, entry.completedLength, entry.totalLength);
    Haul.setText(row.cells.size, Number(entry.totalLength) > 0 ? Haul.format.bytes(entry.totalLength) : "?");
    const speed = Number(entry.downloadSpeed) || 0;
    Haul.setText(row.cells.speed, entry.status === "active" ? Haul.format.speed(speed) : "");
    Haul.setText(row.cells.eta, entry.status === "active" ? Haul.format.eta(Number(entry.totalLength) - Number(entry.completedLength), speed) : "");
    Haul.setText(row.cells.connections, entry.status === "active" ? entry.connections : "");
    Haul.setText(row.cells.error, entry.status === "error" ? entry.errorMessage : "");
    row.cells.error.title = entry.errorMessage || "";
    const waiting = entry.status === "waiting";
    row.buttons.pause.hidden = !(entry.status === "active" || waiting);
    row.buttons.resume.hidden = entry.status !== "paused";
    row.buttons.up.hidden = row.buttons.down.hidden = row.buttons.top.hidden = !waiting;
    if (group) for (const button of Object.values(row.buttons)) button.hidden = true;
  }

  clicked(event) {
    const button = event.target.closest("button[data-action]");
    const tr = event.target.closest("tr[data-gid]");
    if (!button || !tr || tr.dataset.gid.startsWith("resource:")) return;
    const gid = tr.dataset.gid;
    const row = this.rows.get(gid);
    const status = row ? row.cells.state.textContent : "";
    switch (button.dataset.action) {
      case "details": this.app.details.show(gid); break;
      case "pause": this.app.act("aria2.pause", [gid]); break;
      case "resume": this.app.act("aria2.unpause", [gid]); break;
      case "up": this.app.act("aria2.changePosition", [gid, -1, "POS_CUR"]); break;
      case "down": this.app.act("aria2.changePosition", [gid, 1, "POS_CUR"]); break;
      case "top": this.app.act("aria2.changePosition", [gid, 0, "POS_SET"]); break;
      case "remove":
        if (["complete", "error", "removed"].includes(status)) this.app.act("aria2.removeDownloadResult", [gid]);
        else this.app.act("aria2.remove", [gid]);
        break;
    }
  }
};
"""#
}
