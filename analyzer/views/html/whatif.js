// What if (docs/whatif.md): each trace's allocation requests replayed through a model of
// PyTorch's caching allocator under other settings, the report's `what_if` (the runs
// `gpumemtrace whatif` gives with its default settings). Per device, a row per setting:
// the peaks, the unused bytes at the reserved peak, the cudaMalloc/cudaFree calls, the
// least capacity it needs, whether the figures are exact (why, on hover), and whether the
// replay of the run's own settings gave its recorded figures back. Reports older than the
// field hide the section.
(function (GMT) {
  "use strict";
  const { el, showSection } = GMT.dom;
  const fmt = GMT.fmt;
  const { table, cell } = GMT.tables;

  // A figure's cell: formatted text, the exact value in data-value for the tests.
  const figure = (name, value, text) =>
    cell(text, { class: "num", "data-figure": name, "data-value": value === null || value === undefined ? "" : String(value) });

  function matchText(rec) {
    if (rec.replay_matches === true) return "the replay of its own settings gave its recorded peak and segment counts back";
    if (rec.replay_matches === false) return "the replay of its own settings differs from the recording (see the notes)";
    return "not checked against the recording (no block events, or another backend)";
  }

  function runHeader(run) {
    const rec = run.recorded;
    const source = run.source === "pytorch_blocks" ? "PyTorch's block events" : "the program's cudaMalloc calls";
    return el(
      "p",
      { class: "gmt-whatif-run", "data-pid": run.pid, "data-device": run.device, "data-replay-matches": String(rec.replay_matches) },
      el("strong", { text: "pid " + run.pid + ", device " + run.device }),
      ": " + fmt.count(run.allocations) + " allocations on " + fmt.count(run.streams) + (Number(run.streams) === 1 ? " stream" : " streams") +
        " from " + source + ". Recorded: peak reserved " + fmt.bytes(rec.peak_reserved_bytes) + ", " + fmt.count(rec.segment_allocs) +
        " segments taken, " + fmt.count(rec.segment_frees) + " given back" +
        (rec.setting ? ", PYTORCH_CUDA_ALLOC_CONF=" + rec.setting : "") + "; ",
      el("span", { class: "gmt-whatif-match", text: matchText(rec) }),
      "."
    );
  }

  function settingRow(run, s) {
    const caps = (s.capacities || []).map((c) =>
      cell(c.fits ? "fits" : "out of memory", {
        class: "gmt-whatif-capacity" + (c.fits ? "" : " oom"),
        "data-capacity": c.name,
        "data-fits": c.fits ? "1" : "0",
        title: c.oom ? "request " + c.oom.request_index + " (" + fmt.bytes(c.oom.requested_bytes) + ") could not be served holding " + fmt.bytes(c.oom.reserved_bytes) : null,
      })
    );
    const needs = s.min_capacity_bytes === null || s.min_capacity_bytes === undefined ? "not computed" : fmt.bytes(s.min_capacity_bytes);
    return el(
      "tr",
      { class: "gmt-whatif-setting", "data-pid": run.pid, "data-device": run.device, "data-label": s.label, "data-exact": s.exact ? "1" : "0" },
      cell(el("span", { text: s.label }), { "data-figure": "label", title: s.setting ? "PYTORCH_CUDA_ALLOC_CONF=" + s.setting : "PyTorch's defaults" }),
      figure("peak_reserved_bytes", s.peak_reserved_bytes, fmt.bytes(s.peak_reserved_bytes)),
      figure("peak_allocated_bytes", s.peak_allocated_bytes, fmt.bytes(s.peak_allocated_bytes)),
      figure("fragmentation_bytes", s.fragmentation_bytes, fmt.bytes(s.fragmentation_bytes)),
      figure("cuda_malloc_calls", s.cuda_malloc_calls, fmt.count(s.cuda_malloc_calls)),
      figure("cuda_free_calls", s.cuda_free_calls, fmt.count(s.cuda_free_calls)),
      figure("min_capacity_bytes", s.min_capacity_bytes, needs),
      ...caps,
      cell(
        el("span", { class: "gmt-whatif-exact" + (s.exact ? "" : " estimate"), text: s.exact ? "exact" : "estimate" }),
        { "data-figure": "exact", title: s.why, "data-why": s.why }
      )
    );
  }

  function renderRun(run) {
    const first = (run.settings || [])[0];
    if (!first) {
      // Not replayed (a report bounds what it replays): only why.
      return [
        el("p", { class: "gmt-whatif-run", "data-pid": run.pid }, el("strong", { text: "pid " + run.pid }), ": " + fmt.count(run.requests) + " requests and more."),
        ...(run.notes || []).map((n) => el("p", { class: "gmt-note gmt-whatif-note", text: "Note: " + n })),
      ];
    }
    const capNames = first ? (first.capacities || []).map((c) => "at " + c.name + (c.name === "recorded" ? " (" + fmt.bytes(c.capacity_bytes) + ", the run's)" : "")) : [];
    const headers = ["setting", "peak reserved", "peak allocated", "unused at the peak", "cudaMalloc", "cudaFree", "needs at least", ...capNames, "exact?"];
    const rows = (run.settings || []).map((s) => settingRow(run, s));
    // Each reason an estimate is one once, with the settings it applies to.
    const reasons = new Map();
    for (const s of run.settings || []) {
      if (!s.exact) reasons.set(s.why, (reasons.has(s.why) ? reasons.get(s.why) + ", " : "") + s.label);
    }
    return [
      runHeader(run),
      table(headers, rows, { class: "gmt-table gmt-whatif-table", "data-pid": run.pid, "data-device": run.device }),
      ...[...reasons].map(([why, labels]) => el("p", { class: "gmt-note gmt-whatif-why", text: labels + ": " + why })),
      ...(run.notes || []).map((n) => el("p", { class: "gmt-note gmt-whatif-note", text: "Note: " + n })),
    ];
  }

  function render(host, ctx) {
    const all = ctx.report.what_if;
    showSection(host, Array.isArray(all) && all.length > 0);
    const runs = GMT.data.forPid(all || [], ctx.pid);
    if (!runs.length) {
      host.replaceChildren(el("p", {}, "No allocations of this process to replay."));
      return;
    }
    host.replaceChildren(
      el("p", {
        class: "gmt-note",
        text: "The run's allocation requests replayed through a model of PyTorch's caching allocator under other settings (as gpumemtrace whatif does; docs/whatif.md). " +
          "Peak reserved is max_memory_reserved(), peak allocated max_memory_allocated(); unused: reserved but not allocated at the reserved peak; " +
          "needs at least: the least capacity (2 MiB steps, as set_per_process_memory_fraction limits it) at which the replay does not run out. " +
          "Hover a row's exact? cell for why it is exact or an estimate.",
      }),
      ...runs.flatMap(renderRun)
    );
  }

  GMT.whatIf = { render };
})(window.GMT);
