// Icicle flame graphs of bytes by allocation stack: the outermost frame on top, the
// allocating function at the bottom, each frame as wide as the bytes below it. They start
// at the user's own code (frames marked `own`): library frames around and between it are
// left out and those it called to allocate are one folded node, unless the toggle shows
// them. Click a frame to zoom into it (the top bar to zoom out), hover for function,
// file:line and module, search to highlight frames.
(function (GMT) {
  "use strict";
  const { el } = GMT.dom;
  const fmt = GMT.fmt;
  const ROW = 20;

  // The frames drawn for a stack, outermost first. Folded: only the user's own frames, and
  // below the innermost one the library frames it called to allocate as one node; a stack
  // without an own frame is drawn as it is (GMT.data.shownFrames).
  function drawnFrames(stack, folded) {
    const shown = GMT.data.shownFrames(stack);
    const innermost = stack.findIndex((f) => f.own);
    if (!folded || innermost < 0) return shown.slice().reverse();
    const own = GMT.data.userFrames(stack).slice().reverse();
    // The recorder's and CUDA's frames stay hidden, as unfolded.
    const below = stack.slice(0, innermost).filter((f) => !f.hidden);
    if (!below.length) return own;
    const modules = [...new Set(below.map((f) => (f.module || "").split("/").pop()).filter(Boolean))];
    return own.concat({
      label: "(library frames)",
      where: "",
      module: modules.join(", "),
      folded: below.length,
    });
  }

  // entries: [{stack: frames|null, bytes, allocations}], plus what was left out of them
  // as {label, bytes} (a node of its own under the root); `folded`: library frames folded.
  function buildTree(title, entries, leftOut, folded) {
    const root = { name: title, where: "", module: "", value: 0, allocations: 0, children: new Map(), depth: 0, parent: null };
    const child = (node, key, make) => {
      let c = node.children.get(key);
      if (!c) {
        c = Object.assign({ value: 0, allocations: 0, children: new Map(), depth: node.depth + 1, parent: node }, make());
        node.children.set(key, c);
      }
      return c;
    };
    for (const e of entries) {
      root.value += e.bytes;
      root.allocations += e.allocations || 0;
      let node = root;
      if (!e.stack) {
        node = child(root, "(stack not embedded)", () => ({ name: "(stack not embedded)", where: "", module: "", synthetic: true }));
        node.value += e.bytes;
        node.allocations += e.allocations || 0;
        continue;
      }
      for (const f of drawnFrames(e.stack, folded)) {
        // Folded library frames are one node below their caller, whichever they were.
        const key = f.folded ? "\u0001folded" : f.label + "\u0000" + f.where + "\u0000" + (f.module || "");
        node = child(node, key, () => ({
          name: f.label,
          where: f.where,
          module: f.module || "",
          python: f.language === "python",
          own: !!f.own,
          folded: !!f.folded,
        }));
        node.value += e.bytes;
        node.allocations += e.allocations || 0;
      }
    }
    for (const l of leftOut) {
      if (l.bytes <= 0) continue;
      root.value += l.bytes;
      const node = child(root, l.label, () => ({ name: l.label, where: "", module: "", synthetic: true }));
      node.value += l.bytes;
    }
    return root;
  }

  class FlameGraph {
    constructor(host, title, root, id) {
      this.root = root;
      this.zoomed = root;
      this.query = "";
      this.canvas = el("div", { class: "gmt-flame", id });
      this.status = el("div", { class: "gmt-flame-status" });
      host.append(el("h3", { text: title + ": " + fmt.bytes(root.value) }), this.status, this.canvas);
      this.render();
    }

    search(query) {
      this.query = query.toLowerCase();
      this.render();
    }

    matches(n) {
      if (!this.query) return false;
      return (n.name + n.where + " " + n.module).toLowerCase().includes(this.query);
    }

    render() {
      const width = Math.max(this.canvas.clientWidth, 300);
      const nodes = [];
      let skipped = 0;
      let matched = 0;
      // The zoomed frame's ancestors span the whole width, then its subtree to scale.
      const chain = [];
      for (let n = this.zoomed; n; n = n.parent) chain.unshift(n);
      chain.forEach((n, i) => nodes.push({ n, x: 0, w: width, row: i, ancestor: n !== this.zoomed }));
      const base = this.zoomed.depth;
      const scale = this.zoomed.value > 0 ? width / this.zoomed.value : 0;
      const walk = (node, x, inMatch) => {
        let cx = x;
        const kids = [...node.children.values()].sort((a, b) => b.value - a.value);
        for (const c of kids) {
          const w = c.value * scale;
          const m = this.matches(c);
          if (m && !inMatch) matched += c.value;
          if (w >= 1) {
            nodes.push({ n: c, x: cx, w, row: c.depth - base + chain.length - 1 });
            walk(c, cx, inMatch || m);
          } else {
            skipped += 1;
          }
          cx += w;
        }
      };
      if (this.matches(this.zoomed)) matched = this.zoomed.value;
      walk(this.zoomed, 0, this.matches(this.zoomed));
      const rows = nodes.reduce((m, p) => Math.max(m, p.row + 1), 1);
      this.canvas.style.height = rows * ROW + "px";
      this.canvas.replaceChildren(
        ...nodes.map((p) => {
          const n = p.n;
          const cls = ["gmt-flame-node"];
          if (n.depth === 1) cls.push("gmt-flame-root");
          if (n.depth === 0) cls.push("gmt-flame-all");
          if (p.ancestor) cls.push("ancestor");
          if (n.synthetic) cls.push("synthetic");
          if (n.python) cls.push("python");
          if (n.own) cls.push("own");
          if (n.folded) cls.push("folded");
          if (this.matches(n)) cls.push("match");
          const div = el("div", {
            class: cls.join(" "),
            "data-name": n.name,
            "data-bytes": n.value,
            "data-depth": n.depth,
            style: `left:${p.x}px;width:${Math.max(p.w - 1, 1)}px;top:${p.row * ROW}px;background:${this.color(n)}`,
            text: n.name,
          });
          div.addEventListener("click", () => {
            this.zoomed = n === this.zoomed && n.parent ? n.parent : n;
            this.render();
          });
          div.addEventListener("mousemove", (e) =>
            GMT.dom.tooltip.show(
              [
                n.name + n.where,
                n.module ? "module " + n.module : n.depth === 0 ? "everything" : "",
                fmt.bytes(n.value) + " (" + fmt.percent(n.value, this.root.value) + ")" +
                  (n.allocations ? " in " + fmt.count(n.allocations) + " allocations" : ""),
              ].filter(Boolean),
              e
            )
          );
          div.addEventListener("mouseleave", () => GMT.dom.tooltip.hide());
          return div;
        })
      );
      const parts = [];
      if (this.zoomed !== this.root) parts.push("zoomed into " + this.zoomed.name + " (click it again to zoom out)");
      if (this.query) parts.push("search matches " + fmt.bytes(matched) + " (" + fmt.percent(matched, this.root.value) + ")");
      if (skipped) parts.push(skipped + " frames narrower than a pixel not drawn");
      this.status.textContent = parts.join("; ");
      this.status.dataset.matched = matched;
    }

    color(n) {
      if (n.depth === 0) return "#d9d9d9";
      if (n.synthetic) return "#bbbbbb";
      if (n.folded) return "#d9dce3";
      // A stable warm colour per function name, Python frames in blue-green.
      let h = 0;
      for (const ch of n.name) h = (h * 31 + ch.charCodeAt(0)) >>> 0;
      return n.python ? `hsl(${170 + (h % 40)},55%,62%)` : `hsl(${10 + (h % 40)},80%,${60 + (h % 15)}%)`;
    }
  }

  function sum(list) {
    return list.reduce((s, x) => s + x.bytes, 0);
  }

  function render(host, ctx) {
    const r = ctx.report;
    const pid = ctx.pid;
    const search = el("input", { type: "search", id: "gmt-flame-search", placeholder: "Search functions, files, modules", value: GMT.flames.query || "" });
    const folded = !GMT.flames.showLibraries;
    const libraries = el("input", { type: "checkbox", id: "gmt-flame-libraries", checked: !folded });
    libraries.addEventListener("change", () => {
      GMT.flames.showLibraries = libraries.checked;
      render(host, ctx);
    });
    // Only stacks with frames of the user's own code fold; without any, nothing to toggle.
    const hasOwn = GMT.data.current.frames.some((f) => f.own);
    host.replaceChildren(el("div", { class: "gmt-toolbar" }, search, hasOwn ? el("label", {}, libraries, " show library frames") : null));
    GMT.dom.showSection(host, r.leak_scope.bytes > 0 || r.peak.bytes > 0 || (!!r.allocated && r.allocated.bytes > 0));
    const graphs = [];
    GMT.flames.graphs = {};

    // Leaked at exit: the listed leak sites, the rest of the leaked bytes as one node.
    const leaks = GMT.data.forPid(r.leaks, pid);
    const leaked = pid === null ? r.leak_scope.bytes : ctx.process.leaked_bytes;
    const leakedRest = leaked - sum(leaks);
    graphs.push(["Leaked at exit", "gmt-flame-leaked", buildTree("all leaks", leaks, [{ label: "(leak sites not listed)", bytes: leakedRest }], folded)]);

    // Live at the peak (all processes together: the peak is one moment of the whole run).
    const peakSites = GMT.data.forPid(r.peak.top_sites, pid);
    const peakRest = pid === null ? r.peak.bytes - sum(peakSites) : 0;
    graphs.push([
      "Live at the peak (" + fmt.at(r.peak.time_ns, ctx.origin) + ")",
      "gmt-flame-peak",
      buildTree("live at the peak", peakSites, [{ label: "(stacks not listed)", bytes: peakRest }], folded),
    ]);

    // Allocated in total, from the detail the HTML report asks for.
    if (r.allocated) {
      const sites = GMT.data.forPid(r.allocated.top_sites, pid).map((s) => ({
        stack: GMT.data.stackOf(r, s.stack),
        bytes: s.bytes,
        allocations: s.allocations,
      }));
      const rest = pid === null ? r.allocated.bytes - sum(sites) : 0;
      graphs.push(["Allocated in total", "gmt-flame-allocated", buildTree("all allocations", sites, [{ label: "(stacks not listed)", bytes: rest }], folded)]);
    }

    // A graph with nothing in it is left out.
    for (const [title, id, root] of graphs) {
      if (root.value === 0) continue;
      const box = el("div", { class: "gmt-flame-box" });
      host.append(box);
      GMT.flames.graphs[id] = new FlameGraph(box, title, root, id);
      if (search.value) GMT.flames.graphs[id].search(search.value);
    }
    if (!Object.keys(GMT.flames.graphs).length) host.append(el("p", {}, "Nothing leaked, live at the peak or allocated in this process."));
    search.addEventListener("input", () => {
      GMT.flames.query = search.value;
      for (const g of Object.values(GMT.flames.graphs)) g.search(search.value);
    });
    host.append(
      el("p", { class: "gmt-note" },
        (folded && hasOwn ? "Stacks start at your own code: library frames around it are left out, and those it called to allocate are one \"(library frames)\" node (show library frames draws them all). " : "") +
        "Frames of the recorder, the CUDA libraries and libc start-up are left out, as in the text report. " +
        (pid !== null ? "For one process, only its listed stacks are drawn." : ""))
    );
  }

  GMT.flames = { render, buildTree, graphs: {}, showLibraries: false, query: "" };
})(window.GMT);
