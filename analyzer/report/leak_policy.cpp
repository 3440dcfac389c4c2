#include "report/leak_policy.h"

#include "base/saturating.h"

#include <algorithm>
#include <set>
#include <tuple>
#include <utility>

namespace gmt::analyzer {

using format::Kind;

const CachingAllocator* LeakPolicy::heldBy(Kind kind, const Stack& stack) const {
    if (!caching_allocators || kind == Kind::Block) {
        return nullptr;
    }
    return caching_allocators->match(stack);
}

namespace {

// Whether a trace's group of `kind` by stack `stack_id` could be held at all: without that,
// its stack need not be symbolized to judge it (stack 0: none was recorded).
bool mayBeHeld(const LeakPolicy& policy, Kind kind, uint64_t stack_id) {
    return policy.caching_allocators && !policy.caching_allocators->empty() &&
           kind != Kind::Block && stack_id != 0;
}

// What one leak group (or a listed site standing for one) adds to the figures of the
// class it is in, and takes from them when it leaves.
struct Contribution {
    size_t process = 0;
    Kind kind = Kind::Device;
    bool teardown = false;
    uint64_t bytes = 0;
    uint64_t allocations = 0;
    uint64_t uncertain_bytes = 0;
    uint64_t uncertain_allocations = 0;
    std::map<int64_t, uint64_t> bytes_by_device; // empty where not known
    std::optional<size_t> phase;                 // unset where not known
};

// The report's figures, moved by signed contributions. Taking more than a figure holds
// means the saved report does not add up: refused, never clamped.
class Figures {
  public:
    explicit Figures(Report& r) : r_(r) {}

    void leaked(const Contribution& c, int sign) {
        move(r_.summary.leaked_bytes, c.bytes, sign, "summary.leaked_bytes");
        move(r_.summary.leaked_allocations, c.allocations, sign, "summary.leaked_allocations");
        move(r_.summary.uncertain_leaked_bytes, c.uncertain_bytes, sign,
             "summary.uncertain_leaked_bytes");
        if (c.teardown) {
            move(r_.summary.teardown_released_bytes, c.bytes, sign,
                 "summary.teardown_released_bytes");
        }
        if (c.process < r_.processes.size()) {
            move(r_.processes[c.process].leaked_bytes, c.bytes, sign, "processes[].leaked_bytes");
        }
        for (KindReport& k : r_.kinds) {
            if (k.kind == c.kind) {
                move(k.leaked_bytes, c.bytes, sign, "kinds[].leaked_bytes");
                move(k.leaked_allocations, c.allocations, sign, "kinds[].leaked_allocations");
            }
        }
        for (const auto& [ordinal, bytes] : c.bytes_by_device) {
            for (DeviceReport& d : r_.devices) {
                if (d.ordinal == ordinal) {
                    move(d.leaked_bytes, bytes, sign, "devices[].leaked_bytes");
                }
            }
        }
        if (c.phase && *c.phase < r_.phases.size()) {
            PhaseReport& p = r_.phases[*c.phase];
            move(p.leaked_bytes, c.bytes, sign, "phases[].leaked_bytes");
            move(p.leaked_allocations, c.allocations, sign, "phases[].leaked_allocations");
        }
    }

    void groups(uint64_t n, int sign) {
        move(r_.summary.leak_groups, n, sign, "summary.leak_groups");
    }

    // In the leak scope, not suppressed: one site, or `sites` unlisted ones together.
    void scope(const LeakSite& s, int sign, uint64_t sites = 1) {
        LeakScope& scope = r_.leak_scope;
        move(scope.bytes, s.bytes, sign, "leak_scope.bytes");
        move(scope.allocations, s.allocations, sign, "leak_scope.allocations");
        move(scope.uncertain_bytes, s.uncertain_bytes, sign, "leak_scope.uncertain_bytes");
        move(scope.uncertain_allocations, s.uncertain_allocations, sign,
             "leak_scope.uncertain_allocations");
        move(scope.sites, sites, sign, "leak_scope.sites");
    }

