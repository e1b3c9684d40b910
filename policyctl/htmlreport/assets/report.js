// policyctl report: reads the embedded data, draws the summary, the matrix (only the rows in
// view), the call rules and, for a change, what changed. Every string from the policy is
// written with textContent: policy text never becomes markup.
"use strict";
(function () {
  const D = JSON.parse(document.getElementById("report-data").textContent);
  const F = {};
  D.fields.forEach((name, i) => { F[name] = i; });
  const RUN = D.fields.length;      // a row's run index in the new (or only) policy
  const OLD_RUN = RUN + 1;          // ... and in the old one, for a change
  const DIFF = Array.isArray(D.oldRuns);
  const ROW_H = 22;
  const tools = D.tools;
  const $ = (id) => document.getElementById(id);

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function codeClass(code) {
    if (code === "ok") return "c-ok";
    if (code === "ok+") return "c-okp";
    if (code === "-") return "c-none";
    return "c-" + code;
  }
  const allowed = (code) => code === "ok" || code === "ok+";
  const show = (v) => (v === null || v === undefined ? "(none)" : String(v));

  // -- header ---------------------------------------------------------------------------
  $("title").textContent = DIFF ? "policyctl report: " + D.old + " \u2192 " + D.policy
                                : "policyctl report: " + D.policy;
  $("subtitle").textContent = D.contexts.length + " contexts x " + tools.length + " tools" +
    (D.sampled ? " (a deterministic sample of " + D.total + ")" : "") +
    ". Cells: ok = allowed, ok+ = allowed with call rules, Lk = removed at layer k, C = construction filter.";

  // -- tabs -------------------------------------------------------------------------------
  const tabs = ["summary", "matrix", "calls", "changes"];
  function select(name) {
    for (const t of tabs) {
      $("tab-" + t).setAttribute("aria-selected", String(t === name));
      $("view-" + t).hidden = t !== name;
    }
    if (name === "matrix") draw();
  }
  for (const t of tabs) $("tab-" + t).addEventListener("click", () => select(t));
  if (DIFF) $("tab-changes").hidden = false;

  // -- summary: per agent, every / some / no contexts --------------------------------------
  // a run is four indexes into the shared tables: cells, layers, removals, call rules
  const T = D.tables;
  for (const name of ["cellSet", "layerSet", "layer", "removalSet", "removal", "callSet"]) T[name] = T[name] || [];
  function cellsOf(row) { return T.cellSet[D.runs[row[RUN]][0]]; }
  function oldCellsOf(row) { return T.cellSet[D.oldRuns[row[OLD_RUN]][0]]; }
  function runOf(list, i) {
    const r = list[i];
    const removals = {};
    T.removalSet[r[2]].forEach((k, t) => { if (k !== null) removals[tools[t].name] = T.removal[k]; });
    return { cells: T.cellSet[r[0]], layers: T.layerSet[r[1]].map((k) => T.layer[k]),
             removals, calls: T.callSet[r[3]] };
  }
  (function summary() {
    const byAgent = new Map();
    for (const row of D.contexts) {
      const a = show(row[F.agent]);
      if (!byAgent.has(a)) byAgent.set(a, { n: 0, counts: new Array(tools.length).fill(0) });
      const s = byAgent.get(a);
      s.n++;
      const cells = cellsOf(row);
      for (let t = 0; t < tools.length; t++) if (allowed(cells[t])) s.counts[t]++;
    }
    const body = $("summary-table").tBodies[0];
    for (const [agent, s] of byAgent) {
      const tr = el("tr");
      tr.appendChild(el("th", null, agent));
      tr.appendChild(el("td", null, s.n));
      const every = [], some = [], none = [];
      s.counts.forEach((c, t) => {
        if (c === s.n) every.push(tools[t].name);
        else if (c) some.push(tools[t].name + " (" + c + "/" + s.n + ")");
        else none.push(tools[t].name);
      });
      for (const list of [every, some, none]) tr.appendChild(el("td", null, list.join(", ") || "(none)"));
      body.appendChild(tr);
    }
  })();

  // -- filters ----------------------------------------------------------------------------
  const choices = { agent: "f-agent", channel: "f-channel", sandboxed: "f-sandboxed",
                    trigger: "f-trigger", owner: "f-owner", provider: "f-provider" };
  for (const [field, id] of Object.entries(choices)) {
    const values = [...new Set(D.contexts.map((r) => show(r[F[field]])))].sort();
    const s = $(id);
    s.appendChild(el("option", null, "(any)")).value = "";
    for (const v of values) s.appendChild(el("option", null, v)).value = v;
  }
  for (const g of ["agent", "channel", "group", "sender", "sandboxed", "depth", "trigger", "provider", "(none)"]) {
    $("f-groupby").appendChild(el("option", null, g)).value = g;
  }
  if (DIFF) $("f-differs-text").textContent = "only contexts that gain or lose a tool";

  // each agent's baseline run (no provider, no channel, main session, anonymous, not the
  // owner, a user turn), the reference of "only contexts where something differs"
  const baseline = new Map(D.baselines.map(([agent, run]) => [agent, T.cellSet[D.runs[run][0]]]));

  let rows = [];        // the filtered context rows
  let cols = [];        // the tool indexes shown
  let lines = [];       // what the grid draws: {group, count} or {row}
  const collapsed = new Set();
  let active = { line: -1, col: 0 };

  function differs(row, cs) {
    const a = cellsOf(row);
    const b = DIFF ? oldCellsOf(row) : baseline.get(row[F.agent]);
    for (const t of cs) if (a[t] !== b[t]) return true;
    return false;
  }

  function applyFilters() {
    const want = {};
    for (const [field, id] of Object.entries(choices)) want[field] = $(id).value;
    const q = $("f-tool").value.trim().toLowerCase();
    cols = [];
    tools.forEach((t, i) => {
      if (!q || t.name.toLowerCase().includes(q) || t.section.toLowerCase().includes(q)) cols.push(i);
    });
    const onlyDiff = $("f-differs").checked;
    rows = D.contexts.filter((row) => {
      for (const f in want) if (want[f] && show(row[F[f]]) !== want[f]) return false;
      return !onlyDiff || differs(row, cols);
    });
    regroup();
  }

  function regroup() {
    const by = $("f-groupby").value;
    lines = [];
    if (by === "(none)") {
      lines = rows.map((row) => ({ row }));
    } else {
      const groups = new Map();
      for (const row of rows) {
        const k = show(row[F[by]]);
        if (!groups.has(k)) groups.set(k, []);
        groups.get(k).push(row);
      }
      for (const [k, members] of groups) {
        lines.push({ group: by + "=" + k, count: members.length });
        if (!collapsed.has(by + "=" + k)) for (const row of members) lines.push({ row });
      }
    }
    active.line = Math.min(active.line, lines.length - 1);
    active.col = Math.min(active.col, Math.max(cols.length - 1, 0));
    stats();
    head();
    draw();
  }

  function stats() {
    let ok = 0, gone = 0, gained = 0, lost = 0;
    for (const row of rows) {
      const cells = cellsOf(row);
      const old = DIFF ? oldCellsOf(row) : null;
      for (const t of cols) {
        if (allowed(cells[t])) ok++; else if (cells[t] !== "-") gone++;
        if (old && allowed(cells[t]) && !allowed(old[t])) gained++;
        if (old && !allowed(cells[t]) && allowed(old[t])) lost++;
      }
    }
    const s = $("stats");
    s.textContent = rows.length + " of " + D.contexts.length + " contexts, " + cols.length +
      " tools: " + ok + " allowed cells, " + gone + " removed cells" +
      (DIFF ? ", " + gained + " gained, " + lost + " lost" : "");
    s.dataset.rows = rows.length; s.dataset.allowed = ok; s.dataset.removed = gone;
    s.dataset.gained = gained; s.dataset.lost = lost;
  }

  // -- the grid: a header, and only the rows in view ---------------------------------------
  const grid = $("grid"), body = $("grid-body"), spacer = $("grid-spacer"), rowsBox = $("grid-rows");
  function head() {
    const h = $("grid-head");
    h.textContent = "";
    const secs = el("div", "hrow"), names = el("div", "hrow");
    secs.appendChild(el("div", "lab", "section"));
    names.appendChild(el("div", "lab", "context \\ tool"));
    let prev = null, span = null;
    for (const t of cols) {
      const sec = tools[t].section;
      if (sec !== prev) {
        span = secs.appendChild(el("div", "sec", sec));
        span.title = sec; span.style.width = "0px"; prev = sec;
      }
      span.style.width = (parseInt(span.style.width, 10) + 44) + "px";
      span.style.flex = "0 0 " + span.style.width;
      const n = names.appendChild(el("div", "tool", tools[t].name));
      n.title = tools[t].name; n.setAttribute("role", "columnheader");
    }
    h.appendChild(secs); h.appendChild(names);
    spacer.style.height = lines.length * ROW_H + "px";
    spacer.style.width = (420 + cols.length * 44) + "px";
  }

  function draw() {
    if ($("view-matrix").hidden) return;
    const top = Math.max(0, grid.scrollTop - 44);
    const first = Math.max(0, Math.floor(top / ROW_H) - 5);
    const last = Math.min(lines.length, first + Math.ceil(grid.clientHeight / ROW_H) + 10);
    rowsBox.textContent = "";
    for (let i = first; i < last; i++) {
      const line = lines[i];
      let div;
      if (line.group !== undefined) {
        div = el("div", "grp", (collapsed.has(line.group) ? "\u25b8 " : "\u25be ") + line.group + " (" + line.count + ")");
        div.dataset.group = line.group;
        div.setAttribute("role", "row");
        div.setAttribute("aria-expanded", String(!collapsed.has(line.group)));
      } else {
        div = el("div", "row");
        div.setAttribute("role", "row");
        const lab = div.appendChild(el("div", "lab", line.row[F.label]));
        lab.title = line.row[F.label];
        lab.setAttribute("role", "rowheader");
        const cells = cellsOf(line.row);
        const old = DIFF ? oldCellsOf(line.row) : null;
        cols.forEach((t, c) => {
          const code = cells[t];
          const cell = div.appendChild(el("div", "cell " + codeClass(code)));
          let text = code;
          if (old && allowed(code) && !allowed(old[t])) { cell.classList.add("gain"); text = "+" + code; }
          if (old && !allowed(code) && allowed(old[t])) { cell.classList.add("lose"); text = "\u2212" + code; }
          cell.textContent = text;
          cell.setAttribute("role", "gridcell");
          cell.dataset.line = i; cell.dataset.col = c;
          if (i === active.line && c === active.col) cell.classList.add("active");
        });
      }
      div.style.top = i * ROW_H + "px";
      div.dataset.line = i;
      rowsBox.appendChild(div);
    }
  }
  grid.addEventListener("scroll", draw, { passive: true });
  window.addEventListener("resize", draw);

  rowsBox.addEventListener("click", (ev) => {
    const cell = ev.target.closest(".cell");
    if (cell) { active = { line: +cell.dataset.line, col: +cell.dataset.col }; draw(); explain(); return; }
    const grp = ev.target.closest(".grp");
    if (grp) toggle(grp.dataset.group);
  });
  function toggle(group) {
    if (collapsed.has(group)) collapsed.delete(group); else collapsed.add(group);
    regroup();
  }

  grid.addEventListener("keydown", (ev) => {
    if (!lines.length) return;
    const page = Math.max(1, Math.floor(grid.clientHeight / ROW_H) - 3);
    let { line, col } = active;
    if (line < 0) line = 0;
    switch (ev.key) {
      case "ArrowDown": line++; break;
      case "ArrowUp": line--; break;
      case "ArrowRight": col++; break;
      case "ArrowLeft": col--; break;
      case "PageDown": line += page; break;
      case "PageUp": line -= page; break;
      case "Home": col = 0; if (ev.ctrlKey) line = 0; break;
      case "End": col = cols.length - 1; if (ev.ctrlKey) line = lines.length - 1; break;
      case "Enter": case " ":
        if (lines[line].group !== undefined) toggle(lines[line].group); else explain();
        ev.preventDefault();
        return;
      default: return;
    }
    ev.preventDefault();
    active = { line: Math.max(0, Math.min(lines.length - 1, line)), col: Math.max(0, Math.min(cols.length - 1, col)) };
    const y = active.line * ROW_H;  // below the two header rows, which stay in view
    if (y < grid.scrollTop) grid.scrollTop = y;
    else if (y + 3 * ROW_H > grid.scrollTop + grid.clientHeight) grid.scrollTop = y + 3 * ROW_H - grid.clientHeight;
    const x = 420 + active.col * 44;
    if (x + 44 > grid.scrollLeft + grid.clientWidth) grid.scrollLeft = x + 44 - grid.clientWidth;
    else if (x < grid.scrollLeft + 420) grid.scrollLeft = Math.max(0, x - 420);
    draw();
    explain();
  });

  // -- a cell's trail ---------------------------------------------------------------------
  function trailText(run, tool) {
    const out = [];
    const gone = run.removals[tool];
    const first = gone ? gone.blockers[0] : null;
    const at = first ? first.stage : null;
    if (at === 0) out.push("  [ 0] construction: removed " + tool);
    for (const l of run.layers) {
      const headText = "  [" + String(l.stage).padStart(2) + "] " + l.label;
      if (!l.applied) out.push(headText + ": skipped (" + l.skip + ")");
      else if (at !== null && l.stage > at) out.push(headText + ": applied (tool already removed)");
      else if (l.removed.includes(tool) && first) out.push("  [" + String(l.stage).padStart(2) + "] " + first.label + ": applied, removed " + tool);
      else out.push(headText + ": applied, kept " + tool);
      if (l.detail) out.push("       " + l.detail);
    }
    return out.join("\n");
  }
  function verdict(run, t) {
    const tool = tools[t].name;
    const code = run.cells[t];
    const lines = [];
    if (allowed(code)) lines.push(tool + ": ALLOWED" + (code === "ok+" ? " (its calls are decided by call rules)" : ""));
    else if (code === "-") lines.push(tool + ": not in this run's inventory");
    else {
      const r = run.removals[tool];
      const b = r.blockers[0];
      lines.push(tool + ": REMOVED at " + (b.stage === 0 ? "construction" : "layer " + b.stage) + " (" + b.label + ")");
      r.blockers.forEach((x, i) => {
        if (i) lines.push("  also removed at " + (x.stage === 0 ? "construction" : "layer " + x.stage) + " (" + x.label + ")");
        if (x.kind === "deny") {
          const written = x.writtenAs && x.writtenAs !== x.entry ? ', written "' + x.writtenAs + '"' : "";
          lines.push('  rule:  deny entry "' + x.entry + '"' + (x.expandedFrom ? " (expands to " + tool + ")" : "") + written);
        }
        else if (x.kind === "allow") lines.push("  rule:  not matched by the allow list " + x.scope);
        else lines.push("  rule:  " + x.kind);
        if (x.source) lines.push("  where: " + x.source);
      });
      if (r.fixes.length > 1) { lines.push("  fix:   all of these edits:"); for (const f of r.fixes) lines.push("         - " + f); }
      else if (r.fixes.length) lines.push("  fix:   " + r.fixes[0]);
    }
    return lines.join("\n");
  }
  function callRulesText(run, tool) {
    const found = run.calls[tool];
    if (!found) return null;
    const out = [];
    for (const c of found) {
      out.push(c.layer + (c.scope ? " (" + c.scope + ")" : "") + ":");
      for (const kind of ["deny", "ask", "allow"]) {
        for (const [entry, where] of c[kind]) out.push("  " + kind.padEnd(5) + " " + entry + (where ? "  (" + where + ")" : ""));
      }
      out.push("  otherwise " + c.otherwise);
    }
    return out.join("\n");
  }
  function explainRun(box, heading, run, t) {
    box.appendChild(el("h3", null, heading));
    box.appendChild(el("pre", "verdict", verdict(run, t)));
    box.appendChild(el("h4", null, "trail"));
    box.appendChild(el("pre", "trail", trailText(run, tools[t].name)));
    const calls = callRulesText(run, tools[t].name);
    if (calls) { box.appendChild(el("h4", null, "call rules")); box.appendChild(el("pre", "calls", calls)); }
  }
  function explain() {
    const line = lines[active.line];
    if (!line || line.row === undefined || !cols.length) return;
    const t = cols[active.col];
    const box = $("detail");
    box.textContent = "";
    box.appendChild(el("p", "ctx", line.row[F.label]));
    if (DIFF) {
      explainRun(box, "new: " + D.policy, runOf(D.runs, line.row[RUN]), t);
      explainRun(box, "old: " + D.old, runOf(D.oldRuns, line.row[OLD_RUN]), t);
    } else {
      explainRun(box, tools[t].name, runOf(D.runs, line.row[RUN]), t);
    }
  }

  // -- legend -----------------------------------------------------------------------------
  for (const item of D.legend) {
    const li = el("li");
    li.appendChild(el("span", "cell " + codeClass(item.code), item.code));
    li.appendChild(document.createTextNode(item.text));
    $("legend").appendChild(li);
  }
  if (DIFF) {
    for (const [cls, code, text] of [["gain", "+ok", "gained by the change"], ["lose", "\u2212L3", "lost by the change"]]) {
      const li = el("li");
      li.appendChild(el("span", "cell " + cls, code));
      li.appendChild(document.createTextNode(text));
      $("legend").appendChild(li);
    }
  }

  // -- call rules per tool and scope --------------------------------------------------------
  (function callTable() {
    const seen = new Map();
    const count = new Map();
    D.contexts.forEach((row) => count.set(row[RUN], (count.get(row[RUN]) || 0) + 1));
    D.runs.forEach((run, r) => {
      if (!count.has(r)) return;  // a run no shown context has (an agent's baseline, sampled out)
      for (const [tool, list] of Object.entries(T.callSet[run[3]])) {
        for (const c of list) {
          const key = JSON.stringify([tool, c]);
          if (!seen.has(key)) seen.set(key, { tool, c, n: 0 });
          seen.get(key).n += count.get(r) || 0;
        }
      }
    });
    const tbody = $("calls-table").tBodies[0];
    const fmt = (list) => list.map(([e, w]) => e + (w ? " (" + w + ")" : "")).join("\n") || "\u2014";
    for (const { tool, c, n } of [...seen.values()].sort((a, b) => a.tool.localeCompare(b.tool))) {
      const tr = el("tr");
      tr.appendChild(el("th", null, tool));
      tr.appendChild(el("td", null, c.layer + (c.scope ? " (" + c.scope + ")" : "")));
      for (const k of ["deny", "ask", "allow"]) { const td = el("td", null, fmt(c[k])); td.style.whiteSpace = "pre-line"; tr.appendChild(td); }
      tr.appendChild(el("td", null, c.otherwise));
      tr.appendChild(el("td", null, n));
      tbody.appendChild(tr);
    }
    if (!seen.size) {
      const tr = el("tr"); const td = el("td", null, "This policy has no call rules.");
      td.colSpan = 7; tr.appendChild(td); tbody.appendChild(tr);
    }
  })();

  // -- a change: call-rule widenings and the gained/lost totals ---------------------------
  if (DIFF) {
    let gained = 0, lost = 0;
    for (const row of D.contexts) {
      const a = cellsOf(row), b = oldCellsOf(row);
      for (let t = 0; t < tools.length; t++) {
        if (allowed(a[t]) && !allowed(b[t])) gained++;
        if (!allowed(a[t]) && allowed(b[t])) lost++;
      }
    }
    $("changes-stats").textContent = gained + " cells gained a tool, " + lost + " lost one, " +
      D.callRuleChanges.filter((c) => c.kind === "widen").length + " call-rule widenings.";
    const tbody = $("rule-changes").tBodies[0];
    for (const c of D.callRuleChanges) {
      const tr = el("tr", c.kind === "widen" ? "widen" : "narrow");
      tr.appendChild(el("td", c.kind === "widen" ? "gain-text" : "lose-text", c.kind));
      tr.appendChild(el("td", null, c.tool));
      tr.appendChild(el("td", null, c.layer));
      tr.appendChild(el("td", null, c.change + (c.source ? " (" + c.source + ")" : "")));
      tr.appendChild(el("td", null, c.contexts.length));
      tbody.appendChild(tr);
    }
    if (!D.callRuleChanges.length) {
      const tr = el("tr"); const td = el("td", null, "No call rule changed.");
      td.colSpan = 5; tr.appendChild(td); tbody.appendChild(tr);
    }
  }

  for (const id of [...Object.values(choices), "f-groupby"]) $(id).addEventListener("change", applyFilters);
  $("f-tool").addEventListener("input", applyFilters);
  $("f-differs").addEventListener("change", applyFilters);
  applyFilters();
  document.body.dataset.readyMs = String(Math.round(performance.now()));
  document.body.dataset.ready = "1";
})();
