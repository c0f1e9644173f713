"use strict";
(function () {
  const PAGE = 500;
  const STATUSES = ["error", "fail", "skip", "pass"]; // the order rows are listed in
  const NOT_PASSING = ["error", "fail"];
  const data = (id) => JSON.parse(document.getElementById(id).textContent);
  const meta = data("evaljig-meta");
  // [idx, session, suite, case_id, status, [[name, status, score(, runs, passes)]], why, hasDetail, duration_s], failures first
  const rows = data("evaljig-rows");
  const SVG = "http://www.w3.org/2000/svg";
  const el = (tag, attrs, ...kids) => {
    const n = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "class") n.className = v; else if (k.startsWith("on")) n.addEventListener(k.slice(2), v); else n.setAttribute(k, v);
    }
    for (const k of kids) if (k !== null && k !== undefined) n.append(k instanceof Node ? k : String(k));
    return n;
  };
  const svg = (tag, attrs) => {
    const n = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs)) n.setAttribute(k, v);
    return n;
  };
  const pretty = (v) => el("pre", {}, v === undefined ? "(none recorded)" : JSON.stringify(v, null, 2));
  const isNum = (x) => typeof x === "number";
  // 3 significant digits shown, the exact value on hover
  const sig = (x) => String(Number(x.toPrecision(3)));
  const score = (x) => isNum(x) ? el("span", { title: String(x) }, sig(x)) : "–";
  const pct = (n, d) => d ? `${sig((100 * n) / d)} %` : "–";
  const duration = (s) => {
    if (!isNum(s) || s <= 0) return "0";
    if (s < 1) return `${sig(s * 1000)} ms`;
    if (s < 60) return `${sig(s)} s`;
    return `${Math.floor(s / 60)} min ${Math.round(s % 60)} s`;
  };

  // --- state, kept in the URL hash so a link reproduces the view ---------------------------
  const COLUMNS = [
    ["status", "status"], ["session", "session"], ["suite", "suite"], ["case", "case"],
    ["metrics", "metrics"], ["duration", "duration"], ["why", "why"],
  ];
  const state = { statuses: new Set(), q: "", session: "", sort: "status", desc: false, page: 0, open: new Set() };
  let expandAll = false;
  function readHash() {
    const h = new URLSearchParams(location.hash.slice(1));
    const wanted = (h.get("status") || "").split(",").filter((s) => STATUSES.includes(s));
    state.statuses = new Set(wanted.length === STATUSES.length ? [] : wanted);
    state.q = h.get("q") || "";
    state.session = h.get("session") || "";
    const sort = h.get("sort") || "status";
    state.desc = sort.startsWith("-");
    state.sort = COLUMNS.some(([k]) => k === sort.replace(/^-/, "")) ? sort.replace(/^-/, "") : "status";
    state.page = 0;
    expandAll = h.get("expand") === "all";
  }
  function writeHash() {
    const h = new URLSearchParams();
    if (state.statuses.size) h.set("status", STATUSES.filter((s) => state.statuses.has(s)).join(","));
    if (state.q) h.set("q", state.q);
    if (state.session) h.set("session", state.session);
    if (state.sort !== "status" || state.desc) h.set("sort", (state.desc ? "-" : "") + state.sort);
    if (expandAll) h.set("expand", "all");
    const text = h.toString().replace(/%2C/g, ",");
    history.replaceState(null, "", text ? "#" + text : location.pathname + location.search);
  }
  readHash();

  // --- header: totals and filters ----------------------------------------------------------
  const t = meta.totals;
  const metaLine = document.getElementById("meta");
  metaLine.append(el("b", {}, `${t.cases} cases`), ` · ${t.error} error · ${t.fail} fail · ${t.skip} skip · ${t.pass} pass`,
    ` · generated ${meta.generated_at}`, meta.details_note ? ` · ${meta.details_note}` : "");

  const filters = document.getElementById("filters");
  const change = (fn) => () => { fn(); state.page = 0; writeHash(); render(); };
  const allButton = el("button", { "data-view": "all", onclick: change(() => state.statuses.clear()) }, `all (${t.cases})`);
  const notPassing = el("button", { "data-view": "not-passing", title: "fail and error",
    onclick: change(() => { state.statuses = new Set(NOT_PASSING); }) }, `not passing (${t.fail + t.error})`);
  const chips = {};
  for (const s of STATUSES) {
    chips[s] = el("button", { class: "chip-" + s, "data-status": s, onclick: change(() => {
      if (state.statuses.has(s)) state.statuses.delete(s); else state.statuses.add(s);
      if (state.statuses.size === STATUSES.length) state.statuses.clear();
    }) }, `${s} (${t[s]})`);
  }
  const sessionSelect = el("select", { "aria-label": "session", onchange: (e) => change(() => { state.session = e.target.value; })() },
    el("option", { value: "" }, "all sessions"), ...Object.keys(meta.sessions).map((s) => el("option", { value: s }, s)));
  const search = el("input", { type: "search", "aria-label": "filter", placeholder: "filter suite, case, metric, reason…",
    oninput: (e) => change(() => { state.q = e.target.value; })() });
  filters.append(allButton, notPassing, el("span", { class: "sep" }), ...STATUSES.map((s) => chips[s]), sessionSelect, search);

  function syncControls() {
    const on = (b, v) => b.setAttribute("aria-pressed", String(v));
    on(allButton, state.statuses.size === 0);
    on(notPassing, state.statuses.size === NOT_PASSING.length && NOT_PASSING.every((s) => state.statuses.has(s)));
    for (const s of STATUSES) on(chips[s], state.statuses.has(s));
    sessionSelect.value = state.session;
    if (search.value !== state.q) search.value = state.q;
    for (const [key, th] of Object.entries(heads)) {
      if (key === state.sort) th.setAttribute("aria-sort", state.desc ? "descending" : "ascending"); else th.removeAttribute("aria-sort");
    }
  }

  if (meta.problems.length) {
    const box = el("div", { class: "problems", id: "problem-list" }, el("strong", {}, `${meta.problems.length} files could not be used`));
    const ul = el("ul");
    for (const p of meta.problems) ul.append(el("li", {}, el("code", {}, p.path), ": ", p.problem));
    box.append(ul);
    document.getElementById("problems").append(box);
  }

  // --- summary: per metric and per session, with a stacked bar ---------------------------------
  const COLORS = { pass: "#1a7f37", fail: "#cf222e", error: "#8250df", skip: "#8c959f" };
  function bar(counts, order) {
    const total = order.reduce((a, s) => a + (counts[s] || 0), 0);
    const box = svg("svg", { class: "bar", width: "120", height: "10", viewBox: "0 0 120 10", preserveAspectRatio: "none", role: "img" });
    const title = svg("title", {});
    title.textContent = order.map((s) => `${counts[s] || 0} ${s}`).join(" · ");
    box.append(title, svg("rect", { x: "0", y: "0", width: "120", height: "10", fill: "#eaeef2" }));
    let x = 0;
    for (const s of order) {
      const w = total ? (120 * (counts[s] || 0)) / total : 0;
      if (w > 0) box.append(svg("rect", { x: String(x), y: "0", width: String(w), height: "10", fill: COLORS[s], "data-status": s }));
      x += w;
    }
    return box;
  }
  function statsTable(id, title, label, entries, order, countLabel) {
    const table = el("table", { class: "stats", id },
      el("tr", {}, el("th", {}, label), el("th", {}, "results"), el("th", { class: "num", title: "pass / (cases that did not skip)" }, "pass rate"),
        el("th", { class: "num" }, "mean score"), el("th", { class: "num" }, countLabel)));
    for (const [name, c] of entries) {
      const count = order.reduce((a, s) => a + (c[s] || 0), 0);
      table.append(el("tr", { "data-name": name }, el("td", {}, name), el("td", {}, bar(c, order)),
        el("td", { class: "num" }, pct(c.pass, count - c.skip)), el("td", { class: "num" }, score(c.mean)),
        el("td", { class: "num" }, String(count))));
    }
    return el("section", {}, el("h2", {}, title), table);
  }
  const summary = document.getElementById("summary");
  const metricEntries = Object.entries(meta.metrics);
  if (metricEntries.length) summary.append(statsTable("metric-summary", "Metrics", "metric", metricEntries, ["fail", "skip", "pass"], "count"));
  const sessionEntries = Object.entries(meta.sessions);
  if (sessionEntries.length) summary.append(statsTable("session-summary", "Sessions", "session", sessionEntries, STATUSES, "cases"));

  // --- drill-down -------------------------------------------------------------------------
  function artifactView(a) {
    const label = a.file || a.name;
    const box = el("div", { class: "artifact-box" }, el("div", {}, el("strong", {}, a.name), ` ${a.mime_type} · ${a.status}`,
      a.reason ? ` · ${a.reason}` : "", a.note ? ` · ${a.note}` : ""));
    const links = el("div", {});
    if (a.data_uri) links.append(el("a", { href: a.download_uri || a.data_uri, download: label, class: "download" }, `download ${label}`));
    if (a.href) links.append(el("a", { href: a.href, class: "file-link" }, a.data_uri ? "file beside the report" : `open ${label}`));
    if (links.childNodes.length) box.append(links);
    if (a.data_uri && a.mime_type.startsWith("image/")) box.append(el("img", { class: "artifact", src: a.data_uri, alt: a.name }));
    if (a.csv) {
      const table = el("table", { class: "csv" });
      a.csv.forEach((r, i) => table.append(el("tr", {}, ...r.map((c) => el(i === 0 ? "th" : "td", {}, c)))));
      box.append(table);
      if (a.csv_truncated) box.append(el("div", { class: "note" }, "preview truncated"));
    }
    return box;
  }

  // every error once; a traceback (where one was recorded) collapsed under its message
  function errorsView(d) {
    const lines = [...new Set(d.errors)];
    for (const m of d.metrics) if (m.error && !lines.some((l) => l.includes(m.error))) lines.push(`${m.name}: ${m.error}`);
    const tracebacks = d.tracebacks || [];
    const used = new Set();
    const box = el("div", { class: "errors" });
    const item = (text, tb) => {
      box.append(el("div", { class: "err" }, text));
      if (tb) box.append(el("details", { class: "traceback" }, el("summary", {}, `traceback (${tb.where})`), el("pre", {}, tb.traceback)));
    };
    for (const line of lines) {
      const tb = tracebacks.find((x, i) => !used.has(i) && x.message && line.includes(x.message));
      if (tb) used.add(tracebacks.indexOf(tb));
      item(line, tb);
    }
    tracebacks.forEach((tb, i) => { if (!used.has(i)) item(`${tb.where}: ${tb.message}`, tb); });
    return lines.length || tracebacks.length ? box : null;
  }

  function detailView(r) {
    const node = document.getElementById("d" + r[0]);
    const td = el("td", { class: "detail", colspan: String(COLUMNS.length) });
    if (!node) {
      td.append(el("div", { class: "note" }, meta.details_note || "details not embedded"));
      return td;
    }
    const d = JSON.parse(node.textContent);
    const c = d.case || {};
    if (c.description) td.append(el("p", {}, c.description));
    td.append(errorsView(d) || "");
    const expected = c.expectations !== undefined ? c.expectations : c.expected_output !== undefined ? c.expected_output : c.expected;
    td.append(el("div", { class: "pair" },
      el("div", { class: "expected" }, el("h3", {}, "Expected"), pretty(expected)),
      el("div", { class: "actual" }, el("h3", {}, "Actual"), pretty(d.inference))));
    td.append(el("h3", {}, "Inputs"), pretty(c.function_call !== undefined ? c.function_call : c));
    td.append(el("h3", {}, "Metrics"));
    const mt = el("table", { class: "metrics" },
      el("tr", {}, ...["metric", "status", "score", "duration", "reason"].map((h) => el("th", { class: h === "score" || h === "duration" ? "num" : "" }, h))));
    for (const m of d.metrics) {
      mt.append(el("tr", {}, el("td", {}, m.name), el("td", { class: "st st-" + m.status }, m.status),
        el("td", { class: "num" }, score(m.score)), el("td", { class: "num", title: `${m.duration_s || 0} s` }, duration(m.duration_s)),
        el("td", {}, m.reason || "")));
    }
    td.append(mt);
    if (d.artifacts.length) {
      td.append(el("h3", {}, "Artifacts"));
      for (const a of d.artifacts) td.append(artifactView(a));
    }
    td.append(el("details", {}, el("summary", {}, "full case"), pretty(c)));
    td.append(el("div", { class: "note" }, "case file: " + d.paths.join(", ")));
    return td;
  }

  // --- table: sortable columns, filtered, paged -------------------------------------------
  const headRow = document.getElementById("heads");
  const heads = {};
  for (const [key, label] of COLUMNS) {
    heads[key] = el("th", { class: "c-" + key + (key === "duration" ? " num" : ""), "data-sort": key },
      el("button", { class: "sort", onclick: change(() => {
        if (state.sort === key) state.desc = !state.desc; else { state.sort = key; state.desc = false; }
      }) }, label));
    headRow.append(heads[key]);
  }
  const meanScore = (r) => {
    const s = r[5].filter((m) => isNum(m[2]));
    return s.length ? s.reduce((a, m) => a + m[2], 0) / s.length : Infinity;
  };
  const KEYS = {
    session: (r) => r[1], suite: (r) => r[2], case: (r) => r[3], why: (r) => r[6],
    metrics: meanScore, duration: (r) => r[8],
  };
  const orders = {};
  function ordered() {
    const id = state.sort + (state.desc ? "-" : "+");
    if (orders[id]) return orders[id];
    let out;
    if (state.sort === "status") out = rows.slice(); // already failures first
    else {
      const key = KEYS[state.sort];
      const keys = rows.map(key);
      const idx = rows.map((_, i) => i);
      idx.sort((a, b) => (keys[a] < keys[b] ? -1 : keys[a] > keys[b] ? 1 : a - b));
      out = idx.map((i) => rows[i]);
    }
    if (state.desc) out.reverse();
    return (orders[id] = out);
  }
  let haystack = null;
  function matches(r) {
    if (state.statuses.size && !state.statuses.has(r[4])) return false;
    if (state.session && r[1] !== state.session) return false;
    if (state.q) {
      if (!haystack) haystack = new Map(rows.map((x) => [x[0], `${x[1]} ${x[2]} ${x[3]} ${x[5].map((m) => m[0]).join(" ")} ${x[6]}`.toLowerCase()]));
      return haystack.get(r[0]).includes(state.q.toLowerCase());
    }
    return true;
  }

  function pager(id, total) {
    const box = document.getElementById(id);
    box.replaceChildren();
    const pages = Math.max(1, Math.ceil(total / PAGE));
    const first = total ? state.page * PAGE + 1 : 0;
    box.append(el("button", { onclick: () => { if (state.page > 0) { state.page--; render(); } } }, "‹ prev"),
      `${first}–${Math.min(total, (state.page + 1) * PAGE)} of ${total}`,
      el("button", { onclick: () => { if (state.page < pages - 1) { state.page++; render(); } } }, "next ›"));
  }

  function rowView(r) {
    // a repeated case (--evaljig-repeats) adds runs and passes: "exact 0.8 4/5" (pass^k = 5/5, pass@k = at least 1/5)
    const runs = (runsN, passes) => isNum(runsN) ? ` ${passes}/${runsN}` : "";
    const metrics = el("td", { class: "c-metrics" }, ...r[5].map(([n, s, sc, rn, ps]) =>
      el("span", { class: "m st-" + s, title: (isNum(sc) ? `${n}: ${sc}` : n) + (isNum(rn) ? `; ${ps} of ${rn} runs passed (pass^k ${ps === rn ? "yes" : "no"}, pass@k ${ps > 0 ? "yes" : "no"})` : "") },
        (isNum(sc) ? `${n} ${sig(sc)}` : n) + runs(rn, ps))));
    const caseCell = el("td", { class: "c-case" }, r[3], el("div", { class: "sub" }, `${r[1]} · ${r[2]}`),
      r[6] ? el("div", { class: "sub" }, r[6]) : null);
    return el("tr", { class: "case", "data-status": r[4], "data-case": `${r[1]}::${r[2]}::${r[3]}` },
      el("td", { class: "c-status st st-" + r[4] }, r[4]), el("td", { class: "c-session" }, r[1]), el("td", { class: "c-suite" }, r[2]),
      caseCell, metrics, el("td", { class: "c-duration num", title: `${r[8]} s` }, duration(r[8])),
      el("td", { class: "c-why why", title: r[6] }, r[6]));
  }

  function render() {
    syncControls();
    const shown = ordered().filter(matches);
    const body = document.getElementById("rows");
    body.replaceChildren();
    if (!shown.length) body.append(el("tr", {}, el("td", { colspan: String(COLUMNS.length), class: "note" }, rows.length ? "no case matches this view" : "no cases were found")));
    for (const r of shown.slice(state.page * PAGE, (state.page + 1) * PAGE)) {
      const tr = rowView(r);
      body.append(tr);
      const open = () => { const dr = el("tr", { class: "detail-row" }, detailView(r)); tr.after(dr); return dr; };
      let detailRow = state.open.has(r[0]) || expandAll ? open() : null;
      tr.addEventListener("click", () => {
        if (detailRow) { detailRow.remove(); detailRow = null; state.open.delete(r[0]); }
        else { detailRow = open(); state.open.add(r[0]); }
      });
    }
    pager("pager-top", shown.length);
    pager("pager-bottom", shown.length);
  }
  window.addEventListener("hashchange", () => { readHash(); render(); });
  render();
})();
