// Incremental stack walking; see unwind_cache.h for the idea.
//
// The walker. A frame's register state is S = (rip, rsp, rbp, prev), prev telling whether
// rip is a return address (look up the rule at rip - 1) or an interrupted instruction (after
// a signal frame). One step applies the rule of (rip, prev) and reads at most three stack
// words whose addresses depend on S only: exactly what libunwind's fast tracer
// (src/x86_64/Gtrace.c, tdep_trace, behind unw_backtrace) does, with the same rules, which we
// obtain from libunwind the same way it does (one unw_step with frame stashing on). Frames
// the fast tracer does not handle make trace() answer -1 and the caller uses unw_backtrace.
//
// The cache. Per thread, a window of the last stack walked, outermost frame first: for each
// frame its state C[i] and the (address, value) pairs its step read, which produced C[i-1].
// Invariant: stepping C[i] with those values gives C[i-1]; how the walk ended after C[0] is
// recorded (stopped, cut at the depth limit, or hit a frame for unw_backtrace).
//
// Correctness. Steps are deterministic functions of (state, rule of the state's ip, words
// read), and a rule depends on the ip alone (as libunwind's own trace cache assumes). So if
// the live walk reaches a state equal to C[j] and the live stack still holds the recorded
// value at every recorded address of C[j], C[j-1], ..., the live walk would produce exactly
// C[j-1], ..., C[0] and end the same way: we copy their ips instead of stepping. Words are
// re-read innermost first and the check stops at the first difference, so every address
// read is one the plain walker would read at that point too (no stale address is touched).
// On a difference at C[i] the walk resumes by stepping from C[i], which is proven live.
// Whether the matched frame is the same activation or a different one with an identical
// state and identical saved words does not matter: the recorded frames are the same.
//
// rbp. Code built without frame pointers keeps arbitrary values in rbp, so matching on it
// would defeat the cache in exactly the frames that change. A frame records whether the
// rest of its chain depends on its rbp at all (some later step reads rbp before any step
// restores it from the stack); only then is rbp compared.
#include "unwind_cache.h"

#if GMT_UNWIND_NONGNU
#define UNW_LOCAL_ONLY
#include <libunwind.h>
#endif

// The cursor layout below is that of libunwind 1.6.2 (Debian 12's). Another version still
// builds, without the cache: every capture then goes to unw_backtrace.
#if GMT_UNWIND_NONGNU && UNW_VERSION_MAJOR == 1 && UNW_VERSION_MINOR == 6 && UNW_VERSION_EXTRA == 2

#include <pthread.h>
#include <sys/mman.h>
#include <ucontext.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <new>

namespace gmt::preload::unwind {
namespace {

// --- The part of libunwind's private cursor that rule derivation touches. ---
// Mirrors struct cursor of libunwind 1.6.2 for x86-64 (include/tdep-x86_64/libunwind_i.h,
// include/dwarf.h); the offsets were checked against those headers. libunwind's internal
// headers cannot be compiled as C++ (C11 atomics), hence the mirror; another version of the
// tarball compiles without the cache (see the top of this file), and deriveRule() checks every rule
// it reads against libunwind's public answer for the same step, so a layout error cannot produce a
// frame.

enum : int { kFrameAligned = -3, kFrameStandard = -2, kFrameSigreturn = -1, kFrameOther = 0 };

struct FrameInfo { // unw_tdep_frame_t
    uint64_t virtual_address;
    int64_t frame_type : 3;
    int64_t last_frame : 1;
    int64_t cfa_reg_rsp : 1;
    int64_t cfa_reg_offset : 29;
    int64_t rbp_cfa_offset : 15;
    int64_t rsp_cfa_offset : 15;
};

struct DwarfLoc {
    uint64_t val;
    uint64_t type;
};

struct __attribute__((may_alias)) CursorMirror {
    void* as_arg;
    void* as;
    uint64_t cfa;
    uint64_t ip;
    uint64_t args_size;
    uint64_t eh_args[2];
    unsigned eh_valid_mask;
    DwarfLoc loc[17];
    unsigned stash_frames : 1;
    unsigned use_prev_instr : 1;
    unsigned pi_valid : 1;
    unsigned pi_is_dynamic : 1;
    unw_proc_info_t pi;
    short hint;
    short prev_rs;
    FrameInfo frame_info;
};
static_assert(sizeof(FrameInfo) == 16);
static_assert(offsetof(CursorMirror, cfa) == 16 && offsetof(CursorMirror, ip) == 24);
static_assert(offsetof(CursorMirror, loc) == 64 && offsetof(CursorMirror, pi) == 344);
static_assert(offsetof(CursorMirror, frame_info) == 424);
static_assert(sizeof(CursorMirror) <= sizeof(unw_cursor_t));

constexpr int kDwarfRbp = 6, kDwarfRsp = 7, kDwarfRip = 16;

// Where a signal frame's ucontext keeps the interrupted registers (libunwind's
// UC_MCONTEXT_GREGS_*).
constexpr size_t kUcGregs = offsetof(ucontext_t, uc_mcontext) + offsetof(mcontext_t, gregs);
constexpr size_t kUcRip = kUcGregs + REG_RIP * sizeof(greg_t);
constexpr size_t kUcRsp = kUcGregs + REG_RSP * sizeof(greg_t);
constexpr size_t kUcRbp = kUcGregs + REG_RBP * sizeof(greg_t);
static_assert(kUcRip == 168 && kUcRsp == 160 && kUcRbp == 120);

// --- Rules and states. ---

struct State {
    uint64_t rip;
    uint64_t rsp; // equals the canonical frame address of the frame below
    uint64_t rbp;
    uint32_t prev; // 1: rip is a return address

