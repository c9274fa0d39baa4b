// The dashboard's one page: plain HTML, CSS and a small script that calls the JSON endpoints beside it. No build
// step and nothing loaded from elsewhere, so it works offline and behind any proxy.
//
// Served with a Content-Security-Policy that allows exactly this page's one script and one style (by their
// hashes), requests to its own origin and nothing else: no inline handler, no style attribute, no frame.
import { createHash } from 'node:crypto';

export interface DashboardPageOptions {
  /** The CSP frame-ancestors sources (default `'none'`). */
  frameAncestors?: string | undefined;
}

export interface RenderedDashboardPage {
  html: string;
  /** The page's own response headers (the security ones are set on every dashboard response as well). */
  contentSecurityPolicy: string;
}

const STYLE = `  body { font: 14px/1.4 system-ui, sans-serif; margin: 0; color: #1d2330; background: #f5f6f8; }
  header { background: #1d2330; color: #fff; padding: 10px 20px; font-size: 16px; }
  main { padding: 16px 20px; display: grid; gap: 16px; }
  section { background: #fff; border: 1px solid #dde1e7; border-radius: 6px; padding: 12px 16px; }
  h2 { font-size: 14px; margin: 0 0 8px; text-transform: uppercase; letter-spacing: .04em; color: #5b6475; }
  table { border-collapse: collapse; width: 100%; }
  td { overflow-wrap: anywhere; }
  th, td { text-align: left; padding: 4px 8px; border-bottom: 1px solid #eef0f3; vertical-align: top; }
  th { font-weight: 600; color: #5b6475; }
  tr.topic { cursor: pointer; } tr.topic.current { background: #e8f0fe; }
  code, pre { font: 12px/1.4 ui-monospace, monospace; }
  pre { background: #f5f6f8; padding: 8px; overflow: auto; max-height: 320px; margin: 4px 0; white-space: pre-wrap; overflow-wrap: anywhere; }
  form { display: flex; gap: 8px; flex-wrap: wrap; align-items: end; }
  label { display: grid; gap: 2px; font-size: 12px; color: #5b6475; }
  input, select, button { font: inherit; padding: 4px 8px; }
  button { cursor: pointer; border: 1px solid #aab2bf; background: #fff; border-radius: 4px; }
  button.primary { background: #1a73e8; color: #fff; border-color: #1a73e8; }
  button.danger { background: #c5221f; color: #fff; border-color: #c5221f; }
  .reason { border-radius: 10px; padding: 0 6px; background: #eef0f3; }
  .reason.poison { background: #fde2e1; } .reason.failed { background: #fef3d6; } .reason.unknown_urn { background: #e3ecfd; }
  #plan { border-color: #1a73e8; } .muted { color: #5b6475; } .error { color: #c5221f; }
  .state { border-radius: 10px; padding: 0 6px; background: #e6f4ea; }
  .state.paused { background: #fef3d6; } .state.tripped, .state.disconnected { background: #fde2e1; } .state.stalled { background: #fde2e1; }
  td.number { text-align: right; font-variant-numeric: tabular-nums; }
  .spacer { flex: 1; } .pager { display: flex; gap: 8px; align-items: center; margin-top: 8px; }
`;

/** The API base as a JS string literal that cannot close the script element. */
const scriptString = (text: string): string => JSON.stringify(text).replace(/</g, '\\u003c');

