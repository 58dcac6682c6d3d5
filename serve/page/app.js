// maskc serve: the spec playground and the run dashboard. Plain JavaScript, no libraries: all
// the page loads comes from maskc itself.
'use strict';

const $ = (id) => document.getElementById(id);
const kDebounceMs = 120;
const kPollMs = 1000;

// What the page shows, readable from outside (the browser tests read it through
// window.maskprior).
const state = {
  info: null,
  file: 'untitled.mask',
  params: {},       // values typed into the parameter fields
  layer: 0,
  head: 0,
  mask: null,       // the last compiled (layer, head): {header, values, provenance, hard}
  query: null,      // the row shown on the image grid
  error: null,      // the last diagnostic: {line, column, message, error}
  sequence: 0,      // compiles sent; a reply older than the newest shown is dropped
  shown: 0,
  inputAt: null,    // performance.now() of the first keystroke not yet drawn
  timings: [],      // {input_to_draw_ms, request_ms, draw_ms, compile_ms, n}
  runs: [],
  selected: new Set(),
  curves: {},       // run path -> /api/run reply
  sort: {column: -1, down: false},  // the runs table's order: a clicked column
};
window.maskprior = {
  state,
  cells: () => (state.mask ? Array.from(state.mask.values) : null),
  drawn: () => heatmapDrawn,
  curves: () => curveSeries,
  rows: () => tableRows,
  diffCells: () => (diffMask ? Array.from(diffMask.values) : null),
};

// ---- requests --------------------------------------------------------------------------

async function getJson(url) {
  const reply = await fetch(url);
  const body = await reply.json();
  if (!reply.ok) throw new Error(body.error || reply.statusText);
  return body;
}

async function postJson(url, body) {
  return fetch(url, {method: 'POST', headers: {'Content-Type': 'application/json'},
                     body: JSON.stringify(body)});
}

// The binary reply of /api/compile and /api/run_mask (serve/mask_reply.h).
function decodeMask(buffer) {
  const length = new DataView(buffer).getUint32(0, true);
  const header = JSON.parse(new TextDecoder().decode(new Uint8Array(buffer, 4, length)));
  const cells = header.n * header.n;
  let at = 4 + length;
  const values = new Float32Array(buffer, at, cells);
  at += cells * 4;
  let provenance = null;
  if (header.has_provenance) {
    provenance = new Int32Array(buffer, at, cells);
    at += cells * 4;
  }
  const hard = header.hard ? new Uint8Array(buffer, at, cells) : null;
  return {header, values, provenance, hard};
}

// ---- heatmap -----------------------------------------------------------------------------

let heatmapDrawn = null;  // what the heatmap canvas shows: {n, values, scale, origin, side}

// The colour of `value` as render/png.cpp draws it: -scale blue, 0 white, +scale red.
function colour(value, scale) {
  const t = Math.max(-1, Math.min(1, value / scale));
  const fade = Math.round(255 * (1 - Math.abs(t)));
  return [t >= 0 ? 255 : fade, fade, t <= 0 ? 255 : fade];
}

function colourScale(mask) {
  let largest = 0;
  const {values, hard} = mask;
  for (let i = 0; i < values.length; ++i) {
    if (!(hard && hard[i])) largest = Math.max(largest, Math.abs(values[i]));
  }
  return largest > 0 ? largest : 1;
}

// Cells into an N x N image, one pixel each, then scaled onto `canvas` beside the token labels.
function drawHeatmap(canvas, mask, options = {}) {
  const n = mask.header.n;
  const scale = colourScale(mask);
  const image = new ImageData(n, n);
  const pixels = image.data;
  const {values, hard} = mask;
  for (let i = 0, p = 0; i < n * n; ++i, p += 4) {
    pixels[p + 3] = 255;
    if (hard && hard[i]) continue;  // black
    // colour(), inlined: this loop runs a million times for 1,024 tokens.
    const t = Math.max(-1, Math.min(1, values[i] / scale));
    const fade = Math.round(255 * (1 - Math.abs(t)));
    pixels[p] = t >= 0 ? 255 : fade;
    pixels[p + 1] = fade;
    pixels[p + 2] = t <= 0 ? 255 : fade;
  }
  const cells = document.createElement('canvas');
  cells.width = cells.height = n;
  cells.getContext('2d').putImageData(image, 0, 0);
  const g = canvas.getContext('2d');
  g.clearRect(0, 0, canvas.width, canvas.height);
  const origin = Math.min(110, Math.round(canvas.width * 0.16));
  const side = Math.floor((canvas.width - origin - 4) / n) * n || canvas.width - origin - 4;
  g.imageSmoothingEnabled = false;
  g.drawImage(cells, origin, origin, side, side);
  drawLabels(g, mask.header.labels, origin, side, options.marked || new Set());
  return {n, values: mask.values, scale, origin, side};
}

