"""The nrt package's build: a PEP 517 backend (pyproject.toml) and the wheel writer of
scripts/build_wheel.sh.

The extension module is the Bazel target //python:_nrt.so, compiled against the headers of the
Python that builds the wheel (the repository rule third_party/python reads NRT_PYTHON, which this
backend sets to its own interpreter; a venv's interpreter has its base's headers, so the build
stays cached). The wheel holds python/nrt/ and that module renamed with the
interpreter's extension suffix; it links the Debian libraries scripts/setup.sh installs (OpenBLAS,
spdlog, fmt, libzip, Open MPI, ...), so it is tagged for this platform (linux_x86_64), not manylinux.

    python3 python/build_backend/nrt_build.py DIST_DIR     # writes DIST_DIR/nrt-<version>-<tags>.whl
"""

import base64
import hashlib
import os
import re
import subprocess
import sys
import sysconfig
import tarfile
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PACKAGE_DIR = os.path.join(ROOT, "python", "nrt")
PACKAGE_FILES = ["__init__.py", "__init__.pyi", "_torch_export.py", "py.typed"]
EXTENSION_TARGET = "//python:_nrt.so"


def version():
    with open(os.path.join(PACKAGE_DIR, "__init__.py"), encoding="utf-8") as f:
        match = re.search(r'^__version__ = "([^"]+)"$', f.read(), re.MULTILINE)
    if not match:
        raise RuntimeError("python/nrt/__init__.py has no __version__ line")
    return match.group(1)


def wheel_tag():
    interpreter = f"cp{sys.version_info[0]}{sys.version_info[1]}"
    platform = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    return f"{interpreter}-{interpreter}-{platform}"


def bazel_environment():
    """The environment Bazel runs in: this interpreter as NRT_PYTHON (third_party/python reads it),
    and PATH without pip's build-isolation folders. Bazel's actions see PATH, so a PATH holding
    pip's random temporary folders would make every action new and rebuild everything."""
    env = dict(os.environ)
    env["NRT_PYTHON"] = sys.executable
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep) if "pip-build-env-" not in p)
    return env


def build_extension():
    """Builds the module with Bazel for this interpreter; returns the path of the .so."""
    env = bazel_environment()
    subprocess.run(["bazel", "build", "--noshow_progress", EXTENSION_TARGET], cwd=ROOT, env=env, check=True,
                   stdout=sys.stderr)
    bazel_bin = subprocess.run(["bazel", "info", "bazel-bin"], cwd=ROOT, env=env, check=True, capture_output=True,
                               text=True).stdout.strip()
    return os.path.join(bazel_bin, "python", "_nrt.so")


def metadata():
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    return (
        "Metadata-Version: 2.1\n"
        "Name: nrt\n"
        f"Version: {version()}\n"
        "Summary: Verified PyTorch-exported programs: load, verify, hash, diff, convert, shard and run\n"
        "Requires-Python: >=3.9\n"
        "Requires-Dist: numpy\n"
        "Description-Content-Type: text/markdown\n"
        "\n" + readme
    )


def record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def write_wheel(dist_dir, extension_path):
    os.makedirs(dist_dir, exist_ok=True)
    name = f"nrt-{version()}-{wheel_tag()}.whl"
    info = f"nrt-{version()}.dist-info"
    entries = []
    for file in PACKAGE_FILES:
        with open(os.path.join(PACKAGE_DIR, file), "rb") as f:
            entries.append((f"nrt/{file}", f.read()))
    with open(extension_path, "rb") as f:
        entries.append((f"nrt/_nrt{sysconfig.get_config_var('EXT_SUFFIX')}", f.read()))
    entries.append((f"{info}/METADATA", metadata().encode()))
    wheel = f"Wheel-Version: 1.0\nGenerator: nrt_build\nRoot-Is-Purelib: false\nTag: {wheel_tag()}\n"
    entries.append((f"{info}/WHEEL", wheel.encode()))
    entries.append((f"{info}/top_level.txt", b"nrt\n"))
    record = "\n".join([record_line(n, d) for n, d in entries] + [f"{info}/RECORD,,"]) + "\n"
    entries.append((f"{info}/RECORD", record.encode()))
    # Written beside the target, then renamed: a failed build never leaves a partial wheel.
    path = os.path.join(dist_dir, name)
    partial = path + ".partial"
    with zipfile.ZipFile(partial, "w", compression=zipfile.ZIP_DEFLATED) as wheel_zip:
        for entry_name, data in entries:
            info_entry = zipfile.ZipInfo(entry_name, date_time=(2026, 1, 1, 0, 0, 0))
            info_entry.external_attr = (0o755 if entry_name.endswith(".so") else 0o644) << 16
            info_entry.compress_type = zipfile.ZIP_DEFLATED
            wheel_zip.writestr(info_entry, data)
    os.replace(partial, path)
    return name


# --- PEP 517 hooks ------------------------------------------------------------------------------


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    return write_wheel(wheel_directory, build_extension())


def build_sdist(sdist_directory, config_settings=None):
    """The tracked files of the checkout, as nrt-<version>.tar.gz."""
    files = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, check=True, capture_output=True
    ).stdout.decode().split("\0")
    base = f"nrt-{version()}"
    name = f"{base}.tar.gz"
    os.makedirs(sdist_directory, exist_ok=True)
    with tarfile.open(os.path.join(sdist_directory, name), "w:gz") as tar:
        for file in filter(None, files):
            tar.add(os.path.join(ROOT, file), arcname=f"{base}/{file}", recursive=False)
    return name


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: nrt_build.py DIST_DIR")
    print(os.path.join(sys.argv[1], build_wheel(sys.argv[1])))
