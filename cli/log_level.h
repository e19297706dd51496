// Diagnostics go to stderr through spdlog as "nrt-inspect: <level>: <message>". The level is
// warn by default, NRT_LOG_LEVEL (trace, debug, info, warn, error, critical, off) replaces the
// default, and the command line (-v, -vv, -vvv, or -q) wins over both.
#pragma once

namespace nrt::cli {

// `verbosity`: how many times -v was given; `quiet`: -q (errors only).
void configure_logging(int verbosity, bool quiet);

}  // namespace nrt::cli