    void suppressed(const LeakSite& s) {
        addSaturating(r_.leak_scope.suppressed_bytes, s.bytes);
        r_.leak_scope.suppressed_allocations += s.allocations;
        ++r_.leak_scope.suppressed_sites;
    }

    // One site of what an allocator holds, in its process's HeldReport (made when missing).
    void held(uint64_t pid, const std::string& allocator, HeldSite site, int sign) {
        heldTotals(site.bytes, site.allocations, sign);
        auto h =
            std::find_if(r_.held_at_exit.begin(), r_.held_at_exit.end(), [&](const HeldReport& x) {
                return x.pid == pid && x.allocator == allocator;
            });
        if (h == r_.held_at_exit.end()) {
            h = r_.held_at_exit.insert(r_.held_at_exit.end(),
                                       HeldReport{pid, allocator, 0, 0, 0, {}});
        }
        move(h->bytes, site.bytes, sign, "held_at_exit[].bytes");
        move(h->allocations, site.allocations, sign, "held_at_exit[].allocations");
        auto same = std::find_if(h->top_sites.begin(), h->top_sites.end(), [&](const HeldSite& x) {
            return x.stack_id == site.stack_id && x.kind == site.kind && x.api == site.api;
        });
        if (sign > 0 && same != h->top_sites.end()) {
            addSaturating(same->bytes,
                          site.bytes); // teardown flags apart as leaks, one site when held
            same->allocations += site.allocations;
            return;
        }
        move(h->sites, 1, sign, "held_at_exit[].sites");
        if (sign > 0) {
            h->top_sites.push_back(std::move(site));
        } else if (same != h->top_sites.end()) {
            h->top_sites.erase(same);
        }
    }

    void heldTotals(uint64_t bytes, uint64_t allocations, int sign) {
        move(r_.summary.held_at_exit_bytes, bytes, sign, "summary.held_at_exit_bytes");
        move(r_.summary.held_at_exit_allocations, allocations, sign,
             "summary.held_at_exit_allocations");
    }

  private:
    // A saturated figure (base/saturating.h) stays saturated: it says "at least", and
    // what it held beyond the limit is not known to take away.
    static void move(uint64_t& figure, uint64_t amount, int sign, const char* name) {
        if (sign > 0) {
            addSaturating(figure, amount);
            return;
        }
        if (figure == kSaturated) {
            return;
        }
        if (figure < amount) {
            throw LeakPolicyError(std::string("its ") + name +
                                  " is less than its listed sites add up to");
        }
        figure -= amount;
    }