function script(apiBase: string): string {
  return `const API = ${scriptString(apiBase)};
let topic = null; let records = []; let offset = 0;
const $ = (id) => document.getElementById(id);
const esc = (s) => String(s ?? '').replace(/[&<>"']/g, (c) => ({'&':'&amp;','<':'&lt;','>':'&gt;','"':'&quot;',"'":'&#39;'}[c]));
const age = (ms) => { const u = [['d',864e5],['h',36e5],['m',6e4],['s',1e3]]; const out = [];
  for (const [n, s] of u) { const k = Math.floor(ms / s); ms -= k * s; if (k || out.length) out.push(k + n); if (out.length === 2) break; }
  return out.join(' ') || '0s'; };
async function call(path, body) {
  const response = await fetch(API + path, body === undefined ? {} :
    { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const data = await response.json();
  if (!response.ok) throw new Error(data.message || response.statusText);
  return data;
}
function filters() {
  return { topic, urn: $('f-urn').value, reason: $('f-reason').value, olderThan: $('f-older').value, newerThan: $('f-newer').value };
}
async function loadTopics() {
  const topics = await call('/topics');
  $('topics').innerHTML = topics.map((t) => '<tr class="topic' + (t.topic === topic ? ' current' : '') + '" data-topic="' + esc(t.topic) + '">' +
    '<td><code>' + esc(t.topic) + '</code></td><td data-count>' + t.total + (t.truncated ? '+' : '') + '</td><td>' +
    Object.entries(t.byReason).map(([r, n]) => '<span class="reason ' + esc(r) + '">' + esc(r) + ' ' + n + '</span>').join(' ') + '</td></tr>').join('');
  document.querySelectorAll('tr.topic').forEach((row) => row.onclick = () => { topic = row.dataset.topic; offset = 0; loadTopics(); loadRecords(); });
  if (!topic && topics.length) { topic = topics[0].topic; loadTopics(); loadRecords(); }
}
async function loadRecords() {
  $('current').textContent = topic ? '— ' + topic : '';
  $('status').textContent = 'loading…';
  try {
    const q = new URLSearchParams(Object.entries(filters()).filter(([, v]) => v));
    q.set('offset', String(offset));
    const listing = await call('/records?' + q);
    records = listing.records;
    $('records').innerHTML = records.map((r, i) => '<tr data-message-id="' + esc(r.messageId) + '">' +
      '<td><input type="checkbox" class="pick" value="' + esc(r.messageId) + '"></td><td><code>' + esc(r.messageId) + '</code></td>' +
      '<td><code>' + esc(r.id || '–') + '</code></td><td>' + esc(r.urn || '–') + '</td><td><span class="reason ' + esc(r.reason) + '">' +
      esc(r.reason || '–') + '</span></td><td>' + esc(r.attempts ?? '–') + '</td><td>' + age(r.ageMs) + '</td><td>' + esc(r.error ?? '') +
      '</td><td><button type="button" class="open" data-index="' + i + '">Open</button></td></tr>').join('');
    document.querySelectorAll('button.open').forEach((b) => b.onclick = () => openRecord(records[Number(b.dataset.index)]));
    $('status').textContent = records.length + ' record(s) shown of ' + listing.read + ' in the topic' +
      (listing.offset ? ' (from the ' + (listing.offset + 1) + 'th selected)' : '') +
      (listing.truncated ? '; only the oldest ' + listing.maxRead + ' are read, more may follow' : '');
    $('prev').disabled = listing.offset === 0; $('next').disabled = !listing.more;
    $('prev').onclick = () => { offset = Math.max(0, listing.offset - listing.limit); loadRecords(); };
    $('next').onclick = () => { offset = listing.offset + listing.limit; loadRecords(); };
  } catch (error) { $('status').innerHTML = '<span class="error">' + esc(error.message) + '</span>'; }
}
function openRecord(r) {
  $('detail').hidden = false;
  // The body as stored: a JSON reparse would round integers beyond 2^53.
  const body = r.body;
  $('detail-body').innerHTML = '<table>' + [['Message id', r.messageId], ['meta.id', r.id], ['URN', r.urn], ['Reason', r.reason],
    ['Attempts', r.attempts], ['Error', r.error], ['Exception', r.exception], ['Consumed from', r.consumedTopic], ['Original queue', r.originalQueue],
    ['Failed at', new Date(r.failedAt).toISOString() + ' (' + age(r.ageMs) + ' ago)'], ['Not an envelope', r.invalid]]
    .filter(([, v]) => v !== null && v !== '').map(([k, v]) => '<tr><th>' + k + '</th><td id="detail-' + k.replace(/\\W/g, '').toLowerCase() + '">' + esc(v) + '</td></tr>').join('') +
    '</table><h2>Body, exactly as stored</h2><pre id="detail-envelope">' + esc(body) + '</pre>' +
    '<h2>Properties</h2><pre>' + esc(JSON.stringify(r.properties, null, 2)) + '</pre>';
}
const picked = () => [...document.querySelectorAll('input.pick:checked')].map((c) => c.value);
async function act(verb) {
  const messageIds = picked();
  if (!messageIds.length) { $('status').textContent = 'tick the records first'; return; }
  const plan = await call('/' + verb, { ...filters(), messageIds, dryRun: true });
  const chosen = verb === 'redrive' ? plan.items.filter((i) => i.outcome === 'planned') : plan.records;
  const refused = verb === 'redrive' ? plan.items.filter((i) => i.outcome === 'refused') : [];
  $('plan').hidden = false;
  $('plan').innerHTML = '<p id="plan-text">Dry run: would ' + verb + ' ' + chosen.length + ' record(s): ' +
    chosen.map((i) => '<code>' + esc(i.id || i.dlqMessageId || i.messageId) + '</code>').join(', ') +
    (verb === 'redrive' ? ' (to ' + esc([...new Set(chosen.map((i) => i.to))].join(', ')) + ')' : '') + '. Nothing changed yet.</p>' +
    (refused.length ? '<p id="plan-refused" class="error">Refused ' + refused.length + ' record(s), left in the topic: ' +
      refused.map((i) => '<code>' + esc(i.id || i.dlqMessageId) + '</code> names <code>' + esc(i.to) + '</code>, not an allowed target').join('; ') + '</p>' : '') +
    '<button type="button" id="confirm" class="' + (verb === 'purge' ? 'danger' : 'primary') + '">Confirm ' + verb + '</button> ' +
    '<button type="button" id="cancel">Cancel</button>';
  $('cancel').onclick = () => { $('plan').hidden = true; };
  $('confirm').onclick = async () => {
    try {
      const done = await call('/' + verb, { ...filters(), messageIds, dryRun: false });
      const n = verb === 'redrive' ? done.redriven : done.purged;
      $('plan').innerHTML = '<p id="plan-text">' + (verb === 'redrive' ? 'Redriven ' : 'Purged ') + n + ' record(s).' +
        (done.refused ? ' <span class="error">' + done.refused + ' refused (target not allowed)</span>' : '') +
        (done.failed ? ' <span class="error">' + done.failed + ' failed</span>' : '') + '</p>';
    } catch (error) { $('plan').innerHTML = '<p id="plan-text" class="error">' + esc(error.message) + '</p>'; }
    $('detail').hidden = true; loadTopics(); loadRecords();
  };
}
$('filters').onsubmit = (event) => { event.preventDefault(); offset = 0; loadRecords(); };
$('redrive').onclick = () => act('redrive').catch((e) => { $('status').textContent = e.message; });
$('purge').onclick = () => act('purge').catch((e) => { $('status').textContent = e.message; });
$('all').onchange = () => document.querySelectorAll('input.pick').forEach((c) => { c.checked = $('all').checked; });
loadTopics().catch((error) => { $('status').innerHTML = '<span class="error">' + esc(error.message) + '</span>'; });
async function loadSchedules() {
  const response = await fetch(API + '/schedules');
  if (response.status === 404) return; // the dashboard was not given the schedules
  const list = await response.json();
  if (!response.ok) throw new Error(list.message || response.statusText);
  $('schedules').hidden = false;
  const now = Date.now();
  $('schedule-rows').innerHTML = list.map((s) => { const next = Date.parse(s.nextTick);
    return '<tr><td>' + esc(s.id) + '</td><td>' + esc(s.urn) + '</td><td>' + esc(s.nextTick) + ' <span class="muted">(' +
      (next >= now ? 'in ' + age(next - now) : 'due') + ')</span></td><td>' + esc(s.cron ? s.cron + ' ' + s.tz : 'once') +
      '</td><td>' + esc(s.fired) + '</td></tr>'; }).join('') || '<tr><td colspan="5" class="muted">none pending</td></tr>';
}
// The live subscriptions view: read again every few seconds, one reading at a time.
const SUBSCRIPTIONS_REFRESH_MS = 3000;
const perSecond = (n) => n === null || n === undefined ? '–' : esc(n) + '/s';
const count = (n) => n === null || n === undefined ? '–' : esc(n);
async function loadSubscriptions() {
  const view = await call('/subscriptions');
  $('subscriptions-problem').textContent = view.statsProblem || '';
  const rows = view.subscriptions;
  if (!rows.length) {
    $('subscription-rows').innerHTML = '<tr><td colspan="10" class="muted" id="no-subscriptions">no subscriptions on this app</td></tr>';
    return;
  }
  $('subscription-rows').innerHTML = rows.map((s, i) => '<tr class="subscription" data-topic="' + esc(s.topic) +
    '" data-subscription="' + esc(s.subscription) + '" data-state="' + esc(s.state) + '"><td><code>' + esc(s.topic) +
    '</code></td><td>' + esc(s.subscription) + '</td><td>' + esc(s.type) + '</td><td><span class="state ' + esc(s.state) +
    '" data-field="state">' + esc(s.state) + '</span></td><td class="number" data-field="handled-rate">' + perSecond(s.handledPerSecond) +
    '</td><td class="number" data-field="failed-rate">' + perSecond(s.failedPerSecond) + '</td><td class="number" data-field="backlog">' +
    count(s.backlog) + '</td><td class="number" data-field="lag">' + (s.lagMs === null ? '–' : age(s.lagMs)) +
    '</td><td class="number" data-field="active">' + count(s.active) + '</td><td>' +
    '<button type="button" class="pause" data-index="' + i + '"' + (s.state === 'paused' || s.state === 'tripped' ? ' disabled' : '') + '>Pause</button> ' +
    '<button type="button" class="resume" data-index="' + i + '"' + (s.state === 'paused' || s.state === 'tripped' ? '' : ' disabled') + '>Resume</button>' +
    '</td></tr>' + blockedRow(s, i)).join('');
  for (const verb of ['pause', 'resume'])
    document.querySelectorAll('#subscription-rows button.' + verb).forEach((b) => b.onclick = () => control(verb, rows[Number(b.dataset.index)].target, b));
  // Unblocking dead-letters the key's message: the operator confirms first.
  document.querySelectorAll('#subscription-rows button.unblock').forEach((b) => b.onclick = () => {
    const key = rows[Number(b.dataset.index)].blockedKeys[Number(b.dataset.key)];
    if (confirm('Dead-letter the blocked message of key ' + key + ' and let the key go on?'))
      control('unblock', { ...rows[Number(b.dataset.index)].target, key }, b);
  });
}
// A row's blocked keys (onExhausted 'block-key'), each with its Unblock button.
function blockedRow(s, i) {
  if (!s.blockedKeys || !s.blockedKeys.length) return '';
  return '<tr class="blocked-keys" data-index="' + i + '"><td colspan="10">Blocked keys: ' + s.blockedKeys.map((key, k) =>
    '<span class="blocked-key" data-key="' + esc(key) + '"><code>' + esc(key) + '</code> <button type="button" class="unblock" data-index="' +
    i + '" data-key="' + k + '">Unblock</button></span>').join(' ') + '</td></tr>';
}
async function control(verb, target, button) {
  button.disabled = true;
  try { await call('/subscriptions/' + verb, target); }
  catch (error) { $('subscriptions-problem').innerHTML = '<span class="error">' + esc(error.message) + '</span>'; return; }
  await loadSubscriptions().catch(() => undefined);
}
async function watchSubscriptions() {
  try { await loadSubscriptions(); }
  catch (error) { $('subscriptions-problem').innerHTML = '<span class="error">' + esc(error.message) + '</span>'; }
  setTimeout(watchSubscriptions, SUBSCRIPTIONS_REFRESH_MS);
}
watchSubscriptions();
loadSchedules().catch((error) => { $('schedules').hidden = false; $('schedule-rows').innerHTML =
  '<tr><td colspan="5" class="error">' + esc(error.message) + '</td></tr>'; });
`;
}