function drawLabels(g, labels, origin, side, marked) {
  const n = labels.length;
  const font = Math.max(7, Math.min(12, side / n - 1));
  const every = Math.max(1, Math.ceil((font + 1) / (side / n)));
  g.font = `${font}px "DejaVu Sans Mono", monospace`;
  g.fillStyle = '#333';
  g.textBaseline = 'middle';
  for (let t = 0; t < n; t += every) {
    const at = origin + (t + 0.5) * side / n;
    g.textAlign = 'right';
    g.fillStyle = marked.has(t) ? '#d60' : '#333';
    g.fillText(labels[t] + (marked.has(t) ? ' ▸' : ''), origin - 3, at);
    g.save();
    g.translate(at, origin - 3);
    g.rotate(-Math.PI / 2);
    g.textAlign = 'left';
    g.fillStyle = '#333';
    g.fillText(labels[t], 0, 0);
    g.restore();
  }
}

// The cell under a mouse event, or null.
function cellAt(drawn, canvas, event) {
  if (!drawn) return null;
  const box = canvas.getBoundingClientRect();
  const x = (event.clientX - box.left) * canvas.width / box.width - drawn.origin;
  const y = (event.clientY - box.top) * canvas.height / box.height - drawn.origin;
  const q = Math.floor(y / drawn.side * drawn.n);
  const k = Math.floor(x / drawn.side * drawn.n);
  return q >= 0 && k >= 0 && q < drawn.n && k < drawn.n ? {q, k} : null;
}

// A decoder's readout rows: the rows `before` its last span, which predict that span's tokens.
function beforeRows(header) {
  const rows = new Set();
  if (!header.causal || header.spans.length < 2) return rows;
  const last = header.spans[header.spans.length - 1];
  for (let t = last.offset; t < last.offset + last.length; ++t) rows.add(t - 1);
  return rows;
}

// ---- playground ----------------------------------------------------------------------------

function sourceLines() { return $('source').value.split('\n'); }

function drawGutter() {
  const count = sourceLines().length;
  const errorLine = state.error ? state.error.line : 0;
  const lines = [];
  for (let i = 1; i <= count; ++i) {
    lines.push(i === errorLine ? `<span class="error" data-line="${i}">${i}</span>` : String(i));
  }
  $('gutter').innerHTML = lines.join('\n') + '\n';
  $('gutter').scrollTop = $('source').scrollTop;
}

let debounce = null;
function onEdit() {
  if (state.inputAt === null) state.inputAt = performance.now();
  drawGutter();
  clearTimeout(debounce);
  debounce = setTimeout(compile, kDebounceMs);
}

async function compile() {
  const sequence = ++state.sequence;
  const started = performance.now();
  const inputAt = state.inputAt === null ? started : state.inputAt;
  const reply = await postJson('/api/compile', {source: $('source').value, file: state.file,
                                               params: state.params, layer: state.layer,
                                               head: state.head});
  if (sequence < state.shown) return;
  if (reply.status === 503 && sequence === state.sequence) {
    const body = await reply.json();
    // Both compile slots were taken (another tab, a slow spec): try again shortly.
    if (body.busy) {
      debounce = setTimeout(compile, kDebounceMs);
      return;
    }
    state.shown = sequence;
    return showError(body);
  }
  state.shown = sequence;
  if (!reply.ok) return showError(await reply.json());
  const mask = decodeMask(await reply.arrayBuffer());
  const received = performance.now();
  showMask(mask);
  const done = performance.now();
  if (sequence === state.sequence) state.inputAt = null;
  const timing = {input_to_draw_ms: done - inputAt, request_ms: received - started,
                  draw_ms: done - received, compile_ms: mask.header.compile_ms, n: mask.header.n};
  state.timings.push(timing);
  $('status').textContent = `${mask.header.name}: [${mask.header.layers}, ${mask.header.heads}, ` +
      `${mask.header.n}, ${mask.header.n}] · compiled in ${timing.compile_ms.toFixed(1)} ms, ` +
      `drawn ${timing.input_to_draw_ms.toFixed(0)} ms after the keystroke`;
}