    Report& r_;
};

// Where a report lists the process of `pid` (its first one).
size_t processIndex(const Report& r, uint64_t pid) {
    for (size_t i = 0; i < r.processes.size(); ++i) {
        if (r.processes[i].pid == pid) {
            return i;
        }
    }
    return r.processes.size();
}

// Leak sites largest first (ties: more allocations, then the process's place in the report,
// the stack, kind, API and teardown flag), as both paths list them.
bool leakBefore(const Report& r, const LeakSite& a, const LeakSite& b) {
    if (a.bytes != b.bytes) {
        return a.bytes > b.bytes;
    }
    if (a.allocations != b.allocations) {
        return a.allocations > b.allocations;
    }
    const size_t pa = processIndex(r, a.pid);
    const size_t pb = processIndex(r, b.pid);
    return std::tie(pa, a.stack_id, a.kind, a.api, a.released_by_teardown) <
           std::tie(pb, b.stack_id, b.kind, b.api, b.released_by_teardown);
}

// An allocator's sites largest first, the first `top` kept.
void orderHeldSites(HeldReport& h, size_t top) {
    std::sort(h.top_sites.begin(), h.top_sites.end(), [](const HeldSite& a, const HeldSite& b) {
        return a.bytes != b.bytes ? a.bytes > b.bytes : a.stack_id < b.stack_id;
    });
    if (h.top_sites.size() > top) {
        h.top_sites.resize(top);
    }
}

// The allocators by process and name, then largest first.
void orderHeld(Report& r) {
    std::stable_sort(r.held_at_exit.begin(), r.held_at_exit.end(),
                     [&r](const HeldReport& a, const HeldReport& b) {
                         const size_t pa = processIndex(r, a.pid);
                         const size_t pb = processIndex(r, b.pid);
                         return std::tie(pa, a.allocator) < std::tie(pb, b.allocator);
                     });
    std::stable_sort(r.held_at_exit.begin(), r.held_at_exit.end(),
                     [](const HeldReport& a, const HeldReport& b) { return a.bytes > b.bytes; });
}

// The leak sites in scope, in order: each suppressed or counted, the first `top` not
// suppressed listed. `site(i, with_stack)` makes the i-th; its stack is needed only where it
// may be listed or rules must match it, and is kept only where it is listed. A suppressed
// site leaves the leaked figures: `unleak(i, site)` takes back what it added to them.
template <typename MakeSite, typename Unleak>
void listLeaks(Report& r, size_t n, const LeakPolicy& policy, MakeSite&& site, Unleak&& unleak) {
    Figures figures(r);
    r.leaks.clear();
    for (size_t i = 0; i < n; ++i) {
        const bool listed = r.leaks.size() < policy.top;
        LeakSite s = site(i, listed || policy.suppress);
        if (policy.suppress && policy.suppress(s)) {
            figures.suppressed(s);
            unleak(i, s);
            continue;
        }
        figures.scope(s, +1);
        if (listed) {
            r.leaks.push_back(std::move(s));
        }
    }
}

// A saved site's figures: its device is known where the report has one device (pinned
// host memory is on none, as the recorder writes it).
Contribution savedContribution(const Report& r, const LeakSite& s) {
    Contribution c{processIndex(r, s.pid),
                   s.kind,
                   s.released_by_teardown,
                   s.bytes,
                   s.allocations,
                   s.uncertain_bytes,
                   s.uncertain_allocations,
                   {},
                   {}};
    if (s.kind != Kind::HostPinned && r.devices.size() == 1) {
        c.bytes_by_device[r.devices[0].ordinal] = s.bytes;
    }
    return c;
}

// A held site as a leak: one site, not released by teardown, nothing uncertain (a held site
// keeps none of these apart).
LeakSite leakOf(uint64_t pid, const HeldSite& h) {
    return LeakSite{h.bytes, h.allocations, h.kind, h.api, h.stack, false, pid, h.stack_id, 0, 0};
}

HeldSite heldOf(const LeakSite& s) {
    return HeldSite{s.bytes, s.allocations, s.kind, s.api, s.stack, s.stack_id};
}

// Held memory of a report made for a phase is of every phase: it cannot become the phase's
// leaks.
void requireWholeRun(const Report& r) {
    if (r.leak_scope.phase) {
        throw LeakPolicyError("it lists the leaks of phase " + *r.leak_scope.phase +
                              ", and cannot tell which memory held at exit was allocated in it; "
                              "give the trace instead");
    }
}

} // namespace

bool keptAtExit(Kind kind, bool interpreter_finalized) {
    return kind == Kind::Block && interpreter_finalized;
}

std::string siteApi(Kind kind, format::Api api) {
    return kind == Kind::Block ? "PyTorch caching allocator" : std::string(format::apiName(api));
}

void judgeTraceLeaks(Report& r, const std::vector<LeakGroupFigures>& groups,
                     const LeakPolicy& policy, const StackOf& stack_of) {
    Figures figures(r);
    std::map<std::pair<size_t, uint64_t>, const CachingAllocator*> holders;
    // A leak site: the groups of one process, stack, kind, API and teardown flag.
    using SiteKey = std::tuple<size_t, uint64_t, Kind, format::Api, bool>;
    std::set<SiteKey> leaked_groups;
    struct ScopeSite {
        LeakGroupFigures figures; // its groups in scope, summed over phases
        // What those groups added to the leaked figures (phases apart), for a suppression
        // to take back.
        std::vector<Contribution> added;
        bool also_out_of_scope = false; // groups of other phases stay leaked
    };
    std::map<SiteKey, ScopeSite> in_scope;
    // Per process and allocator (by name), its sites by (stack, kind, API).
    std::map<std::pair<size_t, std::string>,
             std::map<std::tuple<uint64_t, Kind, format::Api>, HeldSite>>
        held;
    for (const LeakGroupFigures& g : groups) {
        const CachingAllocator* holder = nullptr;
        if (mayBeHeld(policy, g.kind, g.stack_id)) {
            auto [it, inserted] = holders.try_emplace(std::pair(g.process, g.stack_id), nullptr);
            if (inserted) {
                it->second = policy.heldBy(g.kind, stack_of(g.process, g.stack_id));
            }
            holder = it->second;
        }
        if (holder) {
            HeldSite& s =
                held[std::pair(g.process, holder->name)][std::tuple(g.stack_id, g.kind, g.api)];
            addSaturating(s.bytes, g.bytes);
            s.allocations += g.allocations;
            s.kind = g.kind;
            s.api = siteApi(g.kind, g.api);
            s.stack_id = g.stack_id;
            continue;
        }
        Contribution c{g.process,
                       g.kind,
                       g.released_by_teardown,
                       g.bytes,
                       g.allocations,
                       g.uncertain_bytes,
                       g.uncertain_allocations,
                       {},
                       g.phase};
        if (g.bytes_by_device) {
            c.bytes_by_device.insert(g.bytes_by_device->begin(), g.bytes_by_device->end());
        }
        figures.leaked(c, +1);
        SiteKey key(g.process, g.stack_id, g.kind, g.api, g.released_by_teardown);
        leaked_groups.insert(key);
        if (!g.in_scope) {
            in_scope[key].also_out_of_scope = true; // listed only if a group is in scope
            continue;
        }
        auto [it, inserted] = in_scope.try_emplace(key);
        ScopeSite& site = it->second;
        if (site.added.empty()) {
            site.figures = g;
        } else {
            addSaturating(site.figures.bytes, g.bytes);
            site.figures.allocations += g.allocations;
            addSaturating(site.figures.uncertain_bytes, g.uncertain_bytes);
            site.figures.uncertain_allocations += g.uncertain_allocations;
        }
        site.added.push_back(std::move(c));
    }
    figures.groups(leaked_groups.size(), +1);

    std::vector<const ScopeSite*> sites;
    for (const auto& [key, site] : in_scope) {
        if (!site.added.empty()) {
            sites.push_back(&site);
        }
    }
    auto leakSite = [&r](const LeakGroupFigures& g) {
        LeakSite s;
        s.bytes = g.bytes;
        s.allocations = g.allocations;
        s.kind = g.kind;
        s.api = siteApi(g.kind, g.api);
        s.released_by_teardown = g.released_by_teardown;
        s.pid = r.processes[g.process].pid;
        s.stack_id = g.stack_id;
        s.uncertain_bytes = g.uncertain_bytes;
        s.uncertain_allocations = g.uncertain_allocations;
        return s;
    };
    std::stable_sort(sites.begin(), sites.end(), [&](const ScopeSite* x, const ScopeSite* y) {
        const LeakGroupFigures& a = x->figures;
        const LeakGroupFigures& b = y->figures;
        if (a.bytes != b.bytes || a.allocations != b.allocations) {
            return a.bytes != b.bytes ? a.bytes > b.bytes : a.allocations > b.allocations;
        }
        return leakBefore(r, leakSite(a), leakSite(b));
    });
    listLeaks(
        r, sites.size(), policy,
        [&](size_t i, bool with_stack) {
            LeakSite s = leakSite(sites[i]->figures);
            if (with_stack) {
                s.stack = stack_of(sites[i]->figures.process, s.stack_id);
            }
            return s;
        },
        [&](size_t i, const LeakSite&) {
            for (const Contribution& c : sites[i]->added) {
                figures.leaked(c, -1);
            }
            if (!sites[i]->also_out_of_scope) {
                figures.groups(1, -1);
            }
        });

    for (auto& [owner, by_site] : held) {
        HeldReport h{r.processes[owner.first].pid, owner.second, 0, 0, 0, {}};
        for (auto& [key, site] : by_site) {
            addSaturating(h.bytes, site.bytes);
            h.allocations += site.allocations;
            ++h.sites;
            h.top_sites.push_back(std::move(site));
        }
        orderHeldSites(h, policy.top);
        for (HeldSite& site : h.top_sites) {
            site.stack = stack_of(owner.first, site.stack_id);
        }
        figures.heldTotals(h.bytes, h.allocations, +1);
        r.held_at_exit.push_back(std::move(h));
    }
    orderHeld(r);
}

void judgeSavedLeaks(Report& r, const LeakPolicy& policy) {
    Figures figures(r);
    // Every listed site leaves the class it was saved in, and is then judged anew.
    std::vector<LeakSite> sites;
    for (LeakSite& s : r.leaks) {
        figures.scope(s, -1);
        sites.push_back(std::move(s));
    }
    r.leaks.clear();
    std::vector<LeakSite> leaked;
    for (LeakSite& s : sites) {
        const CachingAllocator* holder = policy.heldBy(s.kind, s.stack);
        if (!holder) {
            leaked.push_back(std::move(s));
            continue;
        }
        requireWholeRun(r);
        figures.leaked(savedContribution(r, s), -1);
        figures.groups(1, -1);
        figures.held(s.pid, holder->name, heldOf(s), +1);
    }
    const size_t saved_held = r.held_at_exit.size();
    for (size_t i = 0; i < saved_held; ++i) {
        const std::vector<HeldSite> listed = r.held_at_exit[i].top_sites;
        const uint64_t pid = r.held_at_exit[i].pid;
        const std::string allocator = r.held_at_exit[i].allocator;
        for (const HeldSite& site : listed) {
            const CachingAllocator* holder = policy.heldBy(site.kind, site.stack);
            if (holder && holder->name == allocator) {
                continue;
            }
            figures.held(pid, allocator, site, -1);
            if (holder) {
                figures.held(pid, holder->name, site, +1);
                continue;
            }
            requireWholeRun(r);
            LeakSite s = leakOf(pid, site);
            figures.leaked(savedContribution(r, s), +1);
            figures.groups(1, +1);
            leaked.push_back(std::move(s));
        }
    }
    if (!policy.caching_allocators) {
        // Nothing is held: what lies past the listed held sites is leaked too, of kinds and
        // devices the report does not say.
        for (HeldReport& h : r.held_at_exit) {
            if (h.bytes == 0 && h.sites == 0) {
                continue;
            }
            requireWholeRun(r);
            Contribution c;
            c.process = processIndex(r, h.pid);
            c.kind = Kind::None;
            c.bytes = h.bytes;
            c.allocations = h.allocations;
            figures.leaked(c, +1);
            figures.groups(h.sites, +1);
            LeakSite unlisted;
            unlisted.bytes = h.bytes;
            unlisted.allocations = h.allocations;
            figures.scope(unlisted, +1, h.sites);
            figures.heldTotals(h.bytes, h.allocations, -1);
            h.bytes = h.allocations = h.sites = 0;
        }
    }
    std::erase_if(r.held_at_exit, [](const HeldReport& h) { return h.sites == 0 && h.bytes == 0; });
    for (const HeldReport& h : r.held_at_exit) {
        if (h.sites < h.top_sites.size() || (h.sites == 0) != (h.bytes == 0)) {
            throw LeakPolicyError("its held_at_exit figures do not add up with its sites");
        }
    }
    for (HeldReport& h : r.held_at_exit) {
        orderHeldSites(h, policy.top);
    }
    orderHeld(r);
    std::stable_sort(leaked.begin(), leaked.end(),
                     [&r](const LeakSite& a, const LeakSite& b) { return leakBefore(r, a, b); });
    listLeaks(
        r, leaked.size(), policy, [&](size_t i, bool) { return std::move(leaked[i]); },
        [&](size_t, const LeakSite& s) {
            figures.leaked(savedContribution(r, s), -1);
            figures.groups(1, -1);
        });
}

} // namespace gmt::analyzer
