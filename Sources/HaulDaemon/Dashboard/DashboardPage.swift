/// The dashboard's one HTML page: structure only. It holds no data and no inline script or
/// style (the Content-Security-Policy forbids both); the scripts fill it in with `textContent`.
enum DashboardPage {
    static let html = #"""
<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Haul</title>
<link rel="stylesheet" href="/dashboard/style.css">
<script src="/dashboard/format.js" defer></script>
<script src="/dashboard/rpc.js" defer></script>
<script src="/dashboard/chart.js" defer></script>
<script src="/dashboard/downloads.js" defer></script>
<script src="/dashboard/details.js" defer></script>
<script src="/dashboard/add.js" defer></script>
<script src="/dashboard/sessions.js" defer></script>
<script src="/dashboard/fleet.js" defer></script>
<script src="/dashboard/app.js" defer></script>
</head>
<body>
<header>
  <h1>Haul</h1>
  <span id="connection" class="badge">not connected</span>
  <dl id="totals" class="totals"></dl>
  <button type="button" id="logout" hidden>Forget secret</button>
</header>

<section id="login" class="panel" hidden>
  <h2>Connect to the daemon</h2>
  <p>Enter the daemon's RPC secret (<code>--rpc-secret</code>, or the file <code>rpc-secret</code> in its state directory).
     It is kept in this tab's session storage only.</p>
  <form id="login-form">
    <input type="text" name="username" value="haul" autocomplete="username" hidden>
    <label>Secret <input type="password" id="secret" autocomplete="current-password"></label>
    <button type="submit" id="login-button">Connect</button>
  </form>
  <p id="login-error" class="error"></p>
</section>

<main id="main" hidden>
  <section class="panel" id="overview">
    <h2>Speed, last 5 minutes</h2>
    <canvas id="speed-chart" width="900" height="160"></canvas>
    <div class="row">
      <label>Overall limit <input id="global-limit" size="8" placeholder="0 = none"></label>
      <button type="button" id="global-limit-set">Set</button>
      <span id="global-limit-result" class="note"></span>
    </div>
  </section>

  <section class="panel" id="add">
    <h2>Add downloads</h2>
    <textarea id="add-urls" rows="3" placeholder="One URL per line"></textarea>
    <div class="row">
      <label>dir <input id="add-dir" size="14"></label>
      <label>out <input id="add-out" size="14" placeholder="one URL only"></label>
      <label>checksum <input id="add-checksum" size="22" placeholder="sha-256=HEX"></label>
      <label>split <input id="add-split" size="3"></label>
      <label>connections <input id="add-connections" size="3"></label>
      <label>limit <input id="add-limit" size="6" placeholder="e.g. 1M"></label>
      <label><input type="checkbox" id="add-paused"> paused</label>
      <button type="button" id="add-button">Add</button>
    </div>
    <p id="add-result" class="note"></p>
  </section>

  <section class="panel" id="downloads">
    <h2>Downloads <span class="note">(the daemon's own session: aria2 clients, <code>haul add</code>)</span></h2>
    <div class="row toolbar">
      <span class="tabs">
        <button type="button" data-list="active" class="tab">Active</button>
        <button type="button" data-list="waiting" class="tab">Waiting</button>
        <button type="button" data-list="stopped" class="tab">Stopped</button>
      </span>
      <input id="filter" placeholder="Filter these rows" size="16">
      <label>Sort <select id="sort">
        <option value="queue">queue order</option>
        <option value="name">name</option>
        <option value="progress">progress</option>
        <option value="speed">speed</option>
        <option value="size">size</option>
      </select></label>
      <button type="button" id="pause-all">Pause all</button>
      <button type="button" id="resume-all">Resume all</button>
      <button type="button" id="purge">Clear finished</button>
    </div>
    <table class="grid">
      <thead><tr><th>Name</th><th>State</th><th>Progress</th><th>Size</th><th>Speed</th><th>ETA</th><th>Conn.</th><th>Error</th><th></th></tr></thead>
      <tbody id="rows"></tbody>
    </table>
    <div class="row pager">
      <button type="button" id="page-prev">Previous</button>
      <span id="page-info"></span>
      <button type="button" id="page-next">Next</button>
      <span id="action-result" class="note"></span>
    </div>
  </section>

  <section class="panel" id="details" hidden>
    <h2>Details <button type="button" id="details-close">Close</button></h2>
    <dl id="details-fields" class="fields"></dl>
    <canvas id="details-chart" width="900" height="100"></canvas>
    <div class="row">
      <label>Speed limit <input id="details-limit" size="8" placeholder="0 = none"></label>
      <button type="button" id="details-limit-set">Set</button>
      <span id="details-result" class="note"></span>
    </div>
  </section>

  <section class="panel" id="fleet" hidden>
    <h2>Daemons of the fleet <span class="note">(one PostgreSQL store: the lists above are the fleet's)</span></h2>
    <table class="grid">
      <thead><tr><th>Daemon</th><th>Host</th><th>PID</th><th>Started</th><th>Last seen</th></tr></thead>
      <tbody id="fleet-rows"></tbody>
    </table>
  </section>

  <section class="panel" id="sessions">
    <h2>Sessions</h2>
    <div id="session-list" class="row"></div>
    <div id="session-view"></div>
  </section>
</main>
</body>
</html>
"""#
}
