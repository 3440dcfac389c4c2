// Leaks, failed allocations and errors as tables whose stacks expand; a stack renderer
// the other views share.
(function (GMT) {
  "use strict";
  const { el } = GMT.dom;
  const fmt = GMT.fmt;

  function frameItem(f) {
    return el(
      "li",
      { class: f.language === "python" ? "gmt-frame python" : "gmt-frame", title: f.module || "" },
      el("span", { class: "gmt-fn", text: f.label }),
      el("span", { class: "gmt-where", text: f.where }),
      f.module ? el("span", { class: "gmt-module", text: " " + f.module.split("/").pop() }) : null
    );
  }

  // An expandable stack: its site as the summary (or `label`), the user's frames inside
  // (own code first), and every frame behind a second toggle.
  function stackDetails(stack, open, label) {
    if (!stack) return el("span", { class: "gmt-muted", text: "(stack not embedded)" });
    const shown = GMT.data.userFrames(stack);
    const details = el(
      "details",
      { class: "gmt-stack", open: !!open },
      el("summary", { text: label || GMT.data.siteLabel(stack) }),
      el("ol", { class: "gmt-frames" }, ...shown.map(frameItem))
    );
    if (shown.length < stack.length) {
      details.append(
        el(
          "details",
          { class: "gmt-all-frames" },
          el("summary", { text: "all " + stack.length + " frames" }),
          el("ol", { class: "gmt-frames" }, ...stack.map(frameItem))
        )
      );
    }
    return details;
  }

  function table(headers, rows, attrs) {
    return el(
      "table",
      Object.assign({ class: "gmt-table" }, attrs || {}),
      el("thead", {}, el("tr", {}, ...headers.map((h) => el("th", { text: h })))),
      el("tbody", {}, ...rows)
    );
  }

  function cell(content, attrs) {
    return el("td", attrs || {}, content);
  }

  function renderLeaks(host, ctx) {
    const r = ctx.report;
    const leaks = GMT.data.forPid(r.leaks, ctx.pid);
    const total = ctx.pid === null ? r.leak_scope.bytes : ctx.process.leaked_bytes;
    const listed = leaks.reduce((s, l) => s + l.bytes, 0);
    GMT.dom.showSection(host, r.leaks.length > 0 || r.leak_scope.bytes > 0);
    const intro = el(
      "p",
      {},
      leaks.length
        ? fmt.bytes(total) + " leaked; " + leaks.length + " largest sites listed"
        : "No leaks."
    );
    const rows = leaks.map((l, i) =>
      el(
        "tr",
        { class: "gmt-leak", "data-bytes": l.bytes, "data-allocations": l.allocations },
        cell("#" + (i + 1)),
        cell(fmt.bytes(l.bytes), { class: "num" }),
        cell(fmt.count(l.allocations), { class: "num" }),
        cell(l.kind + (l.released_by_teardown ? " (released by teardown)" : "")),
        cell(l.api),
        cell(String(l.pid)),
        cell(stackDetails(l.stack))
      )
    );
    host.replaceChildren(intro);
    if (!leaks.length) return;
    host.append(table(["", "bytes", "allocations", "kind", "API", "pid", "allocated at"], rows, { id: "gmt-leak-table" }));
    if (total > listed) {
      host.append(
        el("p", { class: "gmt-left-out", text: fmt.bytes(total - listed) + " more in leak sites not listed (report --top)" })
      );
    }
  }

  // The fragmentation measured at a failure (docs/analysis.md, "Fragmentation").
  function failureFragmentation(r, f) {
    return r.fragmentation.find(
      (x) => x.moment === "failure" && x.time_ns === f.time_ns && x.pid === f.pid && x.device === f.device
    );
  }

  function renderFailures(host, ctx) {
    const r = ctx.report;
    GMT.dom.showSection(host, r.failures.length > 0);
    const failures = GMT.data.forPid(r.failures, ctx.pid);
    if (!failures.length) {
      host.replaceChildren(el("p", {}, "No failed allocations."));
      return;
    }
    const rows = failures.map((f, i) => {
      const frag = failureFragmentation(r, f);
      const fragText = frag
        ? fmt.bytes(frag.hole_bytes) + " in " + fmt.count(frag.hole_count) + " holes, largest " +
          fmt.bytes(frag.largest_hole_bytes)
        : "not measured";
      return el(
        "tr",
        { class: "gmt-failure", "data-index": i },
        cell(fmt.at(f.time_ns, ctx.origin)),
        cell(String(f.pid)),
        cell(f.api + " on device " + f.device),
        cell(fmt.bytes(f.requested_bytes), { class: "num" }),
        cell(f.error),
        cell(fmt.bytes(f.live_bytes), { class: "num" }),
        cell(fmt.bytes(f.device_free_bytes), { class: "num" }),
        cell(fragText, { class: "gmt-fragmentation" }),
        cell(el("div", { class: "gmt-diagnosis", text: f.diagnosis }), {}),
        cell(
          frag && frag.layout
            ? el("button", { type: "button", class: "gmt-show-map", onclick: () => GMT.addressMap.show(frag) }, "address space")
            : el("span", { class: "gmt-muted", text: "–" })
        ),
        cell(stackDetails(f.stack))
      );
    });
    host.replaceChildren(
      table(
        ["time", "pid", "call", "requested", "error", "held then", "driver free", "holes then", "diagnosis", "map", "stack"],
        rows,
        { id: "gmt-failure-table" }
      )
    );
    const all = ctx.pid === null ? r.summary.failed_allocations : ctx.process.failed_allocations;
    if (all > failures.length) {
      host.append(el("p", { class: "gmt-left-out", text: fmt.count(all - failures.length) + " more failed allocations not listed" }));
    }
  }

  function renderErrors(host, ctx) {
    const r = ctx.report;
    GMT.dom.showSection(host, r.errors.length > 0);
    const errors = GMT.data.forPid(r.errors, ctx.pid);
    if (!errors.length) {
      host.replaceChildren(el("p", {}, "No double, invalid or mismatched frees."));
      return;
    }
    const rows = errors.map((e) =>
      el(
        "tr",
        { class: "gmt-error" },
        cell(fmt.at(e.time_ns, ctx.origin)),
        cell(String(e.pid)),
        cell(e.type.replace("_", " ")),
        cell(e.api),
        cell(e.address, { class: "mono" }),
        cell(e.detail),
        cell(stackDetails(e.stack)),
        cell(e.allocation_stack.length ? stackDetails(e.allocation_stack) : el("span", { class: "gmt-muted", text: "unknown" }))
      )
    );
    host.replaceChildren(
      table(["time", "pid", "error", "call", "address", "detail", "stack", "allocated at"], rows, { id: "gmt-error-table" })
    );
    const all = ctx.pid === null ? r.summary.errors : ctx.process.errors;
    if (all > errors.length) {
      host.append(el("p", { class: "gmt-left-out", text: fmt.count(all - errors.length) + " more errors not listed" }));
    }
  }

  GMT.tables = { stackDetails, table, cell, renderLeaks, renderFailures, renderErrors, failureFragmentation };
})(window.GMT);