    State(uint64_t ip, uint64_t sp, uint64_t bp, uint32_t p) : rip(ip), rsp(sp), rbp(bp), prev(p) {}
    // Copied field by field, on purpose: a block copy reads 16 bytes at a time what was
    // just written 8 bytes at a time, and stalls on store forwarding every trace.
    State(const State& o) : rip(o.rip), rsp(o.rsp), rbp(o.rbp), prev(o.prev) {}
    State& operator=(const State& o) {
        rip = o.rip;
        rsp = o.rsp;
        rbp = o.rbp;
        prev = o.prev;
        return *this;
    }
};

enum Kind : uint8_t { kEmpty, kStandard, kAligned, kSigreturn, kLast, kFallback };
constexpr uint8_t kRulePrev = 1, kRuleCfaRsp = 2;

struct Rule {
    uint64_t rip; // 0: empty slot
    int32_t cfa_off;
    int16_t rbp_off; // -1: rbp not saved
    uint8_t kind;
    uint8_t flags;
};

// Frame flags in the window: prev, and how the frame's step treats rbp.
constexpr uint8_t kPrev = 1, kUsesRbp = 2, kDefinesRbp = 4, kNeedsRbp = 8;

// Gtrace.c's sanity limit: an ip this low ends the walk without being recorded.
constexpr uint64_t kMinIp = 0x4000;

inline uint64_t load(uint64_t addr) {
    uint64_t v;
    std::memcpy(&v, reinterpret_cast<const void*>(addr), sizeof v);
    return v;
}

// One step of Gtrace.c's loop. Appends the words read to addr/val and returns their count.
// A step that restores rbp reads it last (resuming from the window relies on that).
inline uint32_t applyRule(const Rule& r, State& s, uint64_t* addr, uint64_t* val, uint8_t& flags) {
    const bool on_rsp = r.flags & kRuleCfaRsp;
    switch (r.kind) {
    case kStandard: {
        uint64_t cfa = (on_rsp ? s.rsp : s.rbp) + static_cast<int64_t>(r.cfa_off);
        addr[0] = cfa - 8;
        val[0] = load(cfa - 8);
        uint64_t rbp = s.rbp;
        uint32_t k = 1;
        if (r.rbp_off != -1) {
            addr[1] = cfa + static_cast<int64_t>(r.rbp_off);
            rbp = val[1] = load(addr[1]);
            k = 2;
        }
        flags = (on_rsp ? 0 : kUsesRbp) | (r.rbp_off != -1 ? kDefinesRbp : 0);
        s = State(val[0], cfa, rbp, 1);
        return k;
    }
    case kAligned: {
        addr[0] = (on_rsp ? s.rsp : s.rbp) + static_cast<int64_t>(r.cfa_off);
        uint64_t cfa = val[0] = load(addr[0]);
        addr[1] = cfa - 8;
        val[1] = load(cfa - 8);
        addr[2] = s.rbp;
        val[2] = load(s.rbp);
        flags = kUsesRbp | kDefinesRbp;
        s = State(val[1], cfa, val[2], 1);
        return 3;
    }
    default: { // kSigreturn
        uint64_t uc = s.rsp + static_cast<int64_t>(r.cfa_off);
        addr[0] = uc + kUcRip;
        val[0] = load(addr[0]);
        addr[1] = uc + kUcRsp;
        val[1] = load(addr[1]);
        addr[2] = uc + kUcRbp;
        val[2] = load(addr[2]);
        flags = kDefinesRbp;
        s = State(val[0], val[1], val[2], 0);
        return 3;
    }
    }
}

// The rule of s.rip, found the way Gtrace.c's trace_init_addr finds it: a cursor placed on
// the frame (only rip, rsp and rbp known), one unw_step with frame stashing on. Slow (a few
// microseconds); the result is cached per (rip, prev).
Rule deriveRule(const State& s) {
    Rule r{};
    r.rip = s.rip;
    r.rbp_off = -1;
    r.kind = kFallback;
    r.flags = s.prev ? kRulePrev : 0;

    ucontext_t uc;
    std::memset(&uc, 0, sizeof uc);
    uc.uc_mcontext.gregs[REG_RIP] = static_cast<greg_t>(s.rip);
    uc.uc_mcontext.gregs[REG_RSP] = static_cast<greg_t>(s.rsp);
    uc.uc_mcontext.gregs[REG_RBP] = static_cast<greg_t>(s.rbp);
    unw_cursor_t cursor;
    if (unw_init_local2(&cursor, &uc, s.prev ? 0 : UNW_INIT_SIGNAL_FRAME) != 0) {
        return r;
    }
    auto* c = reinterpret_cast<CursorMirror*>(&cursor);
    if (c->ip != s.rip || c->cfa != s.rsp || c->use_prev_instr != s.prev) {
        return r; // the mirror does not fit this libunwind
    }
    // Only rip, rsp and rbp are known: a rule that needs any other register must fail
    // rather than read the zeros in uc.
    for (int i = 0; i < 17; ++i) {
        if (i != kDwarfRbp && i != kDwarfRsp && i != kDwarfRip) {
            c->loc[i] = DwarfLoc{0, 0};
        }
    }
    FrameInfo init{};
    init.virtual_address = s.rip - s.prev;
    init.frame_type = kFrameOther;
    init.cfa_reg_rsp = -1;
    init.rbp_cfa_offset = -1;
    init.rsp_cfa_offset = -1;
    c->frame_info = init;
    c->stash_frames = 1;
    int ret = unw_step(&cursor);
    FrameInfo f = ret >= 0 ? c->frame_info : init;
    if (ret == 0) {
        f.last_frame = -1;
    }
    if (f.last_frame) {
        // Gtrace.c stops here too. Without unwind info that verdict came from a guess on
        // this rbp value, which another visit might not repeat: leave those to libunwind.
        unw_proc_info_t pi;
        if (unw_get_proc_info_by_ip(unw_local_addr_space, s.rip - s.prev, &pi, nullptr) == 0) {
            r.kind = kLast;
        }
        return r;
    }
    switch (f.frame_type) {
    case kFrameStandard:
        r.kind = kStandard;
        break;
    case kFrameAligned:
        r.kind = kAligned;
        break;
    case kFrameSigreturn:
        r.kind = kSigreturn;
        break;
    default:
        return r; // guessed from rbp, or not traceable: libunwind's slow path
    }
    r.cfa_off = static_cast<int32_t>(f.cfa_reg_offset);
    r.rbp_off = static_cast<int16_t>(f.rbp_cfa_offset);
    if (f.cfa_reg_rsp) {
        r.flags |= kRuleCfaRsp;
    }
    // The rule must reproduce the step libunwind just made from the same state.
    State next = s;
    uint64_t addr[3], val[3];
    uint8_t flags;
    applyRule(r, next, addr, val, flags);
    unw_word_t ip = 0, sp = 0, bp = 0;
    if (unw_get_reg(&cursor, UNW_REG_IP, &ip) != 0 || unw_get_reg(&cursor, UNW_REG_SP, &sp) != 0 ||
        unw_get_reg(&cursor, UNW_X86_64_RBP, &bp) != 0 || ip != next.rip || sp != next.rsp ||
        bp != next.rbp) {
        r.kind = kFallback;
    }
    return r;
}

// --- Per-thread memory. ---

constexpr uint32_t kRuleBits = 13;
constexpr uint32_t kRuleCount = 1u << kRuleBits;
constexpr uint32_t kRuleProbes = 16;
constexpr uint32_t kWindow = 640;            // frames remembered
constexpr uint32_t kScratch = kWindow + 320; // frames of one trace not yet in the window
constexpr uint32_t kReadsPerStep = 3;

enum class End : uint8_t { Stop, Truncated, Fallback };

template <uint32_t N> struct Frames {
    uint64_t rip[N];
    uint64_t rsp[N];
    uint64_t rbp[N];
    uint16_t rend[N]; // frame i's reads are [i ? rend[i-1] : 0, rend[i])
    uint8_t flags[N];
    uint64_t raddr[N * kReadsPerStep];
    uint64_t rval[N * kReadsPerStep];
};

// What a trace was asked for, besides the stack itself.
struct RequestKey {
    uint32_t max_stored, max_walked;
    uint64_t skip_lo, skip_hi, adjust;
    bool operator==(const RequestKey&) const = default;
};

RequestKey keyOf(const Request& r) {
    return {r.max_stored, r.max_walked, r.skip_lo, r.skip_hi, r.adjust};
}

constexpr uint32_t kKeptOutput = 256;
constexpr uint32_t kKeptChecks = 256;

// The last stack walked from one kind of call site (Request::window), and what that trace
// returned (when out_ok): a trace that starts at the same state and finds every word the
// frames read unchanged returns the same again, without re-deriving it.
struct Window {
    End end;
    uint32_t n; // frames
    // Frame n-1 (the innermost) again, beside the fields every trace reads: choosing a way
    // compares the live state with it, and w's arrays lie kilobytes apart (a cache line each).
    uint64_t first_rip, first_rsp, first_rbp;
    uint8_t first_flags;
    bool out_ok;
    uint32_t out_n;
    uint64_t serial; // of the result kept in out (Way::serial)
    RequestKey key;
    // The words that the last repeat (see walk) verified, innermost first, as (address,
    // value) pairs side by side, kept while the window stays as it is, so that the next
    // repeat goes straight to them.
    bool check_ok;
    uint32_t check_n;
    uint64_t check[2 * kKeptChecks];
    uint64_t out[kKeptOutput];
    Frames<kWindow> w; // outermost first
};

// Zero-filled by mmap; trivially constructible so creating it touches no page (a window
// touches its pages only when used).
struct Block {
    bool busy;
    bool inherited; // taken over from an exited thread (takeSpare)
    uint32_t rules_used;
    uint64_t traces, fallbacks, steps, reused, rule_lookups, verify_misses;
    uint64_t way_seeds;
    bool repeated;              // the last trace returned its window's kept output
    uint64_t serials;           // the last Window::serial given
    uint8_t last_way[kWindows]; // the way each kind of call site traced last
    // Each way's tag (the hint xor the stack pointer, chooseWay) and when it was last used
    // (0: never), per kind.
    uint64_t way_tag[kWindows][kWays];
    uint64_t way_used[kWindows][kWays];
    uint64_t way_clock;
    Rule rules[kRuleCount];           // shared: a rule depends on the ip alone
    Window windows[kWindows * kWays]; // kind k's ways at [k * kWays, (k + 1) * kWays)
    Frames<kScratch> sc;              // innermost first
};

Block* const kDead = reinterpret_cast<Block*>(uintptr_t{1});
thread_local Block* t_block __attribute__((tls_model("initial-exec"))) = nullptr;
pthread_key_t g_key;
pthread_once_t g_key_once = PTHREAD_ONCE_INIT;
bool g_key_ok = false;

// Blocks of exited threads, kept for the threads that come next. A fresh block costs its
// thread an mmap, an munmap and a page fault for every page its first stacks touch (rules
// are spread over the whole table): tens per thread, which a program of many short-lived
// threads pays on each (scripts/bench-threads.sh). A kept block keeps its rules, which
// depend on the ip alone (as the shared table below assumes too); its windows are emptied.
// The flag is only ever tried, never waited on: a thread that finds it taken maps or unmaps
// its own block as before, so no thread exit and no signal handler can wait on another.
constexpr size_t kSpareBlocks = 16;
std::atomic_flag g_spare_lock = ATOMIC_FLAG_INIT;
void* g_spare[kSpareBlocks];
size_t g_spare_count = 0;

bool keepSpare(void* p) {
    if (g_spare_lock.test_and_set(std::memory_order_acquire)) {
        return false;
    }
    const bool kept = g_spare_count < kSpareBlocks;
    if (kept) {
        g_spare[g_spare_count++] = p;
    }
    g_spare_lock.clear(std::memory_order_release);
    return kept;
}

Block* takeSpare() {
    if (g_spare_lock.test_and_set(std::memory_order_acquire)) {
        return nullptr;
    }
    void* p = g_spare_count > 0 ? g_spare[--g_spare_count] : nullptr;
    g_spare_lock.clear(std::memory_order_release);
    if (p == nullptr) {
        return nullptr;
    }
    auto* b = static_cast<Block*>(p);
    b->busy = false;
    b->inherited = true;
    b->repeated = false;
    b->traces = b->fallbacks = b->steps = b->reused = b->rule_lookups = b->verify_misses = 0;
    b->way_seeds = 0;
    std::memset(b->way_used, 0, sizeof b->way_used);
    for (Window& win : b->windows) {
        win.n = 0;
        win.out_ok = false;
        win.check_ok = false;
    }
    return b;
}

void releaseBlock(void* p) {
    // Later calls on this exiting thread (other TSD destructors) go to unw_backtrace.
    t_block = kDead;
    if (!keepSpare(p)) {
        munmap(p, sizeof(Block));
    }
}

Block* createBlock() {
    t_block = kDead; // until it succeeds
    pthread_once(&g_key_once, [] { g_key_ok = pthread_key_create(&g_key, releaseBlock) == 0; });
    if (!g_key_ok) {
        return nullptr;
    }
    if (Block* spare = takeSpare()) {
        if (pthread_setspecific(g_key, spare) != 0) {
            releaseBlock(spare);
            return nullptr;
        }
        t_block = spare;
        return t_block;
    }
    void* p =
        mmap(nullptr, sizeof(Block), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        return nullptr;
    }
    if (pthread_setspecific(g_key, p) != 0) {
        munmap(p, sizeof(Block));
        return nullptr;
    }
    t_block = new (p) Block;
    return t_block;
}

// --- Rules shared between threads. ---
//
// A thread's first stack would otherwise derive the rule of every one of its frames again
// through libunwind (a signal mask around its lock, and mincore, read and write probes of
// every address it reads, per frame): a program of many short-lived threads paid that on
// every thread (scripts/bench-threads.sh). A rule depends on the ip alone (as the top of
// this file says, and as each thread's own table already assumes for its lifetime), so one
// derived by any thread serves all. Insert-only: an entry, once published, never changes,
// so a reader needs no lock: its rule is written before its key is stored (release), and
// read after the key is loaded (acquire). A full table (or an unlucky cluster) publishes
// no more; threads then derive for themselves, as before.
constexpr uint32_t kSharedBits = 14;
constexpr uint32_t kSharedCount = 1u << kSharedBits;
constexpr uint64_t kSharedBusy = ~uint64_t{0}; // being written: a reader passes it by

struct SharedRule {
    std::atomic<uint64_t> key; // 0: empty; rip, and bit 63 for prev
    Rule rule;
};
SharedRule g_shared[kSharedCount];

uint64_t sharedKey(const State& s) {
    return s.rip | (s.prev ? uint64_t{1} << 63 : 0);
}

// The rule of `s` from the shared table, else derived here (counted in b.rule_lookups)
// and published.
Rule sharedRule(Block& b, const State& s) {
    const uint64_t key = sharedKey(s);
    const uint32_t home =
        static_cast<uint32_t>((key * 0x9e3779b97f4a7c15ull) >> (64 - kSharedBits));
    SharedRule* empty = nullptr;
    for (uint32_t i = 0; i < kRuleProbes; ++i) {
        SharedRule& e = g_shared[(home + i) & (kSharedCount - 1)];
        const uint64_t k = e.key.load(std::memory_order_acquire);
        if (k == key) {
            return e.rule;
        }
        if (k == 0) {
            empty = &e;
            break;
        }
    }
    ++b.rule_lookups;
    const Rule r = deriveRule(s);
    uint64_t expected = 0;
    if (empty &&
        empty->key.compare_exchange_strong(expected, kSharedBusy, std::memory_order_relaxed)) {
        empty->rule = r;
        empty->key.store(key, std::memory_order_release);
    }
    return r;
}

const Rule& ruleFor(Block& b, const State& s) {
    uint32_t home = static_cast<uint32_t>((s.rip * 0x9e3779b97f4a7c15ull) >> (64 - kRuleBits));
    uint8_t prev = s.prev ? kRulePrev : 0;
    for (uint32_t i = 0; i < kRuleProbes; ++i) {
        Rule& e = b.rules[(home + i) & (kRuleCount - 1)];
        if (e.rip == s.rip && (e.flags & kRulePrev) == prev) {
            return e;
        }
        if (e.rip == 0) {
            if (b.rules_used >= kRuleCount / 4 * 3) {
                break;
            }
            ++b.rules_used;
            e = sharedRule(b, s);
            return e;
        }
    }
    // Full, or an unlucky cluster: start over rather than probe further.
    std::memset(b.rules, 0, sizeof b.rules);
    b.rules_used = 1;
    Rule& e = b.rules[home];
    e = sharedRule(b, s);
    return e;
}

// --- Output. ---

struct Sink {
    uint64_t* out;
    uint32_t n;
    uint32_t cap;
    uint32_t walked_left;
    uintptr_t lo;
    uintptr_t span;
    uint64_t adjust;
    bool skipping;

