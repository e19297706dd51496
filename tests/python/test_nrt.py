"""The nrt package, installed from its wheel into a fresh venv (tests/python/python_package_test.sh).

Every call of the package against the committed data: testdata/*.nrt, the torch corpus
(testdata/torch, outputs equal torch's saved ones) and the CLI's own answers (NRT_INSPECT).
"""

import io
import json
import os
import subprocess
import threading

import numpy as np
import pytest

import nrt

REPO = os.environ["NRT_REPO"]
NRT_INSPECT = os.environ["NRT_INSPECT"]
# The custom op kernels of the corpus's custom_op_enums (tests/executor/enum_probe_kernel_library.cc).
KERNEL_LIBRARY = os.environ["NRT_TEST_KERNEL_LIBRARY"]
TESTDATA = os.path.join(REPO, "testdata")
CORPUS = os.path.join(TESTDATA, "torch")
MLP = os.path.join(TESTDATA, "mlp.nrt")
TORCH_MLP = os.path.join(CORPUS, "mlp")

# Corpus programs the Python package does not run in one process, with the reason (the C++ tests
# run them: tests/executor/torch_corpus_test, torch_collectives_test).
NOT_IN_ONE_PROCESS = {
    "collectives": "functional collectives over a 2-rank group: they run under mpirun",
}
TOLERANCE = {"float32": 1e-5, "float64": 1e-7, "float16": 1e-3, "bfloat16": 1e-2}


def inspect(*args):
    return subprocess.run([NRT_INSPECT, *args], capture_output=True, text=True, check=False)


def manifest(model):
    with open(os.path.join(CORPUS, model, "manifest.json"), encoding="utf-8") as f:
        return json.load(f)


def saved_array(model, entry):
    array = np.load(os.path.join(CORPUS, model, entry["file"]))
    if entry.get("stored_as") == "uint16_bits" or (entry["dtype"] == "bfloat16" and array.dtype == np.uint16):
        # bfloat16 is stored as its bits; nrt gives bfloat16 outputs as float32 (exact).
        array = (array.astype(np.uint32) << 16).view(np.float32)
    return array


def corpus_inputs(runner, model):
    entries = manifest(model)["inputs"]
    names = [i["name"] for i in runner.inputs]
    assert len(names) == len(entries), model
    return {name: np.load(os.path.join(CORPUS, model, e["file"])) for name, e in zip(names, entries)}


def assert_close(got, expected, dtype, what):
    tol = TOLERANCE.get(dtype, 0)
    assert got.shape == expected.shape, what
    if tol == 0:
        np.testing.assert_array_equal(got, expected, err_msg=what)
    else:
        np.testing.assert_allclose(got, expected, rtol=tol, atol=tol, err_msg=what)


CORPUS_MODELS = sorted(
    m for m in os.listdir(CORPUS) if os.path.exists(os.path.join(CORPUS, m, "model.pt2")) and m not in NOT_IN_ONE_PROCESS
)


# --- load, verify, errors --------------------------------------------------------------------


def test_load_every_format_the_cli_opens(tmp_path):
    for path in [MLP, MLP + ".json", os.path.join(TORCH_MLP, "model.pt2")]:
        program = nrt.load(path)
        assert isinstance(program, nrt.Program)
        assert program.entry_points, path
    # os.PathLike and bytes are sources too.
    import pathlib

    assert nrt.load(pathlib.Path(MLP)).hash().full == nrt.load(MLP).hash().full
    with open(os.path.join(TORCH_MLP, "model.pt2"), "rb") as f:
        from_bytes = nrt.load(f.read())
    assert from_bytes.hash().full == nrt.load(os.path.join(TORCH_MLP, "model.pt2")).hash().full


