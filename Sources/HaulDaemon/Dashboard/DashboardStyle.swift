/// The dashboard's style sheet.
enum DashboardStyle {
    static let css = #"""
:root { --fg: #1d2430; --muted: #667085; --line: #d9dee7; --bg: #f6f7f9; --accent: #2563eb; --bad: #b42318; --ok: #067647; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.4 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--fg); background: var(--bg); }
header { display: flex; align-items: center; gap: 16px; padding: 10px 20px; background: #fff; border-bottom: 1px solid var(--line); flex-wrap: wrap; }
h1 { font-size: 20px; margin: 0; }
h2 { font-size: 15px; margin: 0 0 8px; }
.badge { padding: 2px 8px; border-radius: 10px; background: #eee; font-size: 12px; }
.badge.connected { background: #dcfae6; color: var(--ok); }
.badge.failed { background: #fee4e2; color: var(--bad); }
.totals { display: flex; gap: 14px; margin: 0; flex-wrap: wrap; }
.totals div { display: flex; gap: 4px; }
.totals dt { color: var(--muted); }
.totals dd { margin: 0; font-weight: 600; font-variant-numeric: tabular-nums; }
main { padding: 12px 20px; display: grid; gap: 12px; }
.panel { background: #fff; border: 1px solid var(--line); border-radius: 6px; padding: 12px 14px; }
#login { max-width: 520px; margin: 40px auto; }
.row { display: flex; gap: 10px; align-items: center; flex-wrap: wrap; margin-top: 6px; }
.note { color: var(--muted); font-size: 12px; }
.error { color: var(--bad); }
textarea { width: 100%; font: 13px monospace; }
input, select, button, textarea { font-size: 13px; }
button { cursor: pointer; }
.tab.selected { background: var(--accent); color: #fff; border-color: var(--accent); }
canvas { width: 100%; max-width: 900px; display: block; }
table.grid { width: 100%; border-collapse: collapse; margin-top: 8px; table-layout: fixed; }
.grid th, .grid td { text-align: left; padding: 4px 6px; border-bottom: 1px solid var(--line); overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
#downloads .grid th:nth-child(1) { width: 22%; }
#downloads .grid th:nth-child(2) { width: 70px; }
#downloads .grid th:nth-child(3) { width: 14%; }
#downloads .grid th:nth-child(4), #downloads .grid th:nth-child(5) { width: 95px; }
#downloads .grid th:nth-child(6), #downloads .grid th:nth-child(7) { width: 60px; }
#downloads .grid th:nth-child(9) { width: 190px; }
.grid td.num { font-variant-numeric: tabular-nums; }
.grid td .name { background: none; border: none; padding: 0; color: var(--accent); text-align: left; max-width: 100%; overflow: hidden; text-overflow: ellipsis; }
.state-error, .grid td.error-text { color: var(--bad); }
.state-complete { color: var(--ok); }
.bar { position: relative; height: 14px; background: #eef1f5; border-radius: 3px; overflow: hidden; }
.bar > span { position: absolute; left: 0; top: 0; bottom: 0; background: var(--accent); }
.bar > em { position: relative; font-style: normal; font-size: 11px; padding-left: 4px; }
.actions button { font-size: 12px; padding: 1px 5px; }
.fields { display: grid; grid-template-columns: max-content 1fr; gap: 2px 12px; margin: 0; }
.fields dt { color: var(--muted); }
.fields dd { margin: 0; word-break: break-all; }
.session { border: 1px solid var(--line); }
.session.selected { background: var(--accent); color: #fff; }
"""#
}
