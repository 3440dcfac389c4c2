// What long jobs and many ranks need beyond one run's leaks: growth across iterations (the
// report's `iterations` and `growth`, docs/analysis.md "Growth") and the per-rank table
// with its outliers (`ranks`, docs/analysis.md "Ranks"), as the text report shows them.
(function (GMT) {
  "use strict";
  const { el } = GMT.dom;
  const fmt = GMT.fmt;
  const { table, cell, stackDetails } = GMT.tables;

  // Where each process's iterations begin, then its growing sites, most per iteration first.
  function renderGrowth(host, ctx) {
    const r = ctx.report;
    const clocks = GMT.data.forPid(r.iterations || [], ctx.pid);
    const sites = GMT.data.forPid(r.growth || [], ctx.pid);
    GMT.dom.showSection(host, (r.growth || []).length > 0);
    const notes = clocks.map((it) => {
      const measured = Math.max(0, it.boundaries - 1);
      const where =
        it.source === "phase" ? "each time phase " + it.phase + " began"
        : it.source === "pattern" ? "each allocation at " + GMT.data.siteLabel(it.stack) + " (the repeating allocation pattern)"
        : null;
      const text = where
        ? "pid " + it.pid + ": " + fmt.count(measured) + " iterations, beginning " + where +
          (it.growing_sites ? "; " + fmt.bytes(it.growth_bytes_per_iteration) + " more per iteration from " + fmt.count(it.growing_sites) + (it.growing_sites === 1 ? " growing site" : " growing sites") : "; no allocation site grows")
        : "pid " + it.pid + ": no iterations (" + it.note + ")";
      return el("li", { class: "gmt-iterations", "data-source": it.source, text });
    });
    host.replaceChildren(el("ul", { class: "gmt-list" }, ...notes));
    if (!sites.length) {
      host.append(el("p", {}, clocks.some((it) => it.source !== "none") ? "Nothing grows across iterations." : "No iterations to compare."));
      return;
    }
    const rows = sites.map((g) =>
      el(
        "tr",
        { class: "gmt-growth", "data-bytes-per-iteration": g.bytes_per_iteration },
        cell(fmt.bytes(g.bytes_per_iteration), { class: "num" }),
        cell(fmt.count(g.first_iteration), { class: "num" }),
        cell(fmt.count(g.growing_iterations) + " of " + fmt.count(g.iterations), { class: "num" }),
        cell(g.confidence.toFixed(2), { class: "num" }),
        cell(fmt.bytes(g.live_bytes), { class: "num" }),
        cell(g.phase.length ? g.phase.join(" > ") : "–"),
        cell(String(g.pid)),
        cell(stackDetails(g.stack))
      )
    );
    host.append(table(["per iteration", "from iteration", "grew in", "confidence", "live at the last", "phase", "pid", "allocated at"], rows, { id: "gmt-growth-table" }));
    const scope = r.growth_scope;
    if (ctx.pid === null && scope && scope.sites > sites.length) {
      host.append(el("p", { class: "gmt-left-out", text: fmt.count(scope.sites - sites.length) + " more growing sites not listed (report --top)" }));
    }
  }

  // One row per rank, its own figures; a figure it stands out in is marked.
  function renderRanks(host, ctx) {
    const ranks = (ctx.report.ranks || []).filter((row) => ctx.pid === null || Number(row.pid) === ctx.pid);
    GMT.dom.showSection(host, (ctx.report.ranks || []).length > 1);
    if (!ranks.length || (ranks.length < 2 && ctx.pid === null)) {
      host.replaceChildren(el("p", {}, ranks.length ? "One rank: nothing to compare it with." : "No process says it is a rank of a job."));
      return;
    }
    const figure = (row, name, text) =>
      cell(text, { class: "num" + (row.outlier.includes(name) ? " gmt-outlier" : ""), "data-figure": name, title: row.outlier.includes(name) ? "above the ranks' median by more than a tenth and three median absolute deviations" : null });
    const rows = ranks.map((row) =>
      el(
        "tr",
        { class: "gmt-rank" + (row.outlier.length ? " outlier" : ""), "data-rank": row.rank, "data-outlier": row.outlier.join(",") },
        cell(String(row.rank), { class: "num" }),
        cell(row.host),
        cell(String(row.pid), { class: "num" }),
        figure(row, "peak", row.device_peaks.map((d) => "device " + d.device + ": " + fmt.bytes(d.peak_bytes)).join(", ") || "–"),
        figure(row, "leaked", fmt.bytes(row.leaked_bytes)),
        figure(row, "growth", fmt.bytes(row.growth_bytes_per_iteration)),
        figure(row, "failed_allocations", fmt.count(row.failed_allocations)),
        figure(row, "errors", fmt.count(row.errors))
      )
    );
    host.replaceChildren(table(["rank", "host", "pid", "peak per device", "leaked", "growth per iteration", "failed allocations", "errors"], rows, { id: "gmt-rank-table" }));
    const outliers = ranks.filter((row) => row.outlier.length);
    if (outliers.length) {
      host.append(el("p", { class: "gmt-outliers", text: "Outliers: " + outliers.map((row) => "rank " + row.rank + " (" + row.outlier.join(", ") + ")").join("; ") }));
    }
  }

  GMT.jobs = { renderGrowth, renderRanks };
})(window.GMT);