def test_a_corrupt_file_is_an_nrt_error_with_its_code(tmp_path):
    data = bytearray(open(MLP, "rb").read())
    data[40:48] = b"\xff" * 8
    bad = tmp_path / "bad.nrt"
    bad.write_bytes(bytes(data))
    with pytest.raises(nrt.Error) as caught:
        nrt.load(bad)
    assert caught.value.code.startswith("NRT-E")
    assert caught.value.code in str(caught.value)
    cli = inspect("verify", str(bad))
    assert cli.returncode == 1
    assert caught.value.code in cli.stdout, "the package and the CLI name the same code"


def test_a_truncated_file_and_a_missing_one_name_their_codes(tmp_path):
    truncated = tmp_path / "short.nrt"
    truncated.write_bytes(open(MLP, "rb").read()[:10])
    with pytest.raises(nrt.Error) as caught:
        nrt.load(truncated)
    assert caught.value.code == "NRT-E201"
    assert caught.value.name == "FileTooSmall"
    with pytest.raises(nrt.Error) as missing:
        nrt.load(tmp_path / "absent.nrt")
    assert missing.value.code == "NRT-E101"
    with pytest.raises(nrt.Error) as from_bytes:
        nrt.load(b"\x00" * 8)
    assert from_bytes.value.code == "NRT-E201"


def test_bad_python_arguments_are_type_and_value_errors():
    with pytest.raises(TypeError):
        nrt.load(12)
    with pytest.raises(ValueError):
        nrt.load(MLP, verify="sometimes")
    with pytest.raises(ValueError):
        nrt.load(MLP, format="onnx")
    with pytest.raises(ValueError):
        nrt.load(MLP).hash(algo="md5")
    with pytest.raises(ValueError):
        nrt.Runner(nrt.load(MLP), threads=0)
    with pytest.raises(TypeError):
        nrt.from_exported_program("not an exported program")


def test_verify_and_deep_verify():
    program = nrt.load(MLP, verify="deep")
    assert program.verify() is None
    assert program.verify(deep=True) is None


def test_deep_verification_finds_a_changed_weight_byte(tmp_path):
    data = bytearray(open(MLP, "rb").read())
    data[-1] ^= 0xFF  # the last weight byte
    changed = tmp_path / "changed.nrt"
    changed.write_bytes(bytes(data))
    program = nrt.load(changed)  # structure is intact
    with pytest.raises(nrt.Error) as caught:
        program.verify(deep=True)
    assert caught.value.code == "NRT-E505"
    with pytest.raises(nrt.Error):
        nrt.load(changed, verify="deep")


# --- hash, info, print, save, diff, convert ---------------------------------------------------


@pytest.mark.parametrize("path", [MLP, os.path.join(TESTDATA, "dtensor.nrt"), os.path.join(TORCH_MLP, "model.pt2")])
def test_hash_equals_the_cli(path):
    cli = json.loads(inspect("hash", path, "--json").stdout)
    digests = nrt.load(path).hash()
    assert (digests.structure, digests.weights, digests.full) == (cli["structure"], cli["weights"], cli["full"])
    sha = nrt.load(path).hash(algo="sha256")
    cli_sha = json.loads(inspect("hash", path, "--json", "--algo", "sha256").stdout)
    assert sha.full == cli_sha["full"] and sha.algorithm == "sha256"


def test_info_is_the_cli_json_object():
    for path in [MLP, os.path.join(TESTDATA, "dtensor.nrt")]:
        assert nrt.load(path).info() == json.loads(inspect("info", path, "--json").stdout)


def test_print_and_text_are_the_cli_text():
    program = nrt.load(MLP)
    cli = inspect("print", MLP).stdout
    assert program.text() == cli
    out = io.StringIO()
    program.print(file=out)
    assert out.getvalue() == cli
    graph = program.entry_points[0]
    assert program.text(graph=graph) == inspect("print", MLP, "--graph", graph).stdout
    with pytest.raises(ValueError):
        program.text(graph="no such graph")


