// Diagnostics of both tools go to stderr through spdlog as "<tool>: <level>: <message>". The
// level is warn by default, NRT_LOG_LEVEL (trace, debug, info, warn, error, critical, off)
// replaces the default (any other value is reported and ignored, the same way by both tools),
// and the command line (-v, -vv, -vvv, or -q) wins over both.
#pragma once

namespace nrt::cli {

// `tool`: the logger's name ("nrt-inspect", "nrt-run"); `verbosity`: how many times -v was
// given; `quiet`: -q (errors only).
void configure_logging(const char* tool, int verbosity, bool quiet);

}  // namespace nrt::cli