function showError(body) {
  state.error = body.line ? {line: body.line, column: body.column, message: body.message,
                             error: body.error} : {line: 0, error: body.error};
  $('diagnostic').textContent = body.error;
  $('diagnostic').className = 'error';
  $('heatmap').classList.add('stale');
  drawGutter();
}

function showMask(mask) {
  state.mask = mask;
  state.error = null;
  const warnings = mask.header.warnings;
  $('diagnostic').textContent = warnings.length ? warnings.join('\n') : 'ok';
  $('diagnostic').className = warnings.length ? 'error' : 'quiet';
  $('heatmap').classList.remove('stale');
  drawGutter();
  fillSelect($('layer'), mask.header.layers, mask.header.layer);
  fillSelect($('head'), mask.header.heads, mask.header.head);
  drawParams(mask.header.params);
  const marked = beforeRows(mask.header);
  heatmapDrawn = drawHeatmap($('heatmap'), mask, {marked});
  const spans = mask.header.spans;
  $('legend').textContent =
      'red: open (M > 0), blue: closed (M < 0), white: 0, black: hard-excluded' +
      (marked.size ? ` · ▸ rows before ${spans[spans.length - 1].name}: the decoder's readout ` +
                         '(row q predicts token q + 1)' : '');
  drawQuery();
}

function fillSelect(select, count, chosen) {
  if (select.options.length !== count) {
    select.innerHTML = '';
    for (let i = 0; i < count; ++i) select.add(new Option(String(i), String(i)));
  }
  select.value = String(chosen);
}

function drawParams(params) {
  const box = $('params');
  const names = Object.keys(params);
  if (box.dataset.names === names.join(',')) return;
  box.dataset.names = names.join(',');
  box.innerHTML = names.length ? '<b>param</b> ' : '';
  for (const name of names) {
    const label = document.createElement('label');
    const input = document.createElement('input');
    input.type = 'number';
    input.value = String(params[name]);
    input.dataset.param = name;
    input.addEventListener('input', () => {
      state.params[name] = input.value;
      onEdit();
    });
    label.append(`${name} = `, input);
    box.append(label);
  }
}

function describeCell(cell) {
  const mask = state.mask;
  const {labels} = mask.header;
  const i = cell.q * mask.header.n + cell.k;
  const lines = [`query ${labels[cell.q]} (row ${cell.q}), key ${labels[cell.k]} (column ${cell.k})`];
  if (mask.hard && mask.hard[i]) {
    lines.push('hard-excluded (−inf)');
  } else {
    lines.push(`M = ${mask.values[i]}`);
  }
  const line = mask.provenance ? mask.provenance[i] : 0;
  const text = line > 0 ? (sourceLines()[line - 1] || '').trim() : '';
  lines.push(line > 0 ? `set by line ${line}: ${text}` : 'default (no rule wrote this cell)');
  if (beforeRows(mask.header).has(cell.q)) lines.push(`row before ${labels[cell.q + 1]}: predicts it`);
  return lines.join('\n');
}

