// What a recorded program did, read from `gpumemtrace dump` (one JSON record a line) and
// replayed with the plainest bookkeeping: live bytes by address, + on a successful alloc,
// - on a successful free. The browser tests compare the page with these facts rather than
// with the report the page was made from. Good for the simple programs they record
// (device allocations and frees, no teardown, no VMM).
import fs from "node:fs";

export function readDump(file) {
  return fs
    .readFileSync(file, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l));
}

export function events(records) {
  return records.filter((r) => r.record === "event");
}

// {bytes, time_ns} of the first moment live bytes were highest, and the live set then.
export function peakOf(records) {
  const live = new Map();
  let total = 0;
  let peak = { bytes: 0, time_ns: 0, live: new Map() };
  for (const e of events(records)) {
    if (e.result !== 0) continue;
    if (e.event === "alloc") {
      live.set(e.address, e);
      total += e.size;
      if (total > peak.bytes) peak = { bytes: total, time_ns: e.time_ns, live: new Map(live) };
    } else if (e.event === "free" && live.has(e.address)) {
      total -= live.get(e.address).size;
      live.delete(e.address);
    }
  }
  return peak;
}

// The allocations live right before the first failed allocation, and that failure.
export function firstFailure(records) {
  const live = new Map();
  for (const e of events(records)) {
    if (e.event === "alloc" && e.result !== 0) return { failure: e, live };
    if (e.result !== 0) continue;
    if (e.event === "alloc") live.set(e.address, e);
    else if (e.event === "free") live.delete(e.address);
  }
  return null;
}

export function startOf(records) {
  return Math.min(...records.filter((r) => r.record === "header").map((h) => h.start_mono_ns));
}