def test_save_round_trips_and_is_atomic(tmp_path):
    program = nrt.load(os.path.join(TORCH_MLP, "model.pt2"))
    out = tmp_path / "model.nrt"
    program.save(out)
    assert nrt.load(out).hash().full == program.hash().full
    program.save(tmp_path / "model.nrt.json")
    assert nrt.load(tmp_path / "model.nrt.json").hash().full == program.hash().full
    # A save that cannot happen leaves nothing behind.
    with pytest.raises(nrt.Error):
        program.save(tmp_path / "missing_dir" / "x.nrt")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.nrt", "model.nrt.json"]


def test_diff_same_and_different_as_the_cli(tmp_path):
    same = nrt.diff(MLP, MLP + ".json")
    assert same.same and not same
    other = os.path.join(TESTDATA, "dtensor.nrt")
    d = nrt.diff(nrt.load(MLP), other)
    assert not d.same and bool(d)
    cli = inspect("diff", MLP, other, "--json")
    assert cli.returncode == 1
    assert d.as_dict() == json.loads(cli.stdout)


def test_convert_writes_what_the_cli_writes(tmp_path):
    src = os.path.join(TORCH_MLP, "model.pt2")
    nrt.convert(src, tmp_path / "py.nrt")
    assert inspect("convert", src, "-o", str(tmp_path / "cli.nrt")).returncode == 0
    assert (tmp_path / "py.nrt").read_bytes() == (tmp_path / "cli.nrt").read_bytes()
    with pytest.raises(nrt.Error) as caught:
        nrt.convert(src, tmp_path / "out.unknown")
    assert caught.value.code == "NRT-E103"


def test_shard_equals_the_cli(tmp_path):
    src = os.path.join(TORCH_MLP, "model.pt2")
    plan = {"mesh": {"shape": [2]}, "modules": {"fc1": "colwise", "fc2": "rowwise"}}
    plan_path = tmp_path / "plan.json"
    plan_path.write_text(json.dumps(plan))
    sharded = nrt.shard(nrt.load(src), plan)
    assert inspect("shard", src, "--plan", str(plan_path), "-o", str(tmp_path / "cli.nrt")).returncode == 0
    assert sharded.hash().full == nrt.load(tmp_path / "cli.nrt").hash().full
    assert nrt.shard(nrt.load(src), str(plan_path)).hash().full == sharded.hash().full
    assert sharded.info()["meshes"][0]["shape"] == [2]
    sharded.save(tmp_path / "py.nrt")
    assert nrt.load(tmp_path / "py.nrt").hash().full == sharded.hash().full
    with pytest.raises(nrt.Error) as caught:
        nrt.shard(nrt.load(src), {"mesh": {"shape": [2]}, "modules": {"nope": "colwise"}})
    assert caught.value.code == "NRT-E104"
    assert isinstance(caught.value, ValueError)


# --- running ---------------------------------------------------------------------------------


@pytest.mark.parametrize("model", CORPUS_MODELS)
def test_corpus_runs_and_matches_torch(model):
    # custom_op_enums's custom op gets its kernel from a kernel library, as with nrt-run --kernel-library.
    libraries = [KERNEL_LIBRARY] if model == "custom_op_enums" else []
    runner = nrt.Runner(nrt.load(os.path.join(CORPUS, model, "model.pt2")), kernel_libraries=libraries)
    m = manifest(model)
    outputs = runner(**corpus_inputs(runner, model))
    if not m["outputs"]:
        assert outputs, model  # exported without eager outputs: it runs
        return
    assert len(outputs) == len(m["outputs"]), model
    for (name, got), entry in zip(outputs.items(), m["outputs"]):
        assert isinstance(got, np.ndarray), f"{model} output {name}"
        # "exact": torch's bits are the contract (the stateless random ops).
        dtype = "exact" if m.get("exact") else entry["dtype"]
        assert_close(got, saved_array(model, entry), dtype, f"{model} output {name}")