// One query's row laid out on each image grid of the layout (`grid SPAN H x W`).
function drawQuery() {
  const mask = state.mask;
  const grids = mask.header.spans.filter((span) => span.grid);
  $('query-panel').hidden = grids.length === 0;
  if (!grids.length) return;
  if (state.query === null || state.query >= mask.header.n) state.query = grids[0].offset;
  const q = state.query;
  $('query-label').textContent = mask.header.labels[q];
  const canvas = $('query-grid');
  const g = canvas.getContext('2d');
  g.clearRect(0, 0, canvas.width, canvas.height);
  const scale = colourScale(mask);
  const span = grids[0];
  const [h, w] = span.grid;
  const size = Math.floor(Math.min(canvas.width / w, canvas.height / h));
  for (let r = 0; r < h; ++r) {
    for (let c = 0; c < w; ++c) {
      const i = q * mask.header.n + span.offset + r * w + c;
      const rgb = mask.hard && mask.hard[i] ? [0, 0, 0] : colour(mask.values[i], scale);
      g.fillStyle = `rgb(${rgb.join(',')})`;
      g.fillRect(c * size, r * size, size - 1, size - 1);
      if (span.offset + r * w + c === q) {
        g.strokeStyle = '#0a0';
        g.lineWidth = 2;
        g.strokeRect(c * size + 1, r * size + 1, size - 3, size - 3);
      }
    }
  }
}

async function openChoice(value) {
  const [kind, path] = [value.slice(0, value.indexOf(':')), value.slice(value.indexOf(':') + 1)];
  const url = kind === 'file' ? `/api/file?path=${encodeURIComponent(path)}`
                              : `/api/example?name=${encodeURIComponent(path)}`;
  const reply = await fetch(url);
  const text = await reply.text();
  if (!reply.ok) return showError(JSON.parse(text));
  state.file = kind === 'file' ? path : `specs/${path}`;
  $('save-path').value = kind === 'file' ? path : path.split('/').pop();
  state.params = {};
  $('params').dataset.names = '';
  $('source').value = text;
  onEdit();
}

async function save() {
  const reply = await postJson('/api/save', {path: $('save-path').value, source: $('source').value});
  const body = await reply.json();
  $('save-status').textContent = reply.ok ? `saved ${body.saved}` : body.error;
  $('save-status').className = reply.ok ? 'ok' : 'fail';
  if (reply.ok) state.file = body.saved;
}

async function validate() {
  const choice = $('target').value;
  const body = {source: $('source').value, file: state.file, params: state.params};
  if (choice === 'depends') body.depends = $('depends').value;
  else if (choice.startsWith('task:')) body.task = choice.slice(5);
  else body.truth_table = choice.slice(6);
  const reply = await postJson('/api/validate', body);
  const result = await reply.json();
  $('validate-out').textContent = reply.ok ? result.text : result.error;
  $('validate-out').className = reply.ok && result.ok ? 'ok' : 'fail';
}

function fillOpenMenu(info) {
  const open = $('open');
  open.innerHTML = '';
  open.add(new Option('open a spec…', ''));
  for (const [kind, label, list] of [['file', `under ${info.dir}/`, info.specs],
                                     ['example', 'shipped examples', info.examples]]) {
    const group = document.createElement('optgroup');
    group.label = label;
    for (const path of list) group.append(new Option(path, `${kind}:${path}`));
    if (list.length) open.append(group);
  }
  const target = $('target');
  target.add(new Option('declared dependencies (--depends)', 'depends'));
  for (const task of info.tasks) target.add(new Option(`task ${task}`, `task:${task}`));
  for (const table of info.tables) target.add(new Option(`truth table ${table}`, `table:${table}`));
}

const kStarter = `# A spec to start from: edit it, the heatmap follows.
mask starter
param n = 8
tokens cls, x[n]
scale open = 10, close = -10
default close
open cls -> x
open x[i] -> x[i] for i in 0..n
`;

