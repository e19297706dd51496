// Temporary files that must not outlive the process when it is ended by SIGINT, SIGTERM or
// SIGHUP (an interrupted `convert` would otherwise leave a partial output of any size beside
// its target). The handler only unlinks the registered paths, then lets the signal take its
// previous course (the default: the process ends; a handler installed before: it runs).
// Signals ignored when the first file is registered (nohup) stay ignored.
#pragma once

#include <string>

namespace nrt {

// Registers `path` for removal on those signals; returns a handle for unregister, or -1 when no
// slot is free (the file is then only removed by its owner).
int register_temporary_file(const std::string& path);
// The file was renamed or removed by its owner: forget it.
void unregister_temporary_file(int handle);

}  // namespace nrt
