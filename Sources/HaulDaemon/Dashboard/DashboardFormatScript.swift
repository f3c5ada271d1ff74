/// format.js: numbers for people, and the one way the dashboard builds DOM nodes. Every piece
/// of text from the daemon (names, URLs, error messages) goes in as a text node, never as HTML.
enum DashboardFormatScript {
    static let source = #"""
"use strict";
window.Haul = window.Haul || {};

Haul.format = {
  bytes(value) {
    let n = Number(value) || 0;
    const units = ["B", "KiB", "MiB", "GiB", "TiB"];
    let unit = 0;
    while (n >= 1024 && unit < units.length - 1) { n /= 1024; unit += 1; }
    return (unit === 0 ? n.toFixed(0) : n.toFixed(1)) + " " + units[unit];
  },
  speed(value) { return Haul.format.bytes(value) + "/s"; },
  eta(remaining, speed) {
    if (!(speed > 0) || !(remaining > 0)) return "";
    let s = Math.round(remaining / speed);
    const h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60);
    s %= 60;
    if (h > 0) return h + "h " + m + "m";
    return m > 0 ? m + "m " + s + "s" : s + "s";
  },
  fraction(done, total) {
    const d = Number(done) || 0, t = Number(total) || 0;
    return t > 0 ? Math.min(1, d / t) : 0;
  },
  percent(done, total) {
    return (Haul.format.fraction(done, total) * 100).toFixed(1) + "%";
  },
  /** The file name in a `file://` URL, percent-decoded. */
  fileURLName(url) {
    const name = Haul.format.baseName(url);
    try { return decodeURIComponent(name); } catch (e) { return name; }
  },
  /** The last path component of a path or URL. */
  baseName(text) {
    const path = String(text || "").split("?")[0].replace(/\/+$/, "");
    const slash = path.lastIndexOf("/");
    return slash >= 0 ? path.slice(slash + 1) : path;
  }
};

/**
 * Makes an element. `props` sets plain properties (className, type, title, disabled, hidden,
 * value) and `data` entries; children are nodes or strings, and strings become text nodes.
 */
Haul.el = function (tag, props, ...children) {
  const node = document.createElement(tag);
  const allowed = ["className", "type", "title", "disabled", "hidden", "value", "width", "height"];
  for (const [key, value] of Object.entries(props || {})) {
    if (key === "data") {
      for (const [name, text] of Object.entries(value)) node.dataset[name] = String(text);
    } else if (allowed.includes(key)) {
      node[key] = value;
    }
  }
  for (const child of children) {
    if (child === null || child === undefined) continue;
    node.appendChild(typeof child === "string" ? document.createTextNode(child) : child);
  }
  return node;
};

/** Sets an element's text (a text node: markup in it stays text). */
Haul.setText = function (node, text) {
  const value = text === null || text === undefined ? "" : String(text);
  if (node.textContent !== value) node.textContent = value;
};

/** A progress bar: a track, a filled part and a label. */
Haul.progressBar = function () {
  return Haul.el("div", { className: "bar" }, Haul.el("span"), Haul.el("em"));
};

Haul.setProgress = function (bar, done, total) {
  const fraction = Haul.format.fraction(done, total);
  bar.firstChild.style.width = (fraction * 100).toFixed(1) + "%";
  Haul.setText(bar.lastChild, Number(total) > 0 ? Haul.format.percent(done, total) : Haul.format.bytes(done));
};

/** Replaces a definition list's content with `pairs` of [term, text]. */
Haul.fillFields = function (list, pairs) {
  list.replaceChildren();
  for (const [term, text] of pairs) {
    list.appendChild(Haul.el("div", {}, Haul.el("dt", {}, term), Haul.el("dd", {}, String(text))));
  }
};
"""#
}