async function startPlayground() {
  const info = await getJson('/api/info');
  state.info = info;
  $('served').textContent = `${info.dir}/`;
  fillOpenMenu(info);
  $('source').addEventListener('input', onEdit);
  $('source').addEventListener('scroll', () => { $('gutter').scrollTop = $('source').scrollTop; });
  $('open').addEventListener('change', (e) => e.target.value && openChoice(e.target.value));
  $('save').addEventListener('click', save);
  $('validate').addEventListener('click', validate);
  $('layer').addEventListener('change', (e) => { state.layer = Number(e.target.value); compile(); });
  $('head').addEventListener('change', (e) => { state.head = Number(e.target.value); compile(); });
  const canvas = $('heatmap');
  canvas.addEventListener('mousemove', (event) => {
    const cell = cellAt(heatmapDrawn, canvas, event);
    if (cell && state.mask) $('hover').textContent = describeCell(cell);
  });
  canvas.addEventListener('click', (event) => {
    const cell = cellAt(heatmapDrawn, canvas, event);
    if (cell && state.mask) { state.query = cell.q; drawQuery(); }
  });
  const first = info.specs.length ? `file:${info.specs[0]}` : '';
  if (first) {
    $('open').value = first;
    await openChoice(first);
  } else {
    $('source').value = kStarter;
    onEdit();
  }
}

// ---- dashboard -----------------------------------------------------------------------------

const kPalette = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2',
                  '#17becf', '#7f7f7f', '#bcbd22'];

// Lines on `canvas`: series [{label, points: [[x, y]...], colour}], with axes and a legend.
function drawLines(canvas, series, xLabel) {
  const g = canvas.getContext('2d');
  g.clearRect(0, 0, canvas.width, canvas.height);
  const points = series.flatMap((s) => [...s.points,
                                        ...(s.band || []).flatMap(([x, lo, hi]) => [[x, lo], [x, hi]])]);
  g.font = '11px "DejaVu Sans", sans-serif';
  g.fillStyle = '#777';
  if (!points.length) {
    g.fillText('no records yet', 20, 20);
    return;
  }
  const xs = points.map((p) => p[0]);
  const ys = points.map((p) => p[1]);
  let [x0, x1, y0, y1] = [Math.min(...xs), Math.max(...xs), Math.min(...ys), Math.max(...ys)];
  if (x1 === x0) x1 = x0 + 1;
  if (y1 === y0) { y0 -= 0.5; y1 += 0.5; }
  const box = {left: 56, right: canvas.width - 10, top: 10, bottom: canvas.height - 34};
  const px = (x) => box.left + (x - x0) / (x1 - x0) * (box.right - box.left);
  const py = (y) => box.bottom - (y - y0) / (y1 - y0) * (box.bottom - box.top);
  g.strokeStyle = '#999';
  g.strokeRect(box.left, box.top, box.right - box.left, box.bottom - box.top);
  g.fillStyle = '#333';
  g.textAlign = 'right';
  for (const y of [y0, (y0 + y1) / 2, y1]) g.fillText(y.toPrecision(3), box.left - 4, py(y) + 4);
  g.textAlign = 'center';
  for (const x of [x0, (x0 + x1) / 2, x1]) g.fillText(String(Math.round(x)), px(x), box.bottom + 14);
  g.fillText(xLabel, (box.left + box.right) / 2, box.bottom + 28);
  for (const s of series) {  // a setting's seeds: the band between their lowest and highest
    if (!s.band || s.band.length < 2) continue;
    g.fillStyle = s.colour;
    g.globalAlpha = 0.18;
    g.beginPath();
    s.band.forEach(([x, , hi], i) => (i ? g.lineTo(px(x), py(hi)) : g.moveTo(px(x), py(hi))));
    for (const [x, lo] of [...s.band].reverse()) g.lineTo(px(x), py(lo));
    g.closePath();
    g.fill();
    g.globalAlpha = 1;
  }
  series.forEach((s, index) => {
    g.strokeStyle = s.colour;
    g.lineWidth = 1.5;
    g.beginPath();
    s.points.forEach(([x, y], i) => (i ? g.lineTo(px(x), py(y)) : g.moveTo(px(x), py(y))));
    g.stroke();
    g.fillStyle = s.colour;
    g.textAlign = 'left';
    g.fillText(s.label, box.left + 6, box.top + 12 + 13 * index);
  });
}

function seriesOf(records, key) {
  return records.filter((r) => key in r && 'step' in r).map((r) => [r.step, r[key]]);
}

function formatValue(value) {
  return typeof value === 'number' ? value.toPrecision(4) : '—';
}

