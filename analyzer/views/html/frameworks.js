// A framework's tensor level (docs/frameworks.md): what caching allocators still held when
// their process ended (the report's `held_at_exit`), and, when a caching allocator's own
// blocks were recorded (`caching_allocator`), its peaks at both levels, the free space
// inside its segments at the tensor-level peak, the blocks the program held to its end,
// and its out-of-memory errors in PyTorch's terms. Reports older than these fields lack
// them: each view then says so in a sentence or hides its section.
(function (GMT) {
  "use strict";
  const { el, showSection } = GMT.dom;
  const fmt = GMT.fmt;
  const { table, cell, stackDetails } = GMT.tables;


  const blocksText = (n) => fmt.count(n) + (Number(n) === 1 ? " block" : " blocks");
  const sitesText = (n) => fmt.count(n) + (Number(n) === 1 ? " site" : " sites");

  // A framework's allocation site, named by the Python code that made it when there is some.
  const siteStack = (stack) => stackDetails(stack, false, GMT.data.pythonSiteLabel(stack));

  // What the caching allocators kept reserved at exit: their cache, not leaks.
  function renderHeld(host, ctx) {
    const r = ctx.report;
    const all = r.held_at_exit || [];
    showSection(host, all.length > 0);
    const held = GMT.data.forPid(all, ctx.pid);
    if (!held.length) {
      host.replaceChildren(el("p", {}, "No caching allocator held memory when this process ended."));
      return;
    }
    const rows = held.map((h) => {
      const top = (h.top_sites || [])[0];
      return el(
        "tr",
        { class: "gmt-held", "data-bytes": h.bytes, "data-allocations": h.allocations },
        cell(h.allocator, { "data-figure": "allocator" }),
        cell(String(h.pid)),
        cell(fmt.bytes(h.bytes), { class: "num", "data-figure": "bytes" }),
        cell(fmt.count(h.allocations), { class: "num", "data-figure": "allocations" }),
        cell(fmt.count(h.sites), { class: "num" }),
        cell(top ? fmt.bytes(top.bytes) + " in " + fmt.count(top.allocations) + " by " + top.api : "–", { class: "num" }),
        cell(top ? siteStack(top.stack) : el("span", { class: "gmt-muted", text: "not listed" }))
      );
    });
    const total = ctx.pid === null ? r.summary.held_at_exit_bytes : held.reduce((s, h) => s + h.bytes, 0);
    host.replaceChildren(
      el("p", { class: "gmt-held-total", text: fmt.bytes(total) + " still allocated at exit were held by caching allocators (their cache, not counted as leaked)." }),
      table(["allocator", "pid", "bytes", "allocations", "sites", "largest site", "allocated at"], rows, { id: "gmt-held-table" })
    );
  }

  // Rows of blocks by the stack that allocated them (exit_freed / exit_kept, tensor_peak).
  function siteRows(sites, cls) {
    return sites.map((s) =>
      el(
        "tr",
        { class: cls, "data-bytes": s.bytes },
        cell(fmt.bytes(s.bytes), { class: "num" }),
        cell(blocksText(s.allocations), { class: "num" }),
        cell(siteStack(s.stack))
      )
    );
  }

  function renderPeaks(procs) {
    const rows = [];
    for (const a of procs) {
      for (const d of a.devices || []) {
        rows.push(
          el(
            "tr",
            { class: "gmt-tensor-device", "data-pid": a.pid, "data-device": d.device },
            cell(String(a.pid)),
            cell(a.allocator + (a.version ? " " + a.version : "")),
            cell(a.status + (a.detail ? " (" + a.detail + ")" : "")),
            cell(String(d.device), { class: "num" }),
            cell(fmt.bytes(d.allocated_peak_bytes), { class: "num", "data-figure": "allocated_peak" }),
            cell(fmt.bytes(d.reserved_peak_bytes), { class: "num", "data-figure": "reserved_peak" }),
            cell(fmt.count(d.allocations) + ", frees " + fmt.count(d.frees), { class: "num" }),
            cell(fmt.bytes(d.allocated_end_bytes), { class: "num", "data-figure": "allocated_end" }),
            cell(fmt.bytes(d.reserved_end_bytes), { class: "num", "data-figure": "reserved_end" })
          )
        );
      }
      if (!(a.devices || []).length) {
        rows.push(
          el("tr", { class: "gmt-tensor-device", "data-pid": a.pid },
            cell(String(a.pid)), cell(a.allocator + (a.version ? " " + a.version : "")),
            cell(a.status + (a.detail ? " (" + a.detail + ")" : "")),
            el("td", { colspan: 6, class: "gmt-muted", text: "no blocks recorded" }))
        );
      }
    }
    return table(
      ["pid", "allocator", "status", "device", "tensor-level peak (max_memory_allocated)", "segment-level peak (max_memory_reserved)", "blocks allocated", "allocated at the end", "reserved at the end"],
      rows,
      { id: "gmt-tensor-peaks" }
    );
  }

  // The free space inside segments at the tensor-level peak: what PyTorch calls "reserved
  // but unallocated", the split blocks nobody uses and the largest block one request gets.
  function renderSpace(spaces, ctx) {
    const rows = spaces.map((m) =>
      el(
        "tr",
        { class: "gmt-segment-space", "data-pid": m.pid, "data-device": m.device },
        cell(String(m.pid)),
        cell(String(m.device), { class: "num" }),
        cell(fmt.at(m.time_ns, ctx.origin) + (m.exact ? "" : " (an earlier peak)")),
        cell(fmt.bytes(m.reserved_bytes), { class: "num", "data-figure": "reserved" }),
        cell(fmt.bytes(m.allocated_bytes), { class: "num", "data-figure": "allocated" }),
        cell(fmt.bytes(m.reserved_unallocated_bytes), { class: "num", "data-figure": "reserved_unallocated" }),
        cell(fmt.bytes(m.inactive_split_bytes) + " in " + blocksText(m.inactive_split_blocks), { class: "num", "data-figure": "inactive_split" }),
        cell(fmt.bytes(m.largest_free_bytes), { class: "num", "data-figure": "largest_free" }),
        cell(fmt.count(m.segment_count), { class: "num" })
      )
    );
    return table(
      ["pid", "device", "at", "reserved", "allocated", "reserved − allocated", "inactive split blocks", "largest free block", "segments"],
      rows,
      { id: "gmt-segment-space" }
    );
  }

  // Blocks the program held to its end: freed by the interpreter's finalization, or still
  // allocated after it (docs/frameworks.md).
  function renderExit(procs) {
    const parts = [];
    const kinds = [
      ["exit_freed", "freed only by the interpreter at exit"],
      ["exit_kept", "still allocated after the interpreter finalized"],
    ];
    for (const a of procs) {
      for (const [key, what] of kinds) {
        const bytes = a[key + "_bytes"] || 0;
        const sites = a[key + "_top_sites"] || [];
        const line = "pid " + a.pid + ": " + fmt.bytes(bytes) + " in " + blocksText(a[key + "_blocks"] || 0) + " " + what +
          (bytes ? " (" + sitesText(a[key + "_sites"] || 0) + ")" : "");
        parts.push(el("p", { class: "gmt-exit-blocks", "data-kind": key, "data-pid": a.pid, "data-bytes": bytes, text: line }));
        if (sites.length) {
          parts.push(table(["bytes", "blocks", "allocated at"], siteRows(sites, "gmt-exit-site"), { class: "gmt-table gmt-exit-sites", "data-kind": key, "data-pid": a.pid }));
        }
      }
    }
    return parts;
  }

  // The chosen process's entries of caching_allocator[key], or null when there are none to
  // draw: then the section is hidden (no caching allocator in the report) or says `none`.
  function cachingItems(host, ctx, key, none) {
    const c = ctx.report.caching_allocator;
    showSection(host, !!c);
    const items = c ? GMT.data.forPid(c[key] || [], ctx.pid) : [];
    if (!items.length) host.replaceChildren(...(c ? [el("p", {}, none)] : []));
    return items.length ? items : null;
  }

  function renderTensor(host, ctx) {
    const procs = cachingItems(host, ctx, "processes", "No caching allocator was recorded in this process.");
    if (!procs) return;
    const c = ctx.report.caching_allocator;
    const parts = [renderPeaks(procs)];
    const peak = c.tensor_peak || {};
    const peakSites = GMT.data.forPid(peak.top_sites || [], ctx.pid);
    if (ctx.pid === null && peak.bytes) {
      parts.push(el("p", { class: "gmt-tensor-peak", text: "Tensor-level peak: " + fmt.bytes(peak.bytes) + " in blocks at " + fmt.at(peak.time_ns, ctx.origin) + "; its largest sites:" }));
    }
    if (peakSites.length) {
      parts.push(table(["bytes", "blocks", "allocated at"], siteRows(peakSites, "gmt-tensor-peak-site"), { id: "gmt-tensor-peak-sites" }));
    }
    const spaces = GMT.data.forPid(c.fragmentation || [], ctx.pid);
    parts.push(el("h3", { text: "Free space inside segments at the tensor-level peak" }));
    parts.push(spaces.length ? renderSpace(spaces, ctx) : el("p", {}, "Not measured."));
    parts.push(el("h3", { text: "Blocks held to the end" }));
    parts.push(...renderExit(procs));
    host.replaceChildren(...parts);
  }

  // Each OOM the caching allocator raised: its diagnosis, then whether each remedy would
  // have avoided it; a verdict the recorded state does not settle is marked an estimate.
  function renderOoms(host, ctx) {
    const ooms = cachingItems(host, ctx, "ooms", "No out-of-memory error in a caching allocator.");
    if (!ooms) return;
    const rows = ooms.map((o, i) => {
      const hints = el(
        "ul",
        { class: "gmt-list gmt-hints" },
        ...(o.hints || []).map((h) =>
          el(
            "li",
            { class: "gmt-hint" + (h.estimate ? " estimate" : ""), "data-remedy": h.remedy, "data-estimate": h.estimate ? "1" : "0" },
            el("strong", { text: h.remedy }),
            ": " + h.verdict,
            h.estimate ? el("span", { class: "gmt-estimate", text: " (estimate)" }) : null,
            el("div", { class: "gmt-note", text: h.why })
          )
        )
      );
      const s = o.space;
      return el(
        "tr",
        { class: "gmt-tensor-oom", "data-index": i, "data-fragmentation": o.fragmentation ? "1" : "0" },
        cell(fmt.at(o.time_ns, ctx.origin)),
        cell(String(o.pid)),
        cell(String(o.device), { class: "num" }),
        cell(fmt.bytes(o.requested_bytes), { class: "num", "data-figure": "requested" }),
        cell(fmt.bytes(o.device_free_bytes), { class: "num" }),
        cell(
          s ? fmt.bytes(s.reserved_bytes) + " reserved, " + fmt.bytes(s.allocated_bytes) + " allocated, largest free block " + fmt.bytes(s.largest_free_bytes) : "–",
          { "data-figure": "space" }
        ),
        cell(el("div", { class: "gmt-diagnosis", text: o.diagnosis })),
        cell(hints),
        cell(siteStack(o.stack))
      );
    });
    host.replaceChildren(
      table(["time", "pid", "device", "requested", "driver free", "segments then", "diagnosis", "would it have helped?", "stack"], rows, { id: "gmt-tensor-oom-table" })
    );
  }

  GMT.frameworks = { renderHeld, renderTensor, renderOoms };
})(window.GMT);
