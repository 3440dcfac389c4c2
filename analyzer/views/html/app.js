// The page: reads the embedded report, offers a process picker when the report covers
// several processes (all of them together by default), and renders every view for the
// choice. Sets document.body.dataset.ready once everything is drawn.
(function (GMT) {
  "use strict";
  const { el } = GMT.dom;
  const fmt = GMT.fmt;

  function summary(host, ctx) {
    const r = ctx.report;
    const p = ctx.process;
    const s = r.summary;
    const facts = p
      ? [
          ["allocations", fmt.count(p.allocations) + ", frees " + fmt.count(p.frees)],
          ["leaked", fmt.bytes(p.leaked_bytes)],
          ["failed allocations", fmt.count(p.failed_allocations)],
          ["errors", fmt.count(p.errors)],
          ["events", fmt.count(p.events) + " in " + fmt.duration(p.duration_ns)],
        ]
      : [
          ["allocations", fmt.count(s.allocations) + ", frees " + fmt.count(s.frees)],
          ["leaked", fmt.bytes(s.leaked_bytes) + " in " + fmt.count(s.leaked_allocations) + " allocations"],
          ...suppressedFacts(r),
          ["peak", fmt.bytes(s.peak_bytes) + " of device memory at " + fmt.at(s.peak_time_ns, ctx.origin)],
          ["failed allocations", fmt.count(s.failed_allocations)],
          ["errors", fmt.count(s.errors)],
        ];
    const dl = el("dl", { class: "gmt-facts", id: "gmt-facts" });
    for (const [k, v] of facts) dl.append(el("dt", { text: k }), el("dd", { "data-fact": k, text: v }));
    const devices = r.devices.map((d) =>
      el("li", {}, "device " + d.ordinal + (d.name ? " " + d.name : "") + ": peak " + fmt.bytes(d.peak_bytes) +
        (d.total_bytes ? " of " + fmt.bytes(d.total_bytes) : "") + " at " + fmt.at(d.peak_time_ns, ctx.origin) +
        ", leaked " + fmt.bytes(d.leaked_bytes))
    );
    const procs = GMT.data.forPid(r.processes, ctx.pid).map((q) =>
      el("li", {}, "pid " + q.pid + " " + q.command + " — " + q.trace_file + ": " + fmt.count(q.events) + " events in " +
        fmt.duration(q.duration_ns) + (q.complete ? "" : " (incomplete: " + (q.incomplete_reason || "") + ")") +
        (q.rank !== null && q.rank !== undefined ? ", rank " + q.rank : ""))
    );
    host.replaceChildren(dl, el("ul", { class: "gmt-list" }, ...procs), el("ul", { class: "gmt-list" }, ...devices), leftOut(r, GMT.data.current));
  }

  // What suppression rules took out of the leaked figures (the same rules as `check`), each
  // with why: known one-time allocations are not leaks.
  function suppressedFacts(r) {
    const scope = r.leak_scope;
    if (!scope || !scope.suppressed_sites) return [];
    const rules = (r.suppressions || []).map((s) =>
      fmt.bytes(s.bytes) + " by " + s.rule + " (" + (s.why ? "built-in: " + s.why : s.origin) + ")");
    return [["suppressed (not leaks)", fmt.bytes(scope.suppressed_bytes) + " in " + fmt.count(scope.suppressed_allocations) +
      " allocations" + (rules.length ? ": " + rules.join("; ") : "")]];
  }

  // What the page does not hold, said once, in numbers.
  function leftOut(r, data) {
    const notes = [];
    if (data.framesLeftOut) notes.push(fmt.count(data.framesLeftOut) + " distinct frames are not embedded (shown as \"frame not embedded\").");
    const points = r.kind_timeline.length ? r.kind_timeline[0].time_ns.length : 0;
    if (points) notes.push("Timelines are downsampled: each time bucket keeps its lowest and its highest moment (" + fmt.count(points) + " samples for the first series).");
    if (r.leak_scope.sites > r.leaks.length) notes.push(fmt.count(r.leak_scope.sites - r.leaks.length) + " of " + fmt.count(r.leak_scope.sites) + " leak sites are not listed; their bytes appear as one node.");
    if (r.allocated && r.allocated.sites > r.allocated.top_sites.length) notes.push(fmt.count(r.allocated.sites - r.allocated.top_sites.length) + " of " + fmt.count(r.allocated.sites) + " allocating stacks are not listed.");
    if (r.stacks_left_out) notes.push(fmt.count(r.stacks_left_out) + " stacks are not embedded (shown as \"stack not embedded\").");
    if (r.moments.length) notes.push("What was live is known at " + fmt.count(r.moments.length) + " sampled moments.");
    return el("div", { class: "gmt-left-out", id: "gmt-left-out" }, ...notes.map((n) => el("p", { text: n })));
  }

  function renderAll(data, pid) {
    const r = data.report;
    const ctx = {
      report: r,
      origin: data.origin,
      pid,
      process: pid === null ? null : r.processes.find((p) => Number(p.pid) === pid),
    };
    const body = (id) => document.querySelector("#" + id + " .gmt-body");
    summary(body("gmt-summary"), ctx);
    GMT.timeline.render(body("gmt-timeline"), ctx);
    GMT.flames.render(body("gmt-flames"), ctx);
    GMT.tables.renderLeaks(body("gmt-leaks"), ctx);
    GMT.jobs.renderGrowth(body("gmt-growth"), ctx);
    GMT.jobs.renderRanks(body("gmt-ranks"), ctx);
    GMT.frameworks.renderHeld(body("gmt-held"), ctx);
    GMT.frameworks.renderTensor(body("gmt-tensor"), ctx);
    GMT.frameworks.renderOoms(body("gmt-tensor-ooms"), ctx);
    GMT.whatIf.render(body("gmt-whatif"), ctx);
    GMT.tables.renderFailures(body("gmt-failures"), ctx);
    GMT.tables.renderErrors(body("gmt-errors"), ctx);
    GMT.addressMap.render(body("gmt-address-map"), ctx);
  }

  function start() {
    const data = GMT.data.load();
    const r = data.report;
    document.querySelector(".gmt-header h1").textContent =
      "gpumemtrace report · " + (r.processes.length === 1 ? r.processes[0].command || "pid " + r.processes[0].pid : r.processes.length + " processes");
    const picker = document.getElementById("gmt-process");
    picker.append(el("option", { value: "", text: "all processes (combined)" }));
    for (const p of r.processes) picker.append(el("option", { value: p.pid, text: "pid " + p.pid + " " + p.command }));
    picker.parentElement.hidden = r.processes.length < 2;
    picker.addEventListener("change", () => {
      renderAll(data, picker.value === "" ? null : Number(picker.value));
      document.body.dataset.pid = picker.value;
    });
    GMT.data.current = data;
    renderAll(data, null);
    window.gmtReadyAt = performance.now();
    document.body.dataset.ready = "1";
  }

  try {
    start();
  } catch (e) {
    document.body.prepend(el("pre", { class: "gmt-fatal", text: "The report could not be drawn: " + e }));
    throw e;
  }
})(window.GMT);