const BODY = `<body>
<header>BabelQueue: subscriptions and dead letters</header>
<main>
  <section id="subscriptions"><h2>Subscriptions of this app <span class="muted">(live)</span></h2>
    <table><thead><tr><th>Topic</th><th>Subscription</th><th>Type</th><th>State</th><th>Handled</th><th>Failed</th>
      <th>Backlog</th><th>Oldest unacked</th><th>Running</th><th></th></tr></thead>
      <tbody id="subscription-rows"></tbody></table>
    <p id="subscriptions-problem" class="muted"></p>
  </section>
  <section><h2>Dead-letter topics</h2>
    <table><thead><tr><th>Topic</th><th>Records</th><th>By reason</th></tr></thead><tbody id="topics"></tbody></table>
  </section>
  <section><h2>Records <span id="current" class="muted"></span></h2>
    <form id="filters">
      <label>URN <input name="urn" id="f-urn" placeholder="urn:babel:…"></label>
      <label>Reason <select name="reason" id="f-reason"><option value="">any</option>
        <option>failed</option><option>unknown_urn</option><option>poison</option></select></label>
      <label>Older than <input name="olderThan" id="f-older" placeholder="15m, 2h, 7d" size="8"></label>
      <label>Newer than <input name="newerThan" id="f-newer" placeholder="1h" size="8"></label>
      <button type="submit" id="apply">Apply</button>
      <span class="spacer"></span>
      <button type="button" id="redrive" class="primary">Redrive selected…</button>
      <button type="button" id="purge" class="danger">Purge selected…</button>
    </form>
    <section id="plan" hidden></section>
    <table><thead><tr><th><input type="checkbox" id="all" title="select all"></th><th>Message id</th><th>meta.id</th>
      <th>URN</th><th>Reason</th><th>Attempts</th><th>Age</th><th>Error</th><th></th></tr></thead>
      <tbody id="records"></tbody></table>
    <div class="pager"><button type="button" id="prev" disabled>‹ Previous</button>
      <button type="button" id="next" disabled>Next ›</button><p id="status" class="muted"></p></div>
  </section>
  <section id="detail" hidden><h2>Record</h2><div id="detail-body"></div></section>
  <section id="schedules" hidden><h2>Upcoming schedules</h2>
    <table><thead><tr><th>Id</th><th>URN</th><th>Next tick</th><th>Cron</th><th>Fired</th></tr></thead>
      <tbody id="schedule-rows"></tbody></table>
  </section>
</main>
`;

const sha256 = (text: string): string => `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;

export function dashboardPage(apiBase: string, options: DashboardPageOptions = {}): RenderedDashboardPage {
  const code = script(apiBase);
  const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>BabelQueue: subscriptions and dead letters</title>
<style>\n${STYLE}</style>
</head>
${BODY}<script>\n${code}</script>
</body>
</html>
`;
  const contentSecurityPolicy = [
    "default-src 'none'",
    `script-src ${sha256(`\n${code}`)}`,
    `style-src ${sha256(`\n${STYLE}`)}`,
    "connect-src 'self'",
    "img-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    `frame-ancestors ${options.frameAncestors ?? "'none'"}`,
  ].join('; ');
  return { html, contentSecurityPolicy };
}
