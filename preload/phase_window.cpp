#include "phase_window.h"

namespace gmt::preload::phase_window {

namespace {

struct Window {
    enum class State : uint8_t { None, Pushed, Popped };
    State state = State::None;
    uint64_t end = 0;     // Pushed: the position after the push record
    uint64_t dropped = 0; // Pushed: the drop count before it
    PoppedPhase popped;   // Popped
};

thread_local Window t_window __attribute__((tls_model("initial-exec")));

} // namespace

void pushed(bool recorded, uint64_t end, uint64_t dropped_before) {
    t_window = {};
    if (recorded) {
        t_window.state = Window::State::Pushed;
        t_window.end = end;
        t_window.dropped = dropped_before;
    }
}

void popped(bool recorded, uint64_t first, uint64_t dropped_after) {
    Window& w = t_window;
    // A pop closes the window only right after a push: after a nested push and pop, the
    // nested pop closed the nested window, and this one is left unknown.
    if (!recorded || w.state != Window::State::Pushed || first < w.end) {
        w = {};
        return;
    }
    w.popped.slots = first - w.end;
    w.popped.dropped = dropped_after - w.dropped;
    w.state = Window::State::Popped;
}

bool lastPopped(PoppedPhase& out) {
    if (t_window.state != Window::State::Popped) {
        return false;
    }
    out = t_window.popped;
    return true;
}

void reset() {
    t_window = {};
}

} // namespace gmt::preload::phase_window
