/// chart.js: a speed chart the page draws itself on a canvas, one sample a second over the
/// last minutes. It keeps at most `capacity` samples, so memory does not grow with time.
enum DashboardChartScript {
    static let source = #"""
"use strict";
window.Haul = window.Haul || {};

Haul.SpeedChart = class {
  constructor(canvas, capacity) {
    this.canvas = canvas;
    this.capacity = capacity || 300;
    this.samples = [];
  }

  push(bytesPerSecond) {
    this.samples.push(Math.max(0, Number(bytesPerSecond) || 0));
    if (this.samples.length > this.capacity) this.samples.splice(0, this.samples.length - this.capacity);
    this.draw();
  }

  clear() {
    this.samples = [];
    this.draw();
  }

  draw() {
    const canvas = this.canvas;
    const ratio = window.devicePixelRatio || 1;
    const width = canvas.clientWidth || canvas.width, height = canvas.clientHeight || canvas.height;
    if (canvas.width !== Math.round(width * ratio)) canvas.width = Math.round(width * ratio);
    if (canvas.height !== Math.round(height * ratio)) canvas.height = Math.round(height * ratio);
    const g = canvas.getContext("2d");
    g.setTransform(ratio, 0, 0, ratio, 0, 0);
    g.clearRect(0, 0, width, height);
    const top = 16, bottom = height - 4, left = 4, right = width - 4;
    const peak = Math.max(1024, ...this.samples);
    g.strokeStyle = "#d9dee7";
    g.lineWidth = 1;
    for (const f of [0, 0.5, 1]) {
      const y = bottom - (bottom - top) * f;
      g.beginPath(); g.moveTo(left, y); g.lineTo(right, y); g.stroke();
    }
    g.fillStyle = "#667085";
    g.font = "11px system-ui, sans-serif";
    g.fillText("peak " + Haul.format.speed(peak) + ", last " + Math.round(this.capacity / 60) + " min", left, 11);
    if (this.samples.length < 2) return;
    const step = (right - left) / (this.capacity - 1);
    const start = right - step * (this.samples.length - 1);
    g.beginPath();
    this.samples.forEach((value, i) => {
      const x = start + step * i, y = bottom - (bottom - top) * (value / peak);
      if (i === 0) g.moveTo(x, y); else g.lineTo(x, y);
    });
    g.strokeStyle = "#2563eb";
    g.lineWidth = 1.5;
    g.stroke();
    g.lineTo(right, bottom); g.lineTo(start, bottom); g.closePath();
    g.fillStyle = "rgba(37, 99, 235, 0.12)";
    g.fill();
  }
};
"""#
}