// The runs as table rows: one per run, or with "one row per setting" one per setting (the runs
// of one `group`, /api/runs), its seeds pooled. Each row: {key, paths, cells, value, status}.
function runRows() {
  const grouped = $('group-seeds').checked;
  const rows = new Map();
  for (const run of state.runs) {
    const key = grouped && run.group !== undefined ? `group:${run.group}|${run.task || run.data || run.truth_table || ''}|${run.spec || ''}` : `run:${run.path}`;
    if (!rows.has(key)) rows.set(key, {key, runs: []});
    rows.get(key).runs.push(run);
  }
  // A setting pools its seeds; runs of one setting and one seed (copies, reruns) stay apart.
  const pools = [];
  for (const row of rows.values()) {
    const seeds = row.runs.map((r) => r.settings?.seed);
    if (row.runs.length > 1 && new Set(seeds).size === seeds.length && !seeds.includes(undefined)) {
      pools.push(row);
    } else {
      pools.push(...row.runs.map((run) => ({key: `run:${run.path}`, runs: [run]})));
    }
  }
  return pools.map(({key, runs}) => {
    const first = runs[0];
    const values = runs.map((r) => r.value).filter((v) => typeof v === 'number');
    const mean = values.length ? values.reduce((a, b) => a + b, 0) / values.length : null;
    const sd = values.length > 1
      ? Math.sqrt(values.reduce((a, v) => a + (v - mean) ** 2, 0) / (values.length - 1)) : null;
    const statuses = {};
    for (const r of runs) statuses[r.status] = (statuses[r.status] || 0) + 1;
    const settings = runs.length > 1
      ? `${first.group || '(the same settings)'}; seeds ${runs.map((r) => r.settings?.seed ?? '?').join(', ')}`
      : Object.entries(first.settings || {}).map(([k, v]) => `${k}=${v}`).join(' ');
    const headline = !first.metric ? '' : runs.length > 1
      ? `${first.metric} ${formatValue(mean)}${sd === null ? '' : ` ± ${sd.toPrecision(2)}`} (${values.length} of ${runs.length})`
      : `${first.metric} ${formatValue(first.value)}`;
    const status = runs.length > 1
      ? Object.entries(statuses).map(([s, n]) => `${n} ${s}`).join(', ') : first.status;
    const path = runs.length > 1 ? `${commonFolder(runs.map((r) => r.path))} (${runs.length} runs)`
                                 : first.path || '.';
    return {key, paths: runs.map((r) => r.path), value: mean, status: runs.length > 1 ? 'group' : status,
            group: runs.length > 1 ? first.group : null, seeds: runs.length,
            cells: [path, first.task || first.data || first.truth_table || '', first.spec || '',
                    first.init || '', settings, status, headline]};
  });
}

// The folder the paths share ("sweep/init=mask" of ".../seed0" and ".../seed1"), or ".".
function commonFolder(paths) {
  const parts = paths.map((p) => p.split('/').slice(0, -1));
  const shared = [];
  for (let i = 0; parts.every((p) => i < p.length && p[i] === parts[0][i]); ++i) shared.push(parts[0][i]);
  return shared.join('/') || '.';
}

function sortRows(rows) {
  const {column, down} = state.sort;
  if (column < 0) return rows;
  const key = (row) => (column === 6 ? (row.value ?? -Infinity) : row.cells[column]);
  return [...rows].sort((a, b) => {
    const x = key(a), y = key(b);
    const order = typeof x === 'number' && typeof y === 'number' ? x - y
                                                                 : String(x).localeCompare(String(y), undefined, {numeric: true});
    return down ? -order : order;
  });
}

