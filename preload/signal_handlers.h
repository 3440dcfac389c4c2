// Fatal signals: end the trace (drain the ring, write the trailer naming the signal) and
// then let whatever would have happened happen: the previous handler, or the default
// action. Installed when the first trace is created, never at load time, so a program
// that never records anything keeps its dispositions untouched.
#pragma once

namespace gmt::preload {

void installSignalHandlers();

} // namespace gmt::preload
