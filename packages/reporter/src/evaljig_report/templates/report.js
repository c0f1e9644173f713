"use strict";
(function () {
  const PAGE = 500;
  const data = (id) => JSON.parse(document.getElementById(id).textContent);
  const meta = data("evaljig-meta");
  const rows = data("evaljig-rows"); // [idx, session, suite, case_id, status, [[name, status, score]], why, hasDetail]
  const el = (tag, attrs, ...kids) => {
    const n = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "class") n.className = v; else if (k.startsWith("on")) n.addEventListener(k.slice(2), v); else n.setAttribute(k, v);
    }
    for (const k of kids) if (k !== null && k !== undefined) n.append(k instanceof Node ? k : String(k));
    return n;
  };
  const pretty = (v) => el("pre", {}, JSON.stringify(v, null, 2));
  const hash = new URLSearchParams(location.hash.slice(1));
  const state = { status: hash.get("status") || "all", q: hash.get("q") || "", session: "", page: 0, open: new Set() };
  const expandAll = hash.get("expand") === "all";

  const t = meta.totals;
  document.getElementById("meta").textContent =
    `${t.cases} cases · ${t.pass} pass · ${t.fail} fail · ${t.error} error · ${t.skip} skip · generated ${meta.generated_at}` +
    (meta.details_note ? ` · ${meta.details_note}` : "");

  const filters = document.getElementById("filters");
  const buttons = {};
  for (const s of ["all", "pass", "fail", "error", "skip"]) {
    buttons[s] = el("button", { "data-status": s, onclick: () => { state.status = s; state.page = 0; render(); } },
      `${s} (${s === "all" ? t.cases : t[s]})`);
    filters.append(buttons[s]);
  }
  const sessions = el("select", { onchange: (e) => { state.session = e.target.value; state.page = 0; render(); } },
    el("option", { value: "" }, "all sessions"), ...Object.keys(meta.sessions).map((s) => el("option", { value: s }, s)));
  const search = el("input", { type: "search", placeholder: "filter suite, case, reason…", value: state.q,
    oninput: (e) => { state.q = e.target.value.toLowerCase(); state.page = 0; render(); } });
  filters.append(sessions, search);

  if (meta.problems.length) {
    const box = el("div", { class: "problems", id: "problem-list" }, el("strong", {}, `${meta.problems.length} files could not be used`));
    const ul = el("ul");
    for (const p of meta.problems) ul.append(el("li", {}, el("code", {}, p.path), ": ", p.problem));
    box.append(ul);
    document.getElementById("problems").append(box);
  }

  function artifactView(a) {
    const box = el("div", { class: "artifact-box" }, el("div", {}, el("strong", {}, a.name), ` ${a.mime_type} · ${a.status}`,
      a.reason ? ` · ${a.reason}` : "", a.note ? ` · ${a.note}` : ""));
    if (a.data_uri) box.append(el("img", { class: "artifact", src: a.data_uri, alt: a.name }));
    if (a.csv) {
      const table = el("table", { class: "csv" });
      a.csv.forEach((r, i) => table.append(el("tr", {}, ...r.map((c) => el(i === 0 ? "th" : "td", {}, c)))));
      box.append(table);
      if (a.csv_truncated) box.append(el("div", { class: "note" }, "preview truncated"));
    }
    if (a.href && !a.data_uri && !a.csv) box.append(el("div", { class: "note" }, `file: ${a.href}`));
    return box;
  }

  function detailView(r) {
    const node = document.getElementById("d" + r[0]);
    const td = el("td", { class: "detail", colspan: "6" });
    if (!node) {
      td.append(el("div", { class: "note" }, meta.details_note || "details not embedded"));
      return td;
    }
    const d = JSON.parse(node.textContent);
    const c = d.case || {};
    if (c.description) td.append(el("p", {}, c.description));
    td.append(el("h3", {}, "Inputs"));
    td.append(pretty(c.function_call !== undefined ? c.function_call : c));
    if (c.function_call !== undefined) td.append(el("details", {}, el("summary", {}, "full case"), pretty(c)));
    td.append(el("h3", {}, "Outputs"), pretty(d.inference));
    td.append(el("h3", {}, "Metrics"));
    const mt = el("table", { class: "metrics" }, el("tr", {}, ...["metric", "status", "score", "reason"].map((h) => el("th", {}, h))));
    for (const m of d.metrics) {
      mt.append(el("tr", {}, el("td", {}, m.name), el("td", { class: "st st-" + m.status }, m.status),
        el("td", {}, m.score === null || m.score === undefined ? "–" : String(m.score)),
        el("td", {}, m.reason || "", m.error ? el("div", { class: "st-error" }, m.error) : null)));
    }
    td.append(mt);
    if (d.errors.length) {
      td.append(el("h3", {}, "Errors"));
      const ul = el("ul");
      for (const e of d.errors) ul.append(el("li", { class: "st-error" }, e));
      td.append(ul);
    }
    if (d.artifacts.length) {
      td.append(el("h3", {}, "Artifacts"));
      for (const a of d.artifacts) td.append(artifactView(a));
    }
    td.append(el("div", { class: "note" }, "case file: " + d.paths.join(", ")));
    return td;
  }

  function matches(r) {
    if (state.status !== "all" && r[4] !== state.status) return false;
    if (state.session && r[1] !== state.session) return false;
    if (state.q) return (r[2] + " " + r[3] + " " + r[6]).toLowerCase().includes(state.q);
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

  function render() {
    for (const [s, b] of Object.entries(buttons)) b.classList.toggle("on", s === state.status);
    const shown = rows.filter(matches);
    const body = document.getElementById("rows");
    body.replaceChildren();
    for (const r of shown.slice(state.page * PAGE, (state.page + 1) * PAGE)) {
      const metrics = el("td", {}, ...r[5].map(([n, s, sc]) => el("span", { class: "m st-" + s }, sc === null ? `${n}` : `${n} ${sc}`)));
      const tr = el("tr", { class: "case", "data-status": r[4], "data-case": `${r[1]}::${r[2]}::${r[3]}` },
        el("td", { class: "st st-" + r[4] }, r[4]), el("td", {}, r[1]), el("td", {}, r[2]), el("td", {}, r[3]), metrics,
        el("td", { class: "why", title: r[6] }, r[6]));
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
  render();
})();