let tableRows = [];  // the rows drawn: runRows() in the table's order
function drawRunsTable() {
  const body = $('runs').tBodies[0];
  body.innerHTML = '';
  tableRows = sortRows(runRows());
  for (const entry of tableRows) {
    const row = body.insertRow();
    if (entry.paths.length === 1) row.dataset.path = entry.paths[0];
    else row.dataset.group = entry.group;
    const box = document.createElement('input');
    box.type = 'checkbox';
    box.checked = entry.paths.every((p) => state.selected.has(p));
    box.addEventListener('change', () => {
      for (const p of entry.paths) {
        if (box.checked) state.selected.add(p); else state.selected.delete(p);
      }
      refreshCurves();
    });
    row.insertCell().append(box);
    entry.cells.forEach((text, i) => {
      const cell = row.insertCell();
      cell.textContent = text;
      if (i === 0) cell.className = 'path';
      if (i === 5) cell.className = entry.status;
    });
  }
  for (const th of $('runs').tHead.rows[0].cells) {
    const column = Number(th.dataset.sort ?? -1);
    th.classList.toggle('sorted-up', column === state.sort.column && !state.sort.down);
    th.classList.toggle('sorted-down', column === state.sort.column && state.sort.down);
  }
  const settings = new Set(state.runs.map((r) => r.group)).size;
  $('runs-count').textContent = `${state.runs.length} run folder(s), ${settings} setting(s), under ${state.info.dir}/`;
}

async function refreshRuns() {
  state.runs = (await getJson('/api/runs')).runs;
  drawRunsTable();
  if (!state.selected.size && tableRows.length) {  // the first row ticked: a run, or a setting
    for (const p of tableRows[0].paths) state.selected.add(p);
    drawRunsTable();
  }
  await refreshCurves();
}

async function refreshCurves() {
  const paths = [...state.selected];
  const replies = await Promise.all(paths.map((p) => getJson(`/api/run?path=${encodeURIComponent(p)}`)
                                                   .catch(() => null)));
  state.curves = {};
  paths.forEach((p, i) => { if (replies[i]) state.curves[p] = replies[i]; });
  drawCurves();
  const single = paths.length === 1 && state.curves[paths[0]];
  // The learned mask is fetched again only when the run has moved on (it is compiled each time).
  const key = single ? `${paths[0]}:${single.status}:${single.metrics.length}` : '';
  if (single && single.has_mask && key !== diffKey) {
    diffKey = key;
    await drawRunMask(paths[0]);
  }
}

// What the charts draw: one entry per ticked row of the table (a run, or a setting's ticked
// seeds), in the table's order, with the /api/run replies of its runs.
function curveEntries() {
  const entries = [];
  for (const row of tableRows) {
    const runs = row.paths.filter((p) => state.curves[p]).map((p) => state.curves[p]);
    if (!runs.length) continue;
    const label = row.paths.length === 1 ? row.paths[0]
                                         : `${row.group || row.cells[0]} (${runs.length} seeds)`;
    entries.push({label, runs});
  }
  return entries;
}

// One series of the lists of [x, y] points of a setting's runs: a lone run's points, or the mean
// at each x with the band from the lowest to the highest value there.
function pooled(label, colour, lists) {
  if (lists.length === 1) return {label, colour, points: lists[0]};
  const at = new Map();
  for (const list of lists) {
    for (const [x, y] of list) {
      if (!at.has(x)) at.set(x, []);
      at.get(x).push(y);
    }
  }
  const xs = [...at.keys()].sort((a, b) => a - b);
  const mean = (ys) => ys.reduce((a, b) => a + b, 0) / ys.length;
  return {label: `${label} (mean, min–max)`, colour,
          points: xs.map((x) => [x, mean(at.get(x))]),
          band: xs.map((x) => [x, Math.min(...at.get(x)), Math.max(...at.get(x))])};
}

function drawCurves() {
  const entries = curveEntries();
  const runs = entries.flatMap((e) => e.runs);
  const keys = new Set();
  for (const run of runs) for (const r of run.metrics) Object.keys(r).forEach((k) => keys.add(k));
  keys.delete('step');
  const select = $('curve-key');
  const wanted = select.value || (runs.length && runs[0].metric) || '';
  select.innerHTML = '';
  for (const key of [...keys].sort()) select.add(new Option(key, key));
  if (keys.has(wanted)) select.value = wanted;
  const key = select.value;
  const colourOf = (i) => kPalette[i % kPalette.length];
  const chart = (name, points) => entries.map((e, i) =>
    pooled(`${e.label} ${name}`, colourOf(i), e.runs.map(points)));
  curveSeries = chart(key, (run) => seriesOf(run.metrics, key));
  drawLines($('curve'), curveSeries, 'step');
  for (const [canvas, k] of [['prior', 'prior_mass'], ['drift', 'mask_drift']]) {
    drawLines($(canvas), chart(k, (run) => seriesOf(run.metrics, k)), 'step');
  }
  drawLines($('loss'), chart('loss', (run) => seriesOf(run.steps, 'loss')), 'step');
  drawLines($('by-length'), chart(runs[0]?.metric || '', (run) => run.by_length || []), 'size');
}