    bool inSkip(uint64_t ip) const { return ip - lo < span; }
    bool full() const { return n == cap || walked_left == 0; }
    // Returns whether nothing more is wanted.
    bool push(uint64_t ip) {
        --walked_left;
        if (skipping) {
            if (inSkip(ip)) {
                return walked_left == 0;
            }
            skipping = false;
        }
        out[n++] = ip - adjust;
        return full();
    }
    // ips[from], ips[from-1], ..., ips[to].
    void pushDescending(const uint64_t* ips, int from, int to) {
        int i = from;
        while (i >= to && skipping) {
            if (push(ips[i--])) {
                return;
            }
        }
        if (i < to) {
            return;
        }
        uint32_t count =
            std::min(static_cast<uint32_t>(i - to + 1), std::min(cap - n, walked_left));
        uint64_t* o = out + n;
        const uint64_t* src = ips + i;
        for (uint32_t t = 0; t < count; ++t) {
            o[t] = src[-static_cast<ptrdiff_t>(t)] - adjust;
        }
        n += count;
        walked_left -= count;
    }
};

// --- The walk. ---

// Keeps the words [lo, hi) of the window for repeatsCheckedWindow(), innermost first.
void keepChecks(Window& win, uint32_t lo, uint32_t hi) {
    win.check_ok = hi - lo <= kKeptChecks;
    if (!win.check_ok) {
        return;
    }
    uint64_t* c = win.check;
    for (uint32_t r = hi; r > lo; --r) {
        *c++ = win.w.raddr[r - 1];
        *c++ = win.w.rval[r - 1];
    }
    win.check_n = hi - lo;
}

void keepFirst(Window& win) {
    if (win.n != 0) {
        const uint32_t j = win.n - 1;
        win.first_rip = win.w.rip[j];
        win.first_rsp = win.w.rsp[j];
        win.first_rbp = win.w.rbp[j];
        win.first_flags = win.w.flags[j];
    }
}

// Window := C[0..m] followed by the scratch frames, outermost first. `end` applies when
// the scratch frames reach the outermost position (m < 0).
void commit(Block& b, Window& win, int m, uint32_t sn, End end) {
    uint32_t total = static_cast<uint32_t>(m + 1) + sn;
    if (total > kWindow) {
        win.n = 0;
        return;
    }
    Frames<kWindow>& w = win.w;
    const Frames<kScratch>& sc = b.sc;
    if (m < 0) {
        win.end = end;
    }
    uint32_t rbase = m >= 0 ? w.rend[m] : 0;
    bool needs = m >= 0 ? (w.flags[m] & kNeedsRbp) != 0 : win.end != End::Stop;
    for (uint32_t t = 0; t < sn; ++t) {
        uint32_t src = sn - 1 - t;
        uint32_t dst = static_cast<uint32_t>(m + 1) + t;
        w.rip[dst] = sc.rip[src];
        w.rsp[dst] = sc.rsp[src];
        w.rbp[dst] = sc.rbp[src];
        uint8_t f = sc.flags[src];
        needs = (f & kUsesRbp) || (!(f & kDefinesRbp) && needs);
        w.flags[dst] = static_cast<uint8_t>((f & ~kNeedsRbp) | (needs ? kNeedsRbp : 0));
        for (uint32_t r = src ? sc.rend[src - 1] : 0; r < sc.rend[src]; ++r) {
            w.raddr[rbase] = sc.raddr[r];
            w.rval[rbase] = sc.rval[r];
            ++rbase;
        }
        w.rend[dst] = static_cast<uint16_t>(rbase);
    }
    win.n = total;
    keepFirst(win);
}

int walk(Block& b, Window& win, const Request& req, State s) {
    Sink sink{req.out,        0,
              req.max_stored, req.max_walked,
              req.skip_lo,    req.skip_hi - req.skip_lo,
              req.adjust,     req.skip_hi > req.skip_lo};
    Frames<kWindow>& w = win.w;
    Frames<kScratch>& sc = b.sc;
    uint32_t sn = 0;  // scratch frames
    uint32_t srn = 0; // scratch reads
    int limit = static_cast<int>(win.n);
    int si = limit - 1; // match candidate; window rsp grows towards index 0
    ++b.traces;

    for (;;) {
        // Is s a state of the window?
        while (si >= 0 && w.rsp[si] < s.rsp) {
            --si;
        }
        if (si >= 0 && w.rsp[si] == s.rsp && w.rip[si] == s.rip &&
            (w.flags[si] & kPrev) == (s.prev ? kPrev : 0) &&
            (!(w.flags[si] & kNeedsRbp) || w.rbp[si] == s.rbp)) {
            const int j = si;
            // The previous trace of this window started at this very state (nothing stepped,
            // the window's innermost frame), for the same request.
            const bool repeat = sn == 0 && j == limit - 1 && win.out_ok && win.key == keyOf(req);
            // The window frames this trace can use: C[j-1] down to C[j-need].
            uint32_t need = 0;
            {
                uint32_t left = sink.walked_left;
                int idx = j - 1;
                if (sink.skipping) {
                    while (idx >= 0 && left > 0 && sink.inSkip(w.rip[idx])) {
                        --idx;
                        --left;
                        ++need;
                    }
                }
                need += std::min(left, sink.cap - sink.n);
            }
            const bool to_end = need >= static_cast<uint32_t>(j);
            const int lo = to_end ? 0 : j - static_cast<int>(need) + 1; // steps j..lo checked
            const uint32_t r_lo = lo > 0 ? w.rend[lo - 1] : 0;
            uint32_t r = w.rend[j];
            while (r > r_lo && load(w.raddr[r - 1]) == w.rval[r - 1]) {
                --r;
            }
            // The result depends on how the window ends only when the frames wanted reach
            // past its outermost one (need > j): a stack cut at the depth limit, traced
            // again with the same limit, needs exactly the window's frames.
            if (repeat && r == r_lo && (need <= static_cast<uint32_t>(j) || win.end == End::Stop)) {
                // Every word those frames read is as it was: so is the result.
                std::memcpy(req.out, win.out, win.out_n * sizeof(uint64_t));
                b.reused += static_cast<uint64_t>(j);
                b.repeated = true;
                keepChecks(win, r_lo, w.rend[j]);
                return static_cast<int>(win.out_n);
            }
            int i; // C[j..i] proven live; when r > r_lo, C[i]'s step read something else
            if (r == r_lo) {
                i = to_end ? 0 : j - static_cast<int>(need);
            } else {
                i = j;
                while (i > 0 && w.rend[i - 1] > r - 1) {
                    --i;
                }
                ++b.verify_misses;
            }
            sink.pushDescending(w.rip, j - 1, i);
            b.reused += static_cast<uint64_t>(j - i);
            if (r == r_lo) {
                if (sink.full() || !to_end || win.end == End::Stop) {
                    commit(b, win, j, sn, End::Stop);
                    return static_cast<int>(sink.n);
                }
                if (win.end == End::Fallback) {
                    commit(b, win, j, sn, End::Stop);
                    ++b.fallbacks;
                    return -1;
                }
                // The window was cut at an earlier depth limit: go on stepping from C[0].
            } else if (sink.full()) {
                commit(b, win, j, sn, End::Stop);
                return static_cast<int>(sink.n);
            }
            // Resume stepping from C[i]. Frames j..i+1 join the scratch frames with their live
            // rbp. A recorded rbp may be stale wherever the old outer chain did not need it,
            // and the new one may: the live value is the matched state's until a step
            // restores rbp, then the (verified) word that step read.
            if (sn + static_cast<uint32_t>(j - i) >= kScratch) {
                win.n = 0;
                ++b.fallbacks;
                return -1;
            }
            uint64_t rbp = s.rbp;
            for (int t = j; t > i; --t) {
                sc.rip[sn] = w.rip[t];
                sc.rsp[sn] = w.rsp[t];
                sc.rbp[sn] = rbp;
                sc.flags[sn] = w.flags[t];
                for (uint32_t q = t ? w.rend[t - 1] : 0; q < w.rend[t]; ++q) {
                    sc.raddr[srn] = w.raddr[q];
                    sc.rval[srn] = w.rval[q];
                    ++srn;
                }
                sc.rend[sn++] = static_cast<uint16_t>(srn);
                if (w.flags[t] & kDefinesRbp) {
                    rbp = w.rval[w.rend[t] - 1];
                }
            }
            s = State{w.rip[i], w.rsp[i], rbp, (w.flags[i] & kPrev) ? 1u : 0u};
            limit = i;
            si = i - 1;
        }

        // Step s.
        if (sn + 2 > kScratch) {
            win.n = 0;
            ++b.fallbacks;
            return -1;
        }
        const Rule& rule = ruleFor(b, s);
        ++b.steps;
        sc.rip[sn] = s.rip;
        sc.rsp[sn] = s.rsp;
        sc.rbp[sn] = s.rbp;
        const uint8_t prev = s.prev ? kPrev : 0;
        if (rule.kind == kLast || rule.kind == kFallback) {
            sc.flags[sn] = prev;
            sc.rend[sn++] = static_cast<uint16_t>(srn);
            if (rule.kind == kLast) {
                commit(b, win, -1, sn, End::Stop);
                return static_cast<int>(sink.n);
            }
            commit(b, win, -1, sn, End::Fallback);
            ++b.fallbacks;
            return -1;
        }
        uint8_t flags;
        State next = s;
        srn += applyRule(rule, next, &sc.raddr[srn], &sc.rval[srn], flags);
        sc.flags[sn] = flags | prev;
        sc.rend[sn++] = static_cast<uint16_t>(srn);
        if (next.rip < kMinIp) {
            commit(b, win, -1, sn, End::Stop);
            return static_cast<int>(sink.n);
        }
        if (sink.push(next.rip)) {
            sc.rip[sn] = next.rip;
            sc.rsp[sn] = next.rsp;
            sc.rbp[sn] = next.rbp;
            sc.flags[sn] = next.prev ? kPrev : 0;
            sc.rend[sn++] = static_cast<uint16_t>(srn);
            commit(b, win, -1, sn, End::Truncated);
            return static_cast<int>(sink.n);
        }
        s = next;
    }
}

// A way taken for a new stack starts from another way's (dst := src's frames, not its
// output; see chooseWay).
void seedWay(Window& dst, const Window& src) {
    const uint32_t n = src.n;
    const uint32_t reads = n ? src.w.rend[n - 1] : 0;
    std::memcpy(dst.w.rip, src.w.rip, n * sizeof(uint64_t));
    std::memcpy(dst.w.rsp, src.w.rsp, n * sizeof(uint64_t));
    std::memcpy(dst.w.rbp, src.w.rbp, n * sizeof(uint64_t));
    std::memcpy(dst.w.rend, src.w.rend, n * sizeof(uint16_t));
    std::memcpy(dst.w.flags, src.w.flags, n * sizeof(uint8_t));
    std::memcpy(dst.w.raddr, src.w.raddr, reads * sizeof(uint64_t));
    std::memcpy(dst.w.rval, src.w.rval, reads * sizeof(uint64_t));
    dst.end = src.end;
    dst.n = n;
    keepFirst(dst);
    dst.out_ok = false;
    dst.check_ok = false;
}

// Whether the window's innermost frame is the state `s` (walk()'s match).
bool startsAt(const Window& win, const State& s) {
    return win.n != 0 && win.first_rsp == s.rsp && win.first_rip == s.rip &&
           (win.first_flags & kPrev) == (s.prev ? kPrev : 0) &&
           (!(win.first_flags & kNeedsRbp) || win.first_rbp == s.rbp);
}

// walk()'s repeat, the short way: the window is as the last repeat left it (check_ok), the
// trace starts at the window's innermost state with the same request, and every word the
// last repeat verified is unchanged.
bool repeatsCheckedWindow(const Window& win, const Request& req, const State& s) {
    if (!win.check_ok || !win.out_ok || !startsAt(win, s) || !(win.key == keyOf(req))) {
        return false;
    }
    // Innermost first, stopping at the first difference, as walk() reads them: an address
    // is read only once every word before it matched (so it is still one the walk would
    // read). Four at a time, to spend the loop's overhead on fewer of them.
    const uint64_t* c = win.check;
    const uint64_t* end = c + 2 * win.check_n;
    for (; end - c >= 8; c += 8) {
        if (load(c[0]) != c[1] || load(c[2]) != c[3] || load(c[4]) != c[5] || load(c[6]) != c[7]) {
            return false;
        }
    }
    for (; c != end; c += 2) {
        if (load(c[0]) != c[1]) {
            return false;
        }
    }
    return true;
}

// Whether the window starts at `s` and the live stack still holds every word its frames
// were stepped with: then a walk through it steps nothing. Innermost first, stopping at the
// first difference, as walk() reads them.
bool chainMatches(const Window& win, const State& s) {
    if (!startsAt(win, s)) {
        return false;
    }
    const Frames<kWindow>& w = win.w;
    for (uint32_t r = w.rend[win.n - 1]; r > 0; --r) {
        if (load(w.raddr[r - 1]) != w.rval[r - 1]) {
            return false;
        }
    }
    return true;
}

struct WayChoice {
    uint32_t way;
    bool repeat; // repeatsCheckedWindow() holds for it
};

// Which of `kind`'s ways the trace walks. Ways are tagged with what tells the stacks of one
// kind apart before the walk: equal stacks start at equal stack pointers, and usually
// differ in it from other stacks of the kind; where they do not (operators of one depth),
// the caller's hint tells them apart. Where neither does (two call sites in one function),
// several ways share a tag and their stacks tell them apart: the way whose whole stack is
// still live is taken. A stack no way holds gets the way used least recently, started from
// the tag's most recent stack (else the kind's last), so that its first walk steps only the
// frames by which it differs from that one, as it would with one window per kind.
WayChoice chooseWay(Block& b, uint32_t kind, const Request& req, const State& start) {
    const uint64_t tag = req.hint ^ start.rsp;
    Window* ways = &b.windows[kind * kWays];
    uint64_t* tags = b.way_tag[kind];
    uint64_t* used = b.way_used[kind];
    int live = -1, recent = -1;
    uint32_t victim = 0;
    for (uint32_t i = 0; i < kWays; ++i) {
        if (used[i] != 0 && tags[i] == tag) {
            if (repeatsCheckedWindow(ways[i], req, start)) {
                used[i] = ++b.way_clock;
                return {i, true};
            }
            if (live < 0 && chainMatches(ways[i], start)) {
                live = static_cast<int>(i);
            }
            if (recent < 0 || used[i] > used[recent]) {
                recent = static_cast<int>(i);
            }
        }
        if (used[i] < used[victim]) {
            victim = i;
        }
    }
    if (live >= 0) {
        used[live] = ++b.way_clock;
        return {static_cast<uint32_t>(live), false};
    }
    const uint32_t from = recent >= 0 ? static_cast<uint32_t>(recent) : b.last_way[kind];
    if (from != victim && ways[from].n != 0) {
        seedWay(ways[victim], ways[from]);
        ++b.way_seeds;
    }
    tags[victim] = tag;
    used[victim] = ++b.way_clock;
    return {victim, false};
}

// The caller's registers as they are at the call: the return address (so the caller's
// frame is described like any other frame above a call), rsp after the return, rbp.
// noipa: the compiler must not assume anything about what the asm body touches.
__attribute__((naked, noipa)) void callerRegs(uint64_t* /*regs*/) {
    asm("movq (%rsp), %rax\n\t"
        "movq %rax, 0(%rdi)\n\t"
        "leaq 8(%rsp), %rax\n\t"
        "movq %rax, 8(%rdi)\n\t"
        "movq %rbp, 16(%rdi)\n\t"
        "ret");
}

} // namespace

int trace(const Request& req) {
    if (req.way) {
        *req.way = Way{};
    }
    if (req.max_stored == 0 || req.max_walked == 0) {
        return 0;
    }
    Block* b = t_block;
    if (b == nullptr) {
        b = createBlock();
    }
    // busy: a signal handler interrupted a trace on this thread and traces again.
    if (b == nullptr || b == kDead || b->busy) {
        return -1;
    }
    b->busy = true;
    std::atomic_signal_fence(std::memory_order_seq_cst);
    uint64_t regs[3];
    callerRegs(regs);
    // Read back one word at a time: the asm stored them so, and a wider load of two of them
    // (which the compiler would otherwise emit to build the State) stalls on store forwarding.
    const volatile uint64_t* words = regs;
    const State start{words[0], words[1], words[2], 1};
    const uint32_t kind = req.window % kWindows;
    const WayChoice choice = chooseWay(*b, kind, req, start);
    const uint32_t way = choice.way;
    b->last_way[kind] = static_cast<uint8_t>(way);
    Window& win = b->windows[kind * kWays + way];
    b->repeated = false;
    int n;
    if (choice.repeat) {
        // What walk() would conclude, with the matching and bounds it found last time.
        std::memcpy(req.out, win.out, win.out_n * sizeof(uint64_t));
        b->repeated = true;
        ++b->traces;
        b->reused += win.n - 1;
        n = static_cast<int>(win.out_n);
    } else {
        n = walk(*b, win, req, start);
    }
    if (!b->repeated) {
        // Keep the result for the next trace of this window (see Window).
        win.serial = ++b->serials;
        win.check_ok = false;
        win.out_ok = n >= 0 && static_cast<uint32_t>(n) <= kKeptOutput;
        if (win.out_ok) {
            std::memcpy(win.out, req.out, static_cast<size_t>(n) * sizeof(uint64_t));
            win.out_n = static_cast<uint32_t>(n);
            win.key = keyOf(req);
        }
    }
    if (req.way && n >= 0) {
        *req.way = Way{static_cast<uint8_t>(way), win.serial};
    }
    std::atomic_signal_fence(std::memory_order_seq_cst);
    b->busy = false;
    return n;
}

Stats threadStats() {
    Stats st;
    Block* b = t_block;
    if (b != nullptr && b != kDead) {
        st.traces = b->traces;
        st.fallbacks = b->fallbacks;
        st.steps = b->steps;
        st.reused = b->reused;
        st.rule_lookups = b->rule_lookups;
        st.verify_misses = b->verify_misses;
        st.way_seeds = b->way_seeds;
        st.inherited = b->inherited;
    }
    return st;
}

void resetThreadCache() {
    Block* b = t_block;
    if (b != nullptr && b != kDead) {
        for (Window& win : b->windows) {
            win.n = 0;
            win.out_ok = false;
            win.check_ok = false;
        }
        b->rules_used = 0;
        std::memset(b->rules, 0, sizeof b->rules);
    }
}

namespace {
// Replays the steps of one window with its recorded words; writes what is wrong to msg.
void checkWindow(Block& b, const Window& win, char* msg, size_t size) {
    const Frames<kWindow>& w = win.w;
    if (win.n != 0 && !startsAt(win, State{w.rip[win.n - 1], w.rsp[win.n - 1], w.rbp[win.n - 1],
                                           (w.flags[win.n - 1] & kPrev) ? 1u : 0u})) {
        std::snprintf(msg, size, "the kept innermost frame is not frame %u", win.n - 1);
        return;
    }
    for (uint32_t i = 0; i < win.n && !msg[0]; ++i) {
        const uint8_t f = w.flags[i];
        const bool below = i > 0 ? (w.flags[i - 1] & kNeedsRbp) != 0 : win.end != End::Stop;
        const bool needs = (f & kUsesRbp) || (!(f & kDefinesRbp) && below);
        if (needs != ((f & kNeedsRbp) != 0)) {
            std::snprintf(msg, size, "frame %u: rbp need flag %d, expected %d", i,
                          (f & kNeedsRbp) != 0, needs);
            break;
        }
        const uint32_t rb = i > 0 ? w.rend[i - 1] : 0;
        if (i == 0 || w.rend[i] == rb) {
            continue; // the last frame, or one not stepped
        }
        State st{w.rip[i], w.rsp[i], w.rbp[i], (f & kPrev) ? 1u : 0u};
        const Rule& r = ruleFor(b, st);
        // Replay with the recorded words instead of memory.
        uint64_t addr[3], val[3];
        uint8_t flags = 0;
        State next = st;
        uint32_t k = 0;
        if (r.kind == kStandard || r.kind == kAligned || r.kind == kSigreturn) {
            const bool on_rsp = r.flags & kRuleCfaRsp;
            uint64_t base = (on_rsp ? st.rsp : st.rbp) + static_cast<int64_t>(r.cfa_off);
            uint64_t rec[3] = {w.rval[rb], w.rval[rb + 1], w.rval[rb + 2]};
            if (r.kind == kStandard) {
                k = r.rbp_off != -1 ? 2 : 1;
                addr[0] = base - 8;
                addr[1] = base + static_cast<int64_t>(r.rbp_off);
                next = {rec[0], base, k == 2 ? rec[1] : st.rbp, 1};
                flags = (on_rsp ? 0 : kUsesRbp) | (k == 2 ? kDefinesRbp : 0);
            } else if (r.kind == kAligned) {
                k = 3;
                addr[0] = base;
                addr[1] = rec[0] - 8;
                addr[2] = st.rbp;
                next = {rec[1], rec[0], rec[2], 1};
                flags = kUsesRbp | kDefinesRbp;
            } else {
                k = 3;
                uint64_t uc = st.rsp + static_cast<int64_t>(r.cfa_off);
                addr[0] = uc + kUcRip;
                addr[1] = uc + kUcRsp;
                addr[2] = uc + kUcRbp;
                next = {rec[0], rec[1], rec[2], 0};
                flags = kDefinesRbp;
            }
            for (uint32_t q = 0; q < k; ++q) {
                val[q] = rec[q];
            }
        }
        (void)val;
        bool ok = k == w.rend[i] - rb && flags == (f & (kUsesRbp | kDefinesRbp));
        for (uint32_t q = 0; ok && q < k; ++q) {
            ok = addr[q] == w.raddr[rb + q];
        }
        const bool next_needs = (w.flags[i - 1] & kNeedsRbp) != 0;
        if (!ok || next.rip != w.rip[i - 1] || next.rsp != w.rsp[i - 1] ||
            next.prev != ((w.flags[i - 1] & kPrev) ? 1u : 0u) ||
            (next_needs && next.rbp != w.rbp[i - 1])) {
            std::snprintf(msg, size,
                          "frame %u (of %u): step gives ip %lx sp %lx bp %lx, frame %u has "
                          "%lx %lx %lx (rbp needed %d, reads ok %d)",
                          i, win.n, next.rip, next.rsp, next.rbp, i - 1, w.rip[i - 1], w.rsp[i - 1],
                          w.rbp[i - 1], next_needs, ok);
        }
    }
}
} // namespace

const char* checkThreadCache() {
    static thread_local char msg[256];
    Block* b = t_block;
    if (b == nullptr || b == kDead) {
        return "";
    }
    b->busy = true;
    msg[0] = 0;
    for (const Window& win : b->windows) {
        checkWindow(*b, win, msg, sizeof msg);
    }
    b->busy = false;
    return msg;
}

} // namespace gmt::preload::unwind

#else // LLVM's libunwind, or another version of the non-GNU one: no cache.

namespace gmt::preload::unwind {
int trace(const Request&) {
    return -1;
}
Stats threadStats() {
    return {};
}
void resetThreadCache() {}
const char* checkThreadCache() {
    return "";
}
} // namespace gmt::preload::unwind

#endif
