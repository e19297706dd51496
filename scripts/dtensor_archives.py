"""Per-rank torch.export archives of DTensor programs, made on a real gloo group on 127.0.0.1.

torch 2.15 exports a model whose parameters are DTensors used through `.to_local()` (hand-written
tensor parallelism): each rank saves its own archive, every DTensor parameter pickled
(`use_pickle`) with its placements, mesh and local shard. `scripts/torch_corpus.py --dtensor`
writes, per case, `testdata/torch/<case>/model_rank<r>.pt2`, `input_0.npy`, `output_0.npy` (torch's
answer, the same on every rank; also as `expected/<output name>.npy` for `nrt-run --expect`) and
`manifest.json`.
"""
import json
import os
import socket

CASES = {
    # name: (mesh shape, mesh dim names)
    "dtensor_mlp": ((2,), ("tp",)),
    "dtensor_mlp_2d": ((2, 2), ("dp", "tp")),
}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def build_model(mesh, dim_names):
    """An MLP in Megatron's layout on the `tp` dim: w1/b1 Shard(0) (colwise), w2 Shard(1) (rowwise),
    b2 Replicate, the rowwise product summed by one all_reduce over tp's group. On a 2-D mesh every
    parameter is also Replicate over `dp`."""
    import torch
    from torch.distributed.tensor import Replicate, Shard, distribute_tensor

    tp = dim_names.index("tp")

    def placements(p):
        return [p if d == tp else Replicate() for d in range(len(dim_names))]

    class MLP(torch.nn.Module):
        def __init__(self):
            super().__init__()
            g = torch.Generator().manual_seed(0)
            w1, b1 = torch.randn(6, 5, generator=g), torch.randn(6, generator=g)
            w2, b2 = torch.randn(3, 6, generator=g), torch.randn(3, generator=g)
            self.w1 = torch.nn.Parameter(distribute_tensor(w1, mesh, placements(Shard(0))))
            self.b1 = torch.nn.Parameter(distribute_tensor(b1, mesh, placements(Shard(0))))
            self.w2 = torch.nn.Parameter(distribute_tensor(w2, mesh, placements(Shard(1))))
            self.b2 = torch.nn.Parameter(distribute_tensor(b2, mesh, placements(Replicate())))
            self.group = mesh.get_group(tp).group_name

        def forward(self, x):
            h = torch.relu(x @ self.w1.to_local().t() + self.b1.to_local())
            y = torch.ops._c10d_functional.all_reduce(h @ self.w2.to_local().t(), "sum", self.group)
            return torch.ops._c10d_functional.wait_tensor(y) + self.b2.to_local()

    return MLP()


def rank_main(rank, world, port, case, folder):
    import numpy as np
    import torch
    import torch.distributed as dist
    from torch.distributed.device_mesh import init_device_mesh

    shape, names = CASES[case]
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=world)
    try:
        mesh = init_device_mesh("cpu", shape, mesh_dim_names=names)
        model = build_model(mesh, names)
        x = torch.randn(4, 5, generator=torch.Generator().manual_seed(1))
        ep = torch.export.export(model, (x,))
        torch.export.save(ep, os.path.join(folder, f"model_rank{rank}.pt2"))
        with torch.no_grad():
            y = model(x)
        if rank == 0:
            np.save(os.path.join(folder, "input_0.npy"), x.numpy())
            np.save(os.path.join(folder, "output_0.npy"), y.numpy())
            # The same answer under the output's name, for `nrt-run --expect DIR`.
            os.makedirs(os.path.join(folder, "expected"), exist_ok=True)
            (output_name,) = ep.graph_signature.user_outputs
            np.save(os.path.join(folder, "expected", output_name + ".npy"), y.numpy())
        gathered = [torch.empty_like(y) for _ in range(world)]
        dist.all_gather(gathered, y.contiguous())
        assert all(torch.equal(g, gathered[0]) for g in gathered), "ranks disagree"
    finally:
        dist.destroy_process_group()


