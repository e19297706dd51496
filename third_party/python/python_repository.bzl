"""The C headers of the Python that nrt's extension module (//python:_nrt.so) is built for.

The interpreter is NRT_PYTHON (default /usr/bin/python3, Debian's, whose headers python3-dev
installs); the wheel build sets it to the interpreter running it. @python//:headers is its
include directory.
"""

def _python_repository_impl(ctx):
    python = ctx.os.environ.get("NRT_PYTHON", "/usr/bin/python3")
    result = ctx.execute([python, "-c", "import sysconfig; print(sysconfig.get_paths()['include'])"])
    if result.return_code != 0:
        fail("cannot ask %s for its include directory: %s" % (python, result.stderr))
    include = result.stdout.strip()
    if not ctx.path(include + "/Python.h").exists:
        fail("%s has no Python.h: install python3-dev (scripts/setup.sh does)" % include)
    ctx.symlink(include, "include")
    ctx.file("BUILD", """package(default_visibility = ["//visibility:public"])

cc_library(
    name = "headers",
    hdrs = glob(["include/**/*.h"]),
    includes = ["include"],
)
""")

python_repository = repository_rule(
    implementation = _python_repository_impl,
    environ = ["NRT_PYTHON"],
    local = True,
)
