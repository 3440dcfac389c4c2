// Live bytes over time, one chart per device (uPlot): device-resident memory stacked by
// kind, pinned host memory on its own axis on the right; the peak, every failed
// allocation and phase markers drawn over it. Drag to zoom, wheel to zoom, shift+wheel
// or the arrows to pan, double-click to reset; hover shows time and bytes; a click picks
// a moment, and what was live then is listed below by stack.
(function (GMT) {
  "use strict";
  const { el } = GMT.dom;
  const fmt = GMT.fmt;

  // The value each series has at each of `xs` (sorted), holding its last sample.
  function holdAt(xs, times, values) {
    const out = new Array(xs.length);
    let j = -1;
    for (let i = 0; i < xs.length; i++) {
      while (j + 1 < times.length && times[j + 1] <= xs[i]) j++;
      out[i] = j < 0 ? 0 : values[j];
    }
    return out;
  }

  function unionTimes(...lists) {
    const all = [].concat(...lists);
    all.sort((a, b) => a - b);
    return all.filter((t, i) => i === 0 || t !== all[i - 1]);
  }

  // The series of one device: [{kind, times, values}] (relative ns), from the by-kind
  // timeline when the report has it, else the total timeline as one "device" series.
  function deviceSeries(r, device, origin) {
    const byKind = r.kind_timeline.find((t) => t.device === device);
    if (byKind) {
      const times = byKind.time_ns.map((t) => Number(t) - origin);
      return byKind.kinds.map((kind, k) => ({ kind, times, values: byKind.bytes[k].map(Number) }));
    }
    const total = r.timeline.find((t) => t.device === device);
    if (!total) return [];
    return [{ kind: "device", times: total.points.map((p) => Number(p[0]) - origin), values: total.points.map((p) => Number(p[1])) }];
  }

  function hostSeries(r, origin) {
    const host = r.kind_timeline.find((t) => t.device === -1);
    if (!host) return null;
    return { kind: "host_pinned", times: host.time_ns.map((t) => Number(t) - origin), values: host.bytes[0].map(Number) };
  }

  class DeviceChart {
    constructor(host, ctx, device, onPick) {
      const r = ctx.report;
      this.ctx = ctx;
      this.device = device;
      const series = deviceSeries(r, device, ctx.origin);
      const pinned = hostSeries(r, ctx.origin);
      const xs = unionTimes(...series.map((s) => s.times), pinned ? pinned.times : []);
      const own = series.map((s) => holdAt(xs, s.times, s.values));
      // Stacked: series k is drawn as the sum of kinds 0..k, the top one first so that
      // each lower sum paints over it.
      const cumulative = [];
      own.forEach((vals, k) => cumulative.push(vals.map((v, i) => v + (k ? cumulative[k - 1][i] : 0))));
      const data = [xs];
      const opts = {
        width: Math.max(host.clientWidth - 20, 400),
        height: 260,
        scales: { x: { time: false }, bytes: { range: (u, min, max) => [0, Math.max(max, 1) * 1.05] }, host: { range: (u, min, max) => [0, Math.max(max, 1) * 1.05] } },
        axes: [
          { values: (u, ticks) => fmt.durationTicks(ticks), size: 40 },
          { scale: "bytes", values: (u, ticks) => ticks.map(fmt.bytes), size: 90 },
        ],
        series: [{ label: "time", value: (u, v) => (v === null || v === undefined ? "–" : fmt.atExact(v, 0)) }],
        cursor: { drag: { x: true, y: false, setScale: true } },
        legend: { live: true },
      };
      const stepped = uPlot.paths.stepped({ align: 1 });
      for (let k = series.length - 1; k >= 0; k--) {
        data.push(cumulative[k]);
        const kind = series[k].kind;
        opts.series.push({
          label: kind,
          scale: "bytes",
          stroke: GMT.KIND_COLORS[kind] || "#888",
          fill: GMT.KIND_COLORS[kind] || "#888",
          paths: stepped,
          points: { show: false },
          value: (u, v, si, idx) => (idx === null || idx === undefined ? "–" : fmt.bytes(own[k][idx])),
        });
      }
      if (pinned) {
        data.push(holdAt(xs, pinned.times, pinned.values));
        opts.series.push({
          label: "pinned host (right axis)",
          scale: "host",
          stroke: GMT.KIND_COLORS.host_pinned,
          width: 2,
          dash: [6, 3],
          paths: stepped,
          points: { show: false },
          value: (u, v) => (v === null || v === undefined ? "–" : fmt.bytes(v)),
        });
        opts.axes.push({ scale: "host", side: 1, values: (u, ticks) => ticks.map(fmt.bytes), size: 80, grid: { show: false } });
      }
      opts.hooks = { setScale: [() => this.placeMarkers()], ready: [() => this.placeMarkers()] };

      const name = (r.devices.find((d) => d.ordinal === device) || {}).name || "";
      this.box = el("div", {
        class: "gmt-chart",
        id: "gmt-chart-device-" + device,
        "data-device": device,
        "data-series": opts.series.length - 1,
        "data-kinds": series.map((s) => s.kind).join(","),
      });
      const pan = (dir) => {
        const { min, max } = this.plot.scales.x;
        const d = (max - min) * 0.25 * dir;
        this.plot.setScale("x", { min: min + d, max: max + d });
      };
      const toolbar = el(
        "div",
        { class: "gmt-toolbar" },
        el("button", { type: "button", class: "gmt-pan-left", onclick: () => pan(-1) }, "◀"),
        el("button", { type: "button", class: "gmt-pan-right", onclick: () => pan(1) }, "▶"),
        el("button", { type: "button", class: "gmt-zoom-reset", onclick: () => this.reset() }, "reset zoom"),
        el("span", { class: "gmt-muted", text: " drag to zoom, wheel to zoom, shift+wheel to pan, click to see what was live" })
      );
      host.append(el("h3", { text: "Device " + device + (name ? " · " + name : "") }), toolbar, this.box);
      this.plot = new uPlot(opts, data, this.box);
      this.xs = xs;
      this.cumulative = cumulative;
      this.fullRange = [xs.length ? xs[0] : 0, xs.length ? xs[xs.length - 1] : 1];

      const over = this.plot.over;
      over.addEventListener("wheel", (e) => {
        e.preventDefault();
        const { min, max } = this.plot.scales.x;
        if (e.shiftKey || Math.abs(e.deltaX) > Math.abs(e.deltaY)) {
          const d = ((max - min) * (e.deltaX || e.deltaY)) / 1000;
          this.plot.setScale("x", { min: min + d, max: max + d });
          return;
        }
        const at = this.plot.posToVal(e.offsetX, "x");
        const f = e.deltaY > 0 ? 1.25 : 0.8;
        this.plot.setScale("x", { min: at - (at - min) * f, max: at + (max - at) * f });
      }, { passive: false });
      let down = null;
      over.addEventListener("mousedown", (e) => (down = e.offsetX));
      over.addEventListener("mouseup", (e) => {
        if (down !== null && Math.abs(e.offsetX - down) < 3) onPick(this.plot.posToVal(e.offsetX, "x"));
        down = null;
      });
      this.markers = this.makeMarkers();
      this.placeMarkers();
    }

    reset() {
      this.plot.setScale("x", { min: this.fullRange[0], max: this.fullRange[1] });
    }

    // The markers as elements over the plot, so they can be hovered (and tested).
    makeMarkers() {
      const r = this.ctx.report;
      const o = this.ctx.origin;
      const pid = this.ctx.pid;
      const marks = [];
      const dev = r.devices.find((d) => d.ordinal === this.device);
      if (dev && dev.peak_bytes > 0) {
        marks.push({ cls: "peak", t: dev.peak_time_ns, text: "peak " + fmt.bytes(dev.peak_bytes) + " at " + fmt.at(dev.peak_time_ns, o), bytes: dev.peak_bytes });
      }
      for (const f of GMT.data.forPid(r.failures, pid)) {
        if (f.device !== this.device) continue;
        marks.push({ cls: "failure", t: f.time_ns, text: "failed " + f.api + " of " + fmt.bytes(f.requested_bytes) + " at " + fmt.at(f.time_ns, o) + ": " + f.diagnosis });
      }
      for (const p of GMT.data.forPid(r.processes, pid)) {
        for (const m of p.phases) {
          // Nested phases (pushes, NVTX ranges) name their path; a pop marks where the phase
          // it ended stops, unlabelled, and its label row is the one that phase had.
          const path = m.path && m.path.length ? m.path.join(" > ") : m.name;
          const depth = m.path && m.path.length ? m.path.length - 1 : 0;
          const where = " (pid " + p.pid + (m.kind && m.kind !== "mark" ? ", thread " + m.tid : "") + ") at " + fmt.at(m.time_ns, o);
          if (m.kind === "pop") {
            if (!path) continue; // a pop that ended nothing
            marks.push({ cls: "phase phase-end", t: m.time_ns, text: "end of phase " + path + where, depth });
          } else {
            marks.push({ cls: "phase", t: m.time_ns, text: "phase " + path + where, label: m.name, depth });
          }
        }
      }
      return marks.map((m) => {
        const handle = el("span", { class: "gmt-handle" });
        const label = m.label ? el("span", { class: "gmt-label", text: m.label }) : null;
        if (label && m.depth) label.style.top = 10 + 13 * m.depth + "px"; // nested: a row lower
        const div = el("div", {
          class: "gmt-marker " + m.cls,
          "data-time-ns": m.t,
          "data-bytes": m.bytes,
          "data-depth": m.depth,
          title: m.text,
        }, handle, label);
        handle.addEventListener("mousemove", (e) => GMT.dom.tooltip.show([m.text], e));
        handle.addEventListener("mouseleave", () => GMT.dom.tooltip.hide());
        this.plot.over.append(div);
        return { div, x: Number(m.t) - o };
      });
    }

    placeMarkers() {
      if (!this.markers) return;
      const w = this.plot.over.clientWidth;
      for (const m of this.markers) {
        const left = this.plot.valToPos(m.x, "x");
        m.div.style.left = left + "px";
        m.div.hidden = !(left >= -1 && left <= w + 1);
      }
    }

    showRange(min, max) {
      if (max > min) this.plot.setScale("x", { min, max });
    }
  }

  // What was live at a picked time: the sampled moment whose interval holds it, else the
  // nearest one (report.moments, docs/analysis.md).
  function momentAt(r, x, origin) {
    let best = null;
    let bestDist = Infinity;
    // Sampled moments do not cover the whole run: between them the nearest one is shown,
    // and said to be the nearest.
    for (const m of r.moments) {
      const a = Number(m.time_ns) - origin;
      const b = Number(m.until_ns) - origin;
      const d = x < a ? a - x : x >= b ? x - b : 0;
      if (d < bestDist) {
        best = m;
        bestDist = d;
      }
    }
    return best && { moment: best, exact: bestDist === 0 };
  }

  function renderMoment(panel, ctx, x) {
    const r = ctx.report;
    const found = momentAt(r, x, ctx.origin);
    const m = found && found.moment;
    if (!m) {
      panel.replaceChildren(el("p", { class: "gmt-muted", text: "This report has no sampled moments." }));
      return;
    }
    const sites = GMT.data.forPid(m.top_sites, ctx.pid);
    const listed = sites.reduce((s, x) => s + x.bytes, 0);
    const rows = sites.map((s) =>
      el(
        "tr",
        { class: "gmt-moment-site", "data-bytes": s.bytes },
        el("td", { class: "num", text: fmt.bytes(s.bytes) }),
        el("td", { class: "num", text: fmt.count(s.allocations) }),
        el("td", { text: String(s.pid) }),
        el("td", {}, GMT.tables.stackDetails(GMT.data.stackOf(r, s.stack)))
      )
    );
    panel.replaceChildren(
      el("p", { class: "gmt-moment-title", "data-time-ns": m.time_ns, "data-live-bytes": m.live_bytes },
        (found.exact ? "" : "Nearest sampled moment to " + fmt.atExact(x, 0) + ": ") +
          "Live from " + fmt.atExact(m.time_ns, ctx.origin) + " to " + fmt.atExact(m.until_ns, ctx.origin) + ": " +
          fmt.bytes(m.live_bytes) + " of device memory in " + fmt.count(m.sites) + " stacks" +
          (ctx.pid !== null ? " (all processes; the rows are pid " + ctx.pid + "'s)" : "")),
      GMT.tables.table(["bytes", "allocations", "pid", "allocated at"], rows, { id: "gmt-moment-table" })
    );
    if (ctx.pid === null && m.live_bytes > listed) {
      panel.append(el("p", { class: "gmt-left-out", text: fmt.bytes(m.live_bytes - listed) + " more in " + fmt.count(m.sites - sites.length) + " stacks not listed" }));
    }
  }

  function render(host, ctx) {
    const r = ctx.report;
    host.replaceChildren();
    const devices = [...new Set([...r.kind_timeline.map((t) => t.device), ...r.timeline.map((t) => t.device)])]
      .filter((d) => d >= 0)
      .sort((a, b) => a - b);
    if (!devices.length) {
      host.append(el("p", { text: "No device memory was allocated." }));
      return;
    }
    const panel = el("div", { class: "gmt-moment", id: "gmt-moment" },
      el("p", { class: "gmt-muted", text: "Click a chart to see what was live then." }));
    const pick = (x) => renderMoment(panel, ctx, x);
    GMT.timeline.charts = devices.map((d) => new DeviceChart(host, ctx, d, pick));
    GMT.timeline.pick = pick;
    if (ctx.process) {
      const p = ctx.process;
      const a = Number(p.start_mono_ns) - ctx.origin;
      const b = Number(p.end_mono_ns) - ctx.origin;
      for (const c of GMT.timeline.charts) c.showRange(a, b);
      host.append(el("p", { class: "gmt-note", text: "Memory of every process; the axis shows pid " + p.pid + "'s lifetime and the markers are its own." }));
    }
    host.append(panel);
  }

  GMT.timeline = { render, momentAt, charts: [] };
})(window.GMT);
