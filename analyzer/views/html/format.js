// Numbers and times as the text report writes them, and small DOM helpers every view uses.
window.GMT = window.GMT || {};
(function (GMT) {
  "use strict";

  const UNITS = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];

  // 67108864 -> "64.00 MiB"; below 1 KiB whole bytes.
  function bytes(n) {
    if (n === null || n === undefined) return "unknown";
    let v = Number(n);
    // A sum the analysis stopped at 2^64 - 1 rather than wrap (docs/analysis.md, "Saturated
    // figures"): the text views' words. As a JavaScript number it reads 2^64.
    if (v >= 2 ** 64) return "at least 16 EiB (saturated)";
    let u = 0;
    while (Math.abs(v) >= 1024 && u < UNITS.length - 1) {
      v /= 1024;
      u += 1;
    }
    return u === 0 ? v + " B" : v.toFixed(2) + " " + UNITS[u];
  }

  // Axis ticks in bytes at multiples of a power of two (16, 32, 48 MiB; never 19.07 MiB):
  // the smallest such step that leaves at most `most` ticks from min to max.
  function byteTicks(min, max, most) {
    const top = Math.max(max, 1);
    let step = 1;
    while ((top - Math.max(min, 0)) / step > Math.max(most, 1)) step *= 2;
    const ticks = [];
    for (let v = Math.ceil(Math.max(min, 0) / step) * step; v <= max; v += step) ticks.push(v);
    return { ticks, step };
  }

  // Their labels, in one unit with no more decimals than the step needs: "16 MiB", "1.5 GiB".
  function byteTickLabels(ticks, step) {
    const top = Math.max(...ticks.map(Math.abs), step, 1);
    let u = 0;
    while (u < UNITS.length - 1 && top >= 1024 ** (u + 1)) u += 1;
    // A step under a quarter of the unit reads better in the unit below (384 MiB, not 0.375 GiB).
    while (u > 0 && step / 1024 ** u < 0.25) u -= 1;
    const unit = 1024 ** u;
    const decimals = step >= unit ? 0 : Math.ceil(Math.log2(unit / step));
    return ticks.map((t) => Number((t / unit).toFixed(decimals)) + " " + UNITS[u]);
  }

  // A duration in ns -> "393 µs", "1.25 s".
  function duration(ns) {
    const v = Number(ns);
    const a = Math.abs(v);
    if (a < 1e3) return v.toFixed(0) + " ns";
    if (a < 1e6) return trim(v / 1e3) + " µs";
    if (a < 1e9) return trim(v / 1e6) + " ms";
    if (a < 60e9) return trim(v / 1e9) + " s";
    return trim(v / 60e9) + " min";
  }
  function trim(x) {
    return x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2);
  }

  // A time relative to the report's origin: "+393 µs".
  function at(ns, origin) {
    return "+" + duration(Number(ns) - origin);
  }

  // Axis ticks: one unit for all, with as many decimals as their spacing needs, so that
  // deep zooms do not show the same label twice.
  function durationTicks(ticks) {
    if (ticks.length < 2) return ticks.map((t) => "+" + duration(t));
    const step = Math.abs(ticks[1] - ticks[0]) || 1;
    const top = Math.max(...ticks.map(Math.abs));
    const [unit, name] = top >= 60e9 ? [60e9, "min"] : top >= 1e9 ? [1e9, "s"] : top >= 1e6 ? [1e6, "ms"] : top >= 1e3 ? [1e3, "µs"] : [1, "ns"];
    const decimals = Math.min(9, Math.max(0, Math.ceil(Math.log10(unit / step))));
    return ticks.map((t) => "+" + (t / unit).toFixed(decimals) + " " + name);
  }

  // A time to the nanosecond, for moments that may be very close: "+4.821392 ms".
  function atExact(ns, origin) {
    const d = Number(ns) - origin;
    return d < 1e3 ? "+" + d + " ns" : d < 1e6 ? "+" + (d / 1e3).toFixed(3) + " µs" : d < 1e9 ? "+" + (d / 1e6).toFixed(6) + " ms" : "+" + (d / 1e9).toFixed(9) + " s";
  }

  function count(n) {
    return Number(n).toLocaleString("en-US");
  }

  function percent(part, whole) {
    return whole > 0 ? ((100 * part) / whole).toFixed(1) + " %" : "–";
  }

  // el("div", {class: "x", "data-a": 1}, child, "text", ...)
  function el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === undefined || v === null || v === false) continue;
      if (k === "text") e.textContent = v;
      else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
      else e.setAttribute(k, v === true ? "" : String(v));
    }
    for (const c of children) {
      if (c === null || c === undefined || c === false) continue;
      e.append(c instanceof Node ? c : document.createTextNode(String(c)));
    }
    return e;
  }

  function svg(tag, attrs) {
    const e = document.createElementNS("http://www.w3.org/2000/svg", tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, String(v));
    return e;
  }

  // The one floating tooltip: show(lines, mouse event), hide().
  const tooltip = {
    show(lines, event) {
      const t = document.getElementById("gmt-tooltip");
      t.replaceChildren(...lines.map((l) => el("div", {}, l)));
      t.hidden = false;
      const x = Math.min(event.clientX + 14, window.innerWidth - t.offsetWidth - 8);
      const y = Math.min(event.clientY + 14, window.innerHeight - t.offsetHeight - 8);
      t.style.left = Math.max(0, x) + "px";
      t.style.top = Math.max(0, y) + "px";
    },
    hide() {
      document.getElementById("gmt-tooltip").hidden = true;
    },
  };

  // Kinds in the order the report lists them, with their colours.
  const KIND_COLORS = {
    device: "#4e79a7",
    pool: "#59a14f",
    managed: "#b07aa1",
    array: "#edc948",
    vmm: "#f28e2b",
    host_pinned: "#9c755f",
  };

  // A section (and its link in the header) hidden when the report has nothing for it.
  function showSection(host, shown) {
    const section = host.closest("section");
    section.hidden = !shown;
    const link = document.querySelector('.gmt-nav a[href="#' + section.id + '"]');
    if (link) link.hidden = !shown;
  }

  GMT.fmt = { bytes, byteTicks, byteTickLabels, duration, durationTicks, at, atExact, count, percent };
  GMT.dom = { el, svg, tooltip, showSection };
  GMT.KIND_COLORS = KIND_COLORS;
})(window.GMT);