def test_the_seed_decides_every_draw():
    program = nrt.load(os.path.join(CORPUS, "seeded_draws", "model.pt2"))
    inputs = corpus_inputs(nrt.Runner(program), "seeded_draws")
    first = nrt.Runner(program, seed=1)(**inputs)
    again = nrt.Runner(program, seed=1)(**inputs)
    other = nrt.Runner(program, seed=2)(**inputs)
    default = nrt.Runner(program)(**inputs)
    zero = nrt.Runner(program, seed=0)(**inputs)
    for name in first:
        np.testing.assert_array_equal(first[name], again[name], err_msg=name)
        np.testing.assert_array_equal(default[name], zero[name], err_msg=name)
        assert not np.array_equal(first[name], other[name]), f"seed 2 drew seed 1's {name}"
    with pytest.raises((TypeError, OverflowError)):
        nrt.Runner(program, seed=-1)


def test_kernel_libraries_load_once_per_process_and_bad_ones_are_errors(tmp_path):
    program = nrt.load(os.path.join(CORPUS, "custom_op_enums", "model.pt2"))
    for _ in range(2):  # a second Runner with the same library does not register its kernels twice
        nrt.Runner(program, kernel_libraries=[KERNEL_LIBRARY])
    with pytest.raises(nrt.Error) as missing:
        nrt.Runner(program, kernel_libraries=[str(tmp_path / "absent.so")])
    assert missing.value.code == "NRT-E101"
    not_a_library = tmp_path / "text.so"
    not_a_library.write_text("not an ELF file")
    with pytest.raises(nrt.Error) as bad:
        nrt.Runner(program, kernel_libraries=[str(not_a_library)])
    assert bad.value.code.startswith("NRT-E")


def test_a_cuda_runner_matches_the_cpu_or_says_what_is_missing():
    program = nrt.load(os.path.join(TORCH_MLP, "model.pt2"))
    cpu = nrt.Runner(program)
    x = corpus_inputs(cpu, "mlp")
    try:
        gpu = nrt.Runner(program, device="cuda")
    except nrt.Error as missing:  # no GPU or driver here (CI): the stable code, not a crash
        assert missing.code == "NRT-E1014", str(missing)
    else:
        expected, actual = cpu(**x), gpu(**x)
        for name in expected:
            np.testing.assert_allclose(actual[name], expected[name], rtol=1e-4, atol=1e-5)
    with pytest.raises(nrt.Error) as bad:
        nrt.Runner(program, device="tpu")
    assert bad.value.code == "NRT-E104"
    assert isinstance(bad.value, ValueError)


def test_outputs_own_their_memory():
    runner = nrt.Runner(nrt.load(os.path.join(TORCH_MLP, "model.pt2")))
    x = corpus_inputs(runner, "mlp")
    first = runner(**x)
    second = runner(**x)
    name = next(iter(first))
    # Each call's outputs are their own: the next call does not overwrite them, and they are writable.
    assert first[name] is not second[name]
    kept = second[name].copy()
    first[name][...] = 0
    third = runner(**x)
    np.testing.assert_array_equal(second[name], kept)
    np.testing.assert_array_equal(third[name], kept)
    assert first[name].flags.writeable and first[name].flags.c_contiguous
    assert not np.shares_memory(second[name], third[name])


def test_a_program_that_mutates_its_input_leaves_the_callers_array_alone():
    # The default IR keeps in-place ops on the user input (x.add_): nrt reads the array in place
    # and never writes into it; every run gives torch's outputs again.
    model = "inplace_buffer_view__default"
    runner = nrt.Runner(nrt.load(os.path.join(CORPUS, model, "model.pt2")))
    x = corpus_inputs(runner, model)
    before = {k: v.copy() for k, v in x.items()}
    for _ in range(3):
        outputs = runner(**x)
        for (name, got), entry in zip(outputs.items(), manifest(model)["outputs"]):
            assert_close(got, saved_array(model, entry), entry["dtype"], f"{model} output {name}")
        for k in x:
            np.testing.assert_array_equal(x[k], before[k])