def check_rank_main(rank, world, port, case, archives, results):
    import numpy as np
    import torch
    import torch.distributed as dist
    from torch.distributed.device_mesh import init_device_mesh

    shape, names = CASES[case]
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=world)
    try:
        init_device_mesh("cpu", shape, mesh_dim_names=names)  # the groups the graph's collectives name
        ep = torch.export.load(os.path.join(archives, f"{case}_rank{rank}.pt2"))
        folder = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "testdata", "torch", case)
        x = torch.from_numpy(np.load(os.path.join(folder, "input_0.npy")))
        expected = torch.from_numpy(np.load(os.path.join(folder, "output_0.npy")))
        with torch.no_grad():
            y = ep.module()(x)
        results[rank] = float((y - expected).abs().max())
    except Exception as e:  # reported per rank
        results[rank] = f"{type(e).__name__}: {e}"
    finally:
        dist.destroy_process_group()


def check(archives, only=None):
    """Loads ARCHIVES/<case>_rank<r>.pt2 (per-rank archives nrt wrote, e.g. `nrt-inspect convert
    merged.nrt -o '<case>_rank{rank}.pt2'`) with torch.export.load on a gloo group of the mesh's size,
    runs the case's input and compares every rank's output with torch's (output_0.npy)."""
    import torch.multiprocessing as mp

    ok = True
    for case, (shape, _) in CASES.items():
        if only and case not in only:
            continue
        if not os.path.exists(os.path.join(archives, f"{case}_rank0.pt2")):
            print(f"{case}: no {case}_rank0.pt2 in {archives}: skipped")
            continue
        world = 1
        for s in shape:
            world *= s
        results = mp.Manager().dict()
        mp.spawn(check_rank_main, args=(world, free_port(), case, archives, results), nprocs=world)
        for rank in range(world):
            r = results.get(rank, "no result")
            good = isinstance(r, float) and r <= 1e-5
            ok &= good
            print(f"{case} rank {rank}: {'max abs error %.2e' % r if isinstance(r, float) else r} {'ok' if good else 'FAILED'}")
    return ok


def save_plain_tensors(out_dir):
    """torch.save of plain tensors, the other form a `use_pickle` record takes: a parameter that
    views its storage at an offset with strides, and an int64 buffer."""
    import torch

    folder = os.path.join(out_dir, "pickled_tensors")
    os.makedirs(folder, exist_ok=True)
    base = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    torch.save(torch.nn.Parameter(base[:, 1:]), os.path.join(folder, "parameter_view.pt"))
    torch.save(torch.arange(6, dtype=torch.int64) * 7, os.path.join(folder, "int64.pt"))
    print(f"pickled_tensors: parameter_view.pt, int64.pt in {folder}")


def make(out_dir, only=None):
    import torch
    import torch.multiprocessing as mp

    if not only or "pickled_tensors" in only:
        save_plain_tensors(out_dir)

    for case, (shape, names) in CASES.items():
        if only and case not in only:
            continue
        folder = os.path.join(out_dir, case)
        os.makedirs(folder, exist_ok=True)
        world = 1
        for s in shape:
            world *= s
        mp.spawn(rank_main, args=(world, free_port(), case, folder), nprocs=world)
        manifest = {
            "torch_version": torch.__version__,
            "world_size": world,
            "mesh_shape": list(shape),
            "mesh_dim_names": list(names),
            "archives": [f"model_rank{r}.pt2" for r in range(world)],
            "inputs": [{"file": "input_0.npy", "dtype": "float32", "shape": [4, 5]}],
            "outputs": [{"file": "output_0.npy", "dtype": "float32", "shape": [4, 3]}],
            "note": "per-rank archives of a DTensor MLP (w1, b1 Shard(0), w2 Shard(1), b2 Replicate on tp); "
            "every rank's answer is output_0.npy",
        }
        with open(os.path.join(folder, "manifest.json"), "w") as f:
            json.dump(manifest, f, indent=1, sort_keys=True)
            f.write("\n")
        with open(os.path.join(folder, "torch_version.txt"), "w") as f:
            f.write(torch.__version__ + "\n")
        print(f"{case}: {world} archives in {folder}")