let curveSeries = [];  // the learning curves drawn: [{label, colour, points}]
let diffKey = '';  // the run and progress whose learned mask is drawn
let diffDrawn = null;
let diffMask = null;
async function drawRunMask(path) {
  const reply = await fetch(`/api/run_mask?path=${encodeURIComponent(path)}`);
  if (!reply.ok) {
    $('diff-label').textContent = (await reply.json()).error;
    return;
  }
  diffMask = decodeMask(await reply.arrayBuffer());
  $('diff-label').textContent = `${path}: layer 0, head 0 (red rose, blue fell in training)`;
  diffDrawn = drawHeatmap($('diff'), diffMask);
}

async function showReports() {
  const {reports} = await getJson('/api/reports');
  if (!reports.length) return;
  const box = $('reports');
  box.className = '';
  box.innerHTML = '';
  for (const report of reports) {
    const details = document.createElement('details');
    details.className = 'report';
    const summary = document.createElement('summary');
    summary.textContent = report.path;
    details.append(summary);
    details.addEventListener('toggle', async () => {
      if (!details.open || details.dataset.loaded) return;
      details.dataset.loaded = '1';
      const text = await (await fetch(`/api/raw?path=${encodeURIComponent(report.path)}`)).text();
      const pre = document.createElement('pre');
      pre.textContent = text;
      details.append(pre);
      for (const plot of report.plots) {
        const img = document.createElement('img');
        img.src = `/api/raw?path=${encodeURIComponent(plot)}`;
        img.alt = plot;
        details.append(img);
      }
    });
    box.append(details);
  }
}

let polling = null;
function startDashboard() {
  refreshRuns();
  showReports();
  $('curve-key').addEventListener('change', drawCurves);
  $('group-seeds').addEventListener('change', () => {
    drawRunsTable();
    drawCurves();
  });
  for (const th of $('runs').tHead.rows[0].cells) {
    if (th.dataset.sort === undefined) continue;
    th.addEventListener('click', () => {  // a second click on a column reverses its order
      const column = Number(th.dataset.sort);
      state.sort = {column, down: state.sort.column === column ? !state.sort.down : column === 6};
      drawRunsTable();
      drawCurves();
    });
  }
  $('diff').addEventListener('mousemove', (event) => {
    const cell = cellAt(diffDrawn, $('diff'), event);
    if (!cell) return;
    const {labels, n} = diffMask.header;
    $('diff-hover').textContent = `query ${labels[cell.q]}, key ${labels[cell.k]}: ΔM = ${diffMask.values[cell.q * n + cell.k]}`;
  });
  clearInterval(polling);
  let busy = false;  // a slow folder: one refresh at a time, never a queue of them
  polling = setInterval(async () => {
    if (busy || !$('poll').checked || $('dashboard').hidden) return;
    busy = true;
    try {
      await refreshRuns();
    } finally {
      busy = false;
    }
  }, kPollMs);
}

// ---- tabs ----------------------------------------------------------------------------------

let dashboardStarted = false;
function showTab(name) {
  $('playground').hidden = name !== 'playground';
  $('dashboard').hidden = name !== 'dashboard';
  $('tab-playground').classList.toggle('active', name === 'playground');
  $('tab-dashboard').classList.toggle('active', name === 'dashboard');
  if (name === 'dashboard' && !dashboardStarted) {
    dashboardStarted = true;
    startDashboard();
  }
  if (location.hash !== `#${name}`) history.replaceState(null, '', `#${name}`);
}

$('tab-playground').addEventListener('click', () => showTab('playground'));
$('tab-dashboard').addEventListener('click', () => showTab('dashboard'));
startPlayground().then(() => {
  showTab(location.hash === '#dashboard' ? 'dashboard' : 'playground');
  window.maskprior.ready = true;
});
