// The page's data: the JSON report (docs/report.schema.json) that html_report.cpp embeds
// with every distinct frame listed once in `frames` and stacks written as indices into
// it. Loading puts the frames back, so views read stacks as the schema describes them.
(function (GMT) {
  "use strict";

  const STACK_KEYS = new Set(["stack", "allocation_stack", "frames"]);

  function rehydrate(value, frames) {
    if (Array.isArray(value)) {
      for (const item of value) rehydrate(item, frames);
      return;
    }
    if (value === null || typeof value !== "object") return;
    for (const [key, v] of Object.entries(value)) {
      if (STACK_KEYS.has(key) && Array.isArray(v)) {
        value[key] = v.map((i) => frames[i]);
      } else {
        rehydrate(v, frames);
      }
    }
  }

  function load() {
    const page = JSON.parse(document.getElementById("gmt-data").textContent);
    const report = page.report;
    rehydrate(report, page.frames);
    // Times are shown from the first process's start.
    const starts = report.processes.map((p) => Number(p.start_mono_ns)).filter((t) => t > 0);
    const origin = starts.length ? Math.min(...starts) : 0;
    return { report, frames: page.frames, framesLeftOut: page.frames_left_out || 0, origin };
  }

  // The frames a person reads: without the recorder's, CUDA's and libc start-up's
  // (html_report.cpp marks them as the text report hides them), unless that leaves none.
  function shownFrames(stack) {
    const shown = (stack || []).filter((f) => !f.hidden);
    return shown.length ? shown : stack || [];
  }

  // The frames a person reads first, as the text report has them (views/frame_text.h):
  // from the innermost frame of the user's own code (`own`, docs/configuration.md) outwards, own
  // frames only; the shown frames when the stack has no own frame.
  function userFrames(stack) {
    const frames = stack || [];
    const first = frames.findIndex((f) => f.own);
    return first < 0 ? shownFrames(frames) : frames.slice(first).filter((f) => f.own);
  }

  // The stack a detail field refers to (report.stacks), or null when not embedded.
  function stackOf(report, ref) {
    return ref === null || ref === undefined ? null : report.stacks[ref].frames;
  }

  // "cache_activations(...) at train.cpp:7": where a stack allocated, by its innermost own
  // frame when it has one; with `short`, a C++ function by its short name
  // (views/frame_text.h shortFunction: "Allocator::malloc at alloc.cpp:7").
  function siteLabel(stack, short) {
    const shown = userFrames(stack);
    if (!shown.length) return "(no stack recorded)";
    return ((short && shown[0].short) || shown[0].label) + shown[0].where;
  }

  // Where Python code made a framework's allocation: its two innermost Python frames
  // ("Tensor.__init__ at model.py:41 ← build at model.py:76"), since the native frames
  // above them are the framework's allocator, the same for every tensor; from the innermost
  // own frame when the stack has one. Null when the stack has no Python frame.
  function pythonSiteLabel(stack) {
    const python = userFrames(stack).filter((f) => f.language === "python");
    return python.length ? python.slice(0, 2).map((f) => f.label + f.where).join(" ← ") : null;
  }

  // Items of the chosen process (pid null: every process).
  function forPid(items, pid) {
    return pid === null ? items : items.filter((x) => Number(x.pid) === pid);
  }

  GMT.data = { load, shownFrames, userFrames, stackOf, siteLabel, pythonSiteLabel, forPid };
})(window.GMT);
