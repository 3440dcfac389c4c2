// Live bytes over time, one chart per device (uPlot): device-resident memory stacked by
// the allocation sites that held the most (the rest as "other"), or by kind; pinned host
// memory on its own axis on the right; the device's capacity as a line; the peak, every
// failed allocation and phase markers drawn over it. Bytes are ticked at binary-round
// values, time labels measured so that none overlaps another. Drag to zoom, wheel to
// zoom, shift+wheel or the arrows to pan, double-click to reset; hover shows time and
// bytes; a click picks a moment, and what was live then is listed below by stack.
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

  // The series of one device by kind: [{label, color, times, values}] (relative ns), from
  // the by-kind timeline when the report has it, else the total timeline as one series.
  function kindSeries(r, device, origin) {
    const byKind = r.kind_timeline.find((t) => t.device === device);
    const kind = (k, times, values) => ({ label: k, kind: k, color: GMT.KIND_COLORS[k] || "#888", times, values });
    if (byKind) {
      const times = byKind.time_ns.map((t) => Number(t) - origin);
      return byKind.kinds.map((k, i) => kind(k, times, byKind.bytes[i].map(Number)));
    }
    const total = r.timeline.find((t) => t.device === device);
    if (!total) return [];
    return [kind("device", total.points.map((p) => Number(p[0]) - origin), total.points.map((p) => Number(p[1])))];
  }

  // Distinct colours for the sites drawn (report.site_timeline lists at most 8 per device).
  const SITE_COLORS = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"];
  const OTHER_COLOR = "#d0d3da";

  // A site as the tables name it (its own or Python lines first, GMT.data), with files by
  // their name alone and C++ functions by their short names, so that a legend of eight
  // sites stays short.
  function siteName(stack) {
    if (!stack) return "(stack not embedded)";
    const name = GMT.data.pythonSiteLabel(stack) || GMT.data.siteLabel(stack, true);
    return name.replace(/ at [^ ←]*\/([^/ ←]+:\d+)/g, " at $1");
  }

  // The series of one device by allocation site (report.site_timeline): the sites with the
  // most bytes, largest at the bottom, then every other site as "other"; null when the
  // report has no such timeline (saved before it existed).
  function siteSeries(r, device, origin) {
    const bySite = (r.site_timeline || []).find((t) => t.device === device);
    if (!bySite) return null;
    const times = bySite.time_ns.map((t) => Number(t) - origin);
    // Sites a person cannot tell apart (the same lines, different frames of a library
    // below them) are one band: a legend naming one line twice reads as a mistake.
    const out = [];
    const byName = new Map();
    for (const s of bySite.sites) {
      const stack = GMT.data.stackOf(r, s.stack);
      const label = siteName(stack);
      const key = s.pid + "\n" + label;
      const values = s.bytes.map(Number);
      const same = byName.get(key);
      if (same) {
        same.values = same.values.map((v, j) => v + values[j]);
        continue;
      }
      const series = { label, stack, color: SITE_COLORS[out.length % SITE_COLORS.length], times, values, pid: s.pid };
      byName.set(key, series);
      out.push(series);
    }
    const other = bySite.other_bytes.map(Number);
    if (other.some((v) => v > 0) || !out.length) out.push({ label: "other", color: OTHER_COLOR, times, values: other });
    return out;
  }

  function hostSeries(r, origin) {
    const host = r.kind_timeline.find((t) => t.device === -1);
    if (!host) return null;
    return { kind: "host_pinned", times: host.time_ns.map((t) => Number(t) - origin), values: host.bytes[0].map(Number) };
  }

  // Text widths as the axis labels are drawn (.gmt-x-label in report.css).
  const measure = (() => {
    let ctx2d = null;
    return (text) => {
      if (!ctx2d) {
        ctx2d = document.createElement("canvas").getContext("2d");
        ctx2d.font = "12px system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif";
      }
      return ctx2d.measureText(text).width;
    };
  })();
  const LABEL_GAP = 12; // px between two time labels at least

  // Time ticks at 1, 2 or 5 × 10^k ns, the finest whose labels fit between them at this
  // width (measured, not guessed).
  function timeTicks(min, max, width) {
    const range = max - min;
    if (!(range > 0) || !(width > 0)) return [min];
    let e = Math.floor(Math.log10(range / Math.max(width / 20, 1)));
    for (let tries = 0; tries < 40; tries++, e++) {
      for (const m of [1, 2, 5]) {
        const step = m * 10 ** e;
        if (step <= 0 || range / step > width) continue;
        const ticks = [];
        for (let v = Math.ceil(min / step) * step; v <= max; v += step) ticks.push(v);
        if (ticks.length < 2) return ticks.length ? ticks : [min];
        const widest = Math.max(...fmt.durationTicks(ticks).map(measure));
        if ((step / range) * width >= widest + LABEL_GAP) return ticks;
      }
    }
    return [min];
  }

  class DeviceChart {
    constructor(host, ctx, device, onPick) {
      const r = ctx.report;
      this.ctx = ctx;
      this.device = device;
      this.onPick = onPick;
      this.host = host;
      this.bySite = siteSeries(r, device, ctx.origin);
      this.byKind = kindSeries(r, device, ctx.origin);
      this.pinned = hostSeries(r, ctx.origin);
      this.view = this.bySite ? "site" : "kind";
      const dev = r.devices.find((d) => d.ordinal === device) || {};
      this.capacity = Number(dev.total_bytes) || 0;
      // Shown at first where it matters: an allocation failed on the device, or it came
      // within a factor of four of its capacity; otherwise the toggle shows it.
      const failed = r.failures.some((f) => f.device === device);
      this.showCapacity = this.capacity > 0 && (failed || Number(dev.peak_bytes) * 4 >= this.capacity);

      this.box = el("div", {
        class: "gmt-chart",
        id: "gmt-chart-device-" + device,
        "data-device": device,
        "data-kinds": this.byKind.map((s) => s.kind).join(","),
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
        el("button", { type: "button", class: "gmt-zoom-reset", onclick: () => this.reset() }, "reset zoom")
      );
      if (this.bySite) {
        this.viewButtons = ["site", "kind"].map((v) =>
          el("button", { type: "button", class: "gmt-by-" + v, onclick: () => this.setView(v) }, v === "site" ? "allocation site" : "kind")
        );
        toolbar.append(el("span", { class: "gmt-view-switch" }, "stacked by ", ...this.viewButtons));
      }
      if (this.capacity > 0) {
        const box = el("input", { type: "checkbox", class: "gmt-capacity-toggle", checked: this.showCapacity });
        box.addEventListener("change", () => {
          this.showCapacity = box.checked;
          this.build();
        });
        toolbar.append(el("label", { class: "gmt-capacity-switch" }, box, " device capacity " + fmt.bytes(this.capacity)));
      }
      toolbar.append(el("span", { class: "gmt-muted", text: " drag to zoom, wheel to zoom, shift+wheel to pan, click to see what was live" }));
      const name = dev.name || "";
      host.append(el("h3", { text: "Device " + device + (name ? " · " + name : "") }), toolbar, this.box);
      this.width = Math.max(host.clientWidth - 20, 320);
      this.marks = this.markSpecs();
      this.build();
      this.fullRange = [this.xs.length ? this.xs[0] : 0, this.xs.length ? this.xs[this.xs.length - 1] : 1];
    }

    setView(view) {
      if (view === this.view) return;
      this.view = view;
      this.build();
    }

    // (Re)draws the chart for the chosen view, keeping the axis where it was.
    build() {
      const keep = this.plot ? [this.plot.scales.x.min, this.plot.scales.x.max] : null;
      if (this.plot) this.plot.destroy();
      this.xLabels = this.markers = this.capacityLine = null; // the old plot's, gone with it
      const series = this.view === "site" ? this.bySite : this.byKind;
      const pinned = this.pinned;
      // The marks' times are on the axis too: a phase pushed before the first allocation, or
      // a failure after the last change of a run that was killed, is no change of live bytes,
      // and would otherwise lie outside the chart, hidden.
      const xs = unionTimes(...series.map((s) => s.times), pinned ? pinned.times : [], this.marks.map((m) => m.x));
      const own = series.map((s) => holdAt(xs, s.times, s.values));
      // Stacked: series k is drawn as the sum of series 0..k, the top one first so that
      // each lower sum paints over it.
      const cumulative = [];
      own.forEach((vals, k) => cumulative.push(vals.map((v, i) => v + (k ? cumulative[k - 1][i] : 0))));
      const data = [xs];
      const capacity = this.showCapacity ? this.capacity : 0;
      const byteAxis = (key) => ({
        // Ticks at binary-round bytes, at most one per 32 px of height.
        splits: (u, ai, min, max) => fmt.byteTicks(min, max, Math.floor(u.bbox.height / uPlot.pxRatio / 32)).ticks,
        values: (u, ticks) => {
          const labels = fmt.byteTickLabels(ticks, ticks.length > 1 ? ticks[1] - ticks[0] : ticks[0] || 1);
          this.box.dataset[key] = labels.join("|");
          return labels;
        },
      });
      const opts = {
        width: this.width,
        height: 260,
        scales: {
          x: { time: false },
          bytes: { range: (u, min, max) => [0, Math.max(max, capacity, 1) * 1.05] },
          host: { range: (u, min, max) => [0, Math.max(max, 1) * 1.05] },
        },
        axes: [
          // Time labels are elements of their own (placeXLabels): measured, never overlapping.
          { splits: (u, ai, min, max) => (this.xTicks = timeTicks(min, max, u.bbox.width / uPlot.pxRatio)), values: (u, ticks) => ticks.map(() => ""), size: 30 },
          Object.assign({ scale: "bytes", size: 80 }, byteAxis("yTicks")),
        ],
        series: [{ label: "time", value: (u, v) => (v === null || v === undefined ? "–" : fmt.atExact(v, 0)) }],
        cursor: { drag: { x: true, y: false, setScale: true } },
        legend: { live: true },
      };
      const stepped = uPlot.paths.stepped({ align: 1 });
      for (let k = series.length - 1; k >= 0; k--) {
        data.push(cumulative[k]);
        opts.series.push({
          label: series[k].label,
          scale: "bytes",
          stroke: series[k].color,
          fill: series[k].color,
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
        opts.axes.push(Object.assign({ scale: "host", side: 1, size: 80, grid: { show: false } }, byteAxis("hostTicks")));
      }
      opts.hooks = { draw: [() => this.placeOverlays()] };
      this.box.dataset.view = this.view;
      this.box.dataset.series = opts.series.length - 1;
      this.box.dataset.labels = series.map((s) => s.label).join("\n");
      this.plot = new uPlot(opts, data, this.box);
      this.xs = xs;
      this.cumulative = cumulative;
      for (const b of this.viewButtons || []) b.setAttribute("aria-pressed", String(b.classList.contains("gmt-by-" + this.view)));

      const over = this.plot.over;
      // The pointer's x in the plot: an event over a marker's handle or label (children of
      // `over`) has its offsetX measured from that child, not from the plot.
      const xOf = (e) => e.clientX - over.getBoundingClientRect().left;
      over.addEventListener("wheel", (e) => {
        e.preventDefault();
        const { min, max } = this.plot.scales.x;
        if (e.shiftKey || Math.abs(e.deltaX) > Math.abs(e.deltaY)) {
          const d = ((max - min) * (e.deltaX || e.deltaY)) / 1000;
          this.plot.setScale("x", { min: min + d, max: max + d });
          return;
        }
        const at = this.plot.posToVal(xOf(e), "x");
        const f = e.deltaY > 0 ? 1.25 : 0.8;
        this.plot.setScale("x", { min: at - (at - min) * f, max: at + (max - at) * f });
      }, { passive: false });
      let down = null;
      over.addEventListener("mousedown", (e) => (down = xOf(e)));
      over.addEventListener("mouseup", (e) => {
        if (down !== null && Math.abs(xOf(e) - down) < 3) this.onPick(this.plot.posToVal(xOf(e), "x"));
        down = null;
      });
      this.xLabels = el("div", { class: "gmt-x-labels" });
      over.parentNode.append(this.xLabels);
      this.capacityLine = capacity
        ? el("div", { class: "gmt-capacity", "data-bytes": capacity }, el("span", { class: "gmt-label", text: "device capacity " + fmt.bytes(capacity) }))
        : null;
      if (this.capacityLine) over.append(this.capacityLine);
      this.markers = this.makeMarkers();
      if (keep) this.plot.setScale("x", { min: keep[0], max: keep[1] });
      this.placeOverlays();
    }

    reset() {
      this.plot.setScale("x", { min: this.fullRange[0], max: this.fullRange[1] });
    }

    placeOverlays() {
      if (!this.xLabels) return; // while uPlot draws for the first time
      this.placeMarkers();
      this.placeXLabels();
      if (this.capacityLine) this.capacityLine.style.top = this.plot.valToPos(this.capacity, "bytes") + "px";
    }

    // The time labels under the plot, centred on their ticks; a label that would touch the
    // one before it, or leave the chart, is dropped, whatever the width.
    placeXLabels() {
      const u = this.plot;
      const over = u.over;
      this.xLabels.style.left = over.offsetLeft + "px";
      this.xLabels.style.top = over.offsetTop + over.offsetHeight + 6 + "px";
      this.xLabels.style.width = over.offsetWidth + "px";
      const ticks = (this.xTicks || []).filter((t) => t >= u.scales.x.min && t <= u.scales.x.max);
      const texts = fmt.durationTicks(ticks);
      const spans = ticks.map((t, i) => el("span", { class: "gmt-x-label", "data-x": t, text: texts[i] }));
      this.xLabels.replaceChildren(...spans);
      const rootWidth = u.root.offsetWidth;
      let right = -Infinity;
      for (const s of spans) {
        const w = s.offsetWidth;
        const left = u.valToPos(Number(s.dataset.x), "x") - w / 2;
        s.style.left = left + "px";
        const fits = left >= right + LABEL_GAP && over.offsetLeft + left >= 0 && over.offsetLeft + left + w <= rootWidth;
        s.hidden = !fits;
        if (fits) right = left + w;
      }
    }

    // What is marked on the chart: the peak, each failed allocation and each phase, with
    // its time relative to the origin (x).
    markSpecs() {
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
      for (const m of marks) m.x = Number(m.t) - o;
      return marks;
    }

    // The markers as elements over the plot, so they can be hovered (and tested).
    makeMarkers() {
      return this.marks.map((m) => {
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
        return { div, x: m.x };
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
    GMT.dom.showSection(host, devices.length > 0);
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
