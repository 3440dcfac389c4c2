// The address space of one process on one device at a fragmentation measurement (the peak,
// a failed allocation, the end): each run of touched granules and each VMM reservation is
// a row, drawn to scale, with the live allocations (or mappings) in it, the holes between
// them and the allocations that pin granules highlighted; hover a block for its stack.
(function (GMT) {
  "use strict";
  const { el, svg } = GMT.dom;
  const fmt = GMT.fmt;
  const MAX_ROWS = 200;

  function title(m, origin) {
    const when = m.moment === "peak" ? "at the peak" : m.moment === "failure" ? "at a failed allocation" : "at the end";
    return when + " (" + fmt.at(m.time_ns, origin) + "), pid " + m.pid + ", device " + m.device;
  }

  function blockTooltip(r, b, e) {
    const stack = GMT.data.stackOf(r, b.stack);
    const lines = [
      b.kind + " via " + b.api + " at " + b.address,
      fmt.bytes(b.bytes) + " asked, " + fmt.bytes(b.extent) + " of addresses",
    ];
    if (b.pinned_bytes > 0) lines.push("pins " + fmt.bytes(b.pinned_bytes) + " of free granule space");
    if (stack) lines.push(...GMT.data.userFrames(stack).slice(0, 6).map((f) => "  " + f.label + f.where));
    else lines.push("(stack not embedded)");
    GMT.dom.tooltip.show(lines, e);
  }

  // One span as an SVG bar whose x is the offset in the span (scaled to 0..UNITS, since
  // SVG coordinates are single-precision floats), so that zooming is a change of viewBox:
  // wheel zooms around the pointer, double-click resets. Holes are also drawn as a hairline
  // at their start, visible however small they are.
  const UNITS = 1e6;
  function drawSpan(r, span, blocks, holes, granularity, width) {
    const base = BigInt(span.address);
    const bytes = Number(span.bytes) || 1;
    const k = UNITS / bytes;
    const size = UNITS;
    const x = (addr) => Number(BigInt(addr) - base) * k;
    const s = svg("svg", { width, height: 18, viewBox: `0 0 ${size} 18`, preserveAspectRatio: "none", class: "gmt-span-bar" });
    s.append(svg("rect", { x: 0, y: 0, width: size, height: 18, class: span.reservation ? "gmt-reserved" : "gmt-granules" }));
    if (granularity > 0 && bytes / granularity <= 128 && !span.reservation) {
      for (let g = granularity; g < bytes; g += granularity) {
        s.append(svg("line", { x1: g * k, x2: g * k, y1: 0, y2: 18, class: "gmt-granule-line" }));
      }
    }
    for (const b of blocks) {
      const rect = svg("rect", {
        x: x(b.address),
        y: 1,
        width: Number(b.extent) * k,
        height: 16,
        class: "gmt-block" + (b.pinned_bytes > 0 ? " pinned" : ""),
        fill: GMT.KIND_COLORS[b.kind] || "#888",
        "data-bytes": b.bytes,
        "data-address": b.address,
      });
      rect.addEventListener("mousemove", (e) => blockTooltip(r, b, e));
      rect.addEventListener("mouseleave", () => GMT.dom.tooltip.hide());
      s.append(rect);
    }
    for (const h of holes) {
      const hx = x(h.address);
      const tip = (e) => GMT.dom.tooltip.show(["hole of " + fmt.bytes(h.bytes) + " at " + h.address], e);
      for (const shape of [
        svg("rect", { x: hx, y: 3, width: Number(h.bytes) * k, height: 12, class: "gmt-hole", "data-bytes": h.bytes, "data-address": h.address }),
        svg("line", { x1: hx, x2: hx, y1: 0, y2: 18, class: "gmt-hole-mark" }),
      ]) {
        shape.addEventListener("mousemove", tip);
        shape.addEventListener("mouseleave", () => GMT.dom.tooltip.hide());
        s.append(shape);
      }
    }
    let view = [0, size];
    const setView = (a, b) => {
      const w = Math.min(Math.max(b - a, 1), size); // down to a millionth of the row
      a = Math.min(Math.max(a, 0), size - w);
      view = [a, a + w];
      s.setAttribute("viewBox", `${a} 0 ${w} 18`);
      s.dataset.zoomed = w < size ? "1" : "";
    };
    s.addEventListener("wheel", (e) => {
      e.preventDefault();
      const rect = s.getBoundingClientRect();
      const at = view[0] + ((e.clientX - rect.left) / rect.width) * (view[1] - view[0]);
      const f = e.deltaY > 0 ? 1.5 : 1 / 1.5;
      setView(at - (at - view[0]) * f, at + (view[1] - at) * f);
    }, { passive: false });
    s.addEventListener("dblclick", () => setView(0, size));
    return s;
  }

  // Blocks and holes of each span (all three lists are in address order).
  function bySpan(spans, items) {
    const out = spans.map(() => []);
    let i = 0;
    for (const it of items) {
      const a = BigInt(it.address);
      while (i < spans.length && a >= BigInt(spans[i].address) + BigInt(spans[i].bytes)) i++;
      if (i < spans.length && a >= BigInt(spans[i].address)) out[i].push(it);
    }
    return out;
  }

  function drawMeasurement(host, ctx, m) {
    const r = ctx.report;
    const l = m.layout;
    const width = Math.max(host.clientWidth - 230, 300);
    const blocks = bySpan(l.spans, l.blocks);
    const holes = bySpan(l.spans, l.holes);
    const pinned = l.blocks.filter((b) => b.pinned_bytes > 0).length;
    const facts = el(
      "p",
      { class: "gmt-map-facts", "data-blocks": l.block_count, "data-spans": l.span_count, "data-holes": m.hole_count },
      fmt.count(l.block_count) + " live allocations in " + fmt.count(l.span_count) + " runs of granules or reservations (granule " +
        fmt.bytes(m.granularity) + "); " + fmt.bytes(m.live_bytes) + " held; holes " + fmt.bytes(m.hole_bytes) + " in " +
        fmt.count(m.hole_count) + ", largest " + fmt.bytes(m.largest_hole_bytes) +
        (m.device_total_bytes ? " (" + fmt.percent(m.hole_bytes, m.device_total_bytes) + " of the device)" : "") +
        "; " + pinned + " allocations pin granules." + (m.exact ? "" : " Measured at an earlier peak.")
    );
    const rows = l.spans.slice(0, MAX_ROWS).map((span, i) =>
      el(
        "div",
        { class: "gmt-span" + (span.reservation ? " reservation" : ""), "data-address": span.address, "data-bytes": span.bytes },
        el("div", { class: "gmt-span-label mono", text: span.address + " · " + fmt.bytes(span.bytes) + (span.reservation ? " reserved" : "") }),
        drawSpan(r, span, blocks[i], holes[i], Number(m.granularity), width)
      )
    );
    const notes = [];
    if (l.span_count > l.spans.length || l.spans.length > MAX_ROWS) {
      notes.push("showing the first " + Math.min(l.spans.length, MAX_ROWS) + " of " + fmt.count(l.span_count) + " runs in address order");
    }
    if (l.block_count > l.blocks.length) notes.push("the first " + fmt.count(l.blocks.length) + " of " + fmt.count(l.block_count) + " allocations are embedded");
    if (m.hole_count > l.holes.length) notes.push("the first " + fmt.count(l.holes.length) + " of " + fmt.count(m.hole_count) + " holes are embedded");
    const legend = el(
      "div",
      { class: "gmt-legend" },
      ...Object.entries(GMT.KIND_COLORS)
        .filter(([k]) => k !== "host_pinned")
        .map(([k, c]) => el("span", {}, el("i", { style: "background:" + c }), k)),
      el("span", {}, el("i", { class: "gmt-hole-key" }), "hole"),
      el("span", {}, el("i", { class: "gmt-pinned-key" }), "pins granules"),
      el("span", {}, el("i", { class: "gmt-granules-key" }), "free in touched granules / reserved, unmapped"),
      el("span", { class: "gmt-muted" }, "wheel over a row to zoom into it, double-click to reset")
    );
    host.replaceChildren(facts, legend, el("div", { class: "gmt-spans" }, ...rows));
    if (notes.length) host.append(el("p", { class: "gmt-left-out", text: notes.join("; ") + "." }));
  }

  let state = null;

  function render(host, ctx) {
    GMT.dom.showSection(host, ctx.report.fragmentation.some((m) => m.layout));
    const measured = GMT.data.forPid(ctx.report.fragmentation, ctx.pid).filter((m) => m.layout);
    if (!measured.length) {
      host.replaceChildren(el("p", {}, "No address layout here: layouts are kept at the peak and at the first failed allocations (docs/html-report.md), and this process held no device memory then."));
      state = null;
      return;
    }
    const picker = el("select", { id: "gmt-map-picker" }, ...measured.map((m, i) => el("option", { value: i, text: title(m, ctx.origin) })));
    const view = el("div", { class: "gmt-map", id: "gmt-map-view" });
    host.replaceChildren(el("div", { class: "gmt-toolbar" }, el("label", {}, "Measurement ", picker)), view);
    const pick = (i) => {
      picker.value = String(i);
      view.dataset.moment = measured[i].moment;
      view.dataset.timeNs = measured[i].time_ns;
      drawMeasurement(view, ctx, measured[i]);
    };
    picker.addEventListener("change", () => pick(Number(picker.value)));
    state = { measured, pick, host };
    const firstFailure = measured.findIndex((m) => m.moment === "failure");
    pick(firstFailure >= 0 ? firstFailure : 0);
  }

  // Show the map of one measurement (a failure row's button).
  function show(m) {
    if (!state) return;
    const i = state.measured.indexOf(m);
    if (i >= 0) state.pick(i);
    document.getElementById("gmt-address-map").scrollIntoView();
  }

  GMT.addressMap = { render, show };
})(window.GMT);
