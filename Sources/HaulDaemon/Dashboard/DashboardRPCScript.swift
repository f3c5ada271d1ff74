/// rpc.js: JSON-RPC 2.0 over one WebSocket to the daemon's `/jsonrpc`, with the secret as the
/// first parameter of every call (aria2's `token:` form), and notifications to listeners.
enum DashboardRPCScript {
    static let source = #"""
"use strict";
window.Haul = window.Haul || {};

Haul.RPC = class {
  constructor(url, secret) {
    this.url = url;
    this.secret = secret;
    this.nextId = 1;
    this.pending = new Map();
    this.listeners = new Map();
    this.onclose = null;
    this.socket = null;
  }

  /** Opens the WebSocket; resolves once it is open. */
  connect() {
    return new Promise((resolve, reject) => {
      const socket = new WebSocket(this.url);
      this.socket = socket;
      let opened = false;
      socket.onopen = () => { opened = true; resolve(); };
      socket.onmessage = (message) => this.receive(message.data);
      socket.onerror = () => { if (!opened) reject(new Error("cannot reach the daemon at " + this.url)); };
      socket.onclose = () => {
        for (const { reject: fail } of this.pending.values()) fail(new Error("the connection to the daemon closed"));
        this.pending.clear();
        if (!opened) reject(new Error("cannot reach the daemon at " + this.url));
        else if (this.onclose) this.onclose();
      };
    });
  }

  close() {
    this.onclose = null;
    if (this.socket) this.socket.close();
  }

  /** Calls a method; resolves with its result, rejects with an Error carrying `code`. */
  call(method, params) {
    const id = String(this.nextId++);
    const message = { jsonrpc: "2.0", id, method, params: ["token:" + this.secret].concat(params || []) };
    return new Promise((resolve, reject) => {
      if (!this.socket || this.socket.readyState !== WebSocket.OPEN) {
        reject(new Error("not connected to the daemon"));
        return;
      }
      this.pending.set(id, { resolve, reject });
      this.socket.send(JSON.stringify(message));
    });
  }

  /** Calls `listener(params)` for every notification named `method`. */
  on(method, listener) {
    if (!this.listeners.has(method)) this.listeners.set(method, []);
    this.listeners.get(method).push(listener);
  }

  receive(text) {
    let message;
    try { message = JSON.parse(text); } catch (e) { return; }
    if (message.id === undefined || message.id === null) {
      for (const listener of this.listeners.get(message.method) || []) listener(message.params || []);
      return;
    }
    const waiter = this.pending.get(String(message.id));
    if (!waiter) return;
    this.pending.delete(String(message.id));
    if (message.error) {
      const error = new Error(String(message.error.message || "error"));
      error.code = message.error.code;
      waiter.reject(error);
    } else {
      waiter.resolve(message.result);
    }
  }
};

Haul.isUnauthorized = function (error) {
  return error && /^Unauthorized/.test(error.message);
};
"""#
}