def test_a_strided_input_is_copied_and_gives_the_same_answer():
    runner = nrt.Runner(nrt.load(os.path.join(TORCH_MLP, "model.pt2")))
    x = corpus_inputs(runner, "mlp")
    name = next(iter(x))
    wide = np.zeros((x[name].shape[0], x[name].shape[1] * 2), dtype=x[name].dtype)
    wide[:, ::2] = x[name]
    strided = wide[:, ::2]
    assert not strided.flags.c_contiguous
    expected = runner(**x)
    got = runner(**{name: strided})
    for key in expected:
        np.testing.assert_array_equal(got[key], expected[key])


class DlpackOnly:
    """An object that offers its array only through __dlpack__ (as a torch tensor does)."""

    def __init__(self, array):
        self._array = array

    def __dlpack__(self, *args, **kwargs):
        return self._array.__dlpack__(*args, **kwargs)

    def __dlpack_device__(self):
        return self._array.__dlpack_device__()


def test_dlpack_inputs():
    runner = nrt.Runner(nrt.load(os.path.join(TORCH_MLP, "model.pt2")))
    x = corpus_inputs(runner, "mlp")
    expected = saved_array("mlp", manifest("mlp")["outputs"][0])
    got = runner(**{k: DlpackOnly(v) for k, v in x.items()})
    assert_close(next(iter(got.values())), expected, "float32", "through DLPack")


def test_bad_inputs_are_python_errors():
    runner = nrt.Runner(nrt.load(os.path.join(TORCH_MLP, "model.pt2")))
    x = corpus_inputs(runner, "mlp")
    name = next(iter(x))
    with pytest.raises(TypeError, match="dtype"):
        runner(**{name: x[name].astype(np.float64)})
    with pytest.raises(TypeError, match="NumPy array"):
        runner(**{name: x[name].tolist()})
    with pytest.raises(ValueError, match="unknown input"):
        runner(**x, extra=x[name])
    with pytest.raises(ValueError, match="missing input"):
        runner()
    with pytest.raises(nrt.Error) as caught:
        runner(**{name: np.zeros((3, 3), dtype=x[name].dtype)})
    assert caught.value.code.startswith("NRT-E")


def test_eight_threads_run_one_runner_at_once():
    runner = nrt.Runner(nrt.load(os.path.join(CORPUS, "transformer_block", "model.pt2")), threads=8)
    x = corpus_inputs(runner, "transformer_block")
    expected = runner(**x)
    results, errors = [], []
    barrier = threading.Barrier(8)

    def work(seed):
        try:
            barrier.wait()
            for _ in range(20):
                results.append(runner(**x))
        except Exception as e:  # noqa: BLE001 - collected for the assertion below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert len(results) == 160
    for result in results:
        for key in expected:
            np.testing.assert_array_equal(result[key], expected[key])


def test_the_gil_is_released_while_a_graph_runs():
    runner = nrt.Runner(nrt.load(os.path.join(CORPUS, "transformer_block", "model.pt2")))
    x = corpus_inputs(runner, "transformer_block")
    ticks = []
    stop = threading.Event()

    def ticker():
        while not stop.is_set():
            ticks.append(1)

    t = threading.Thread(target=ticker)
    t.start()
    try:
        for _ in range(50):
            runner(**x)
    finally:
        stop.set()
        t.join()
    assert len(ticks) > 50, "another Python thread ran while graphs ran"


def test_help_shows_docstrings_and_stubs_ship():
    assert "Open a program" in nrt.load.__doc__
    assert "GIL" in nrt.Runner.__doc__
    package_dir = os.path.dirname(nrt.__file__)
    assert os.path.exists(os.path.join(package_dir, "__init__.pyi"))
    assert os.path.exists(os.path.join(package_dir, "py.typed"))
