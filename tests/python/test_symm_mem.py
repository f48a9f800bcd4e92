"""opreg.symm_mem: a two-process test of the host backend (real processes sharing memfd heaps
through a FileStore in a temporary directory) and single-process checks (a W=1 group, errors).

Each rank fills its symmetric inputs with rank-dependent data and checks every collective
bitwise against a NumPy reference that sums the ranks' inputs in float32, in rank order
0..world-1, and rounds once to the element type (the contract of the host collectives).
Ranks report through a queue and their exit codes; a deadline kills them, so nothing hangs.
"""
from __future__ import annotations

import multiprocessing as mp
import os
import threading
import time
import traceback
from typing import Any, List, Tuple

import numpy as np
import pytest

import opreg
import opreg.symm_mem as sm

WORLD = 2
GROUP = "pytest_tp"
DEADLINE_S = 60.0  # the whole two-process run; a healthy run takes a few seconds
GROUP_TIMEOUT_S = 10.0  # every wait inside a rank (a lost peer fails the rank, not the test run)


# ---- data and references (shared by the ranks) -----------------------------------------------

def _data(seed: int, rank: int, shape: Tuple[int, ...], dtype: Any) -> np.ndarray:
    rng = np.random.default_rng(seed * 1000 + rank)
    return (rng.standard_normal(shape, dtype=np.float32) * 3).astype(dtype)


def _ref_sum(seed: int, world: int, shape: Tuple[int, ...], dtype: Any) -> np.ndarray:
    acc = _data(seed, 0, shape, dtype).astype(np.float32)
    for r in range(1, world):
        acc = acc + _data(seed, r, shape, dtype).astype(np.float32)  # f32 adds, rank order
    return acc.astype(dtype)


def _bits(a: Any) -> np.ndarray:
    a = np.ascontiguousarray(np.asarray(a))
    return a.view({2: np.uint16, 4: np.uint32, 8: np.uint64}[a.itemsize])


def _check_bits(what: str, got: Any, ref: np.ndarray) -> None:
    got = np.asarray(got)
    assert got.shape == ref.shape, f"{what}: shape {got.shape} != {ref.shape}"
    assert got.dtype == ref.dtype, f"{what}: dtype {got.dtype} != {ref.dtype}"
    if not np.array_equal(_bits(got), _bits(ref)):
        bad = int(np.count_nonzero(_bits(got) != _bits(ref)))
        raise AssertionError(f"{what}: {bad} of {ref.size} elements differ bitwise "
                             f"(max |diff| {np.max(np.abs(got.astype(np.float64) - ref)):g})")


# ---- one rank of the two-process test ------------------------------------------------------

def _rank_body(rank: int, world: int) -> List[str]:
    done = []
    peer = 1 - rank

    # Symmetric tensors, rendezvous, signals, peers' buffers.
    x = sm.empty((257,), "float32", GROUP)
    assert sm.is_symmetric(x) and x.shape == (257,) and x.dtype == "float32"
    h = sm.rendezvous(x)
    assert (h.rank, h.world_size, h.group_name) == (rank, world, GROUP)
    x.numpy()[:] = _data(1, rank, (257,), np.float32)
    h.barrier(channel=1)  # every rank's data is written
    _check_bits("buffer(peer)", h.buffer(peer).numpy(), _data(1, peer, (257,), np.float32))
    _check_bits("buffer(self)", h.buffer(rank).numpy(), _data(1, rank, (257,), np.float32))
    h.barrier(channel=1)  # every rank is done reading before rank 0 writes below
    # Ping-pong on channel 2: rank 0 writes into rank 1's copy, then signals it.
    if rank == 0:
        h.buffer(1).numpy()[:3] = [7.0, 8.0, 9.0]
        h.put_signal(1, channel=2)
        h.wait_signal(1, channel=2)
    else:
        h.wait_signal(0, channel=2)
        assert x.numpy()[:3].tolist() == [7.0, 8.0, 9.0]
        h.put_signal(0, channel=2)
    h.barrier(channel=1)
    done.append("rendezvous/signals")

    for dt, tag in ((np.float32, "float32"), (np.float16, "float16")):
        # One-shot all-reduce: functional (new tensor) and out (opreg tensor, NumPy array).
        n = 1003
        a = sm.empty((n,), tag, GROUP)
        a.numpy()[:] = _data(2, rank, (n,), dt)
        ref = _ref_sum(2, world, (n,), dt)
        y = sm.one_shot_all_reduce(a, GROUP)
        # (The functional form's result comes from the group's heap: `out` is an accepted
        # symmetric argument of one_shot_all_reduce_out, so every rank allocates it alike.)
        assert isinstance(y, opreg.Tensor) and not y._is_alias_of(a)
        _check_bits(f"one_shot_all_reduce {tag}", y.numpy(), ref)
        out = opreg.empty((n,), tag)
        r = sm.one_shot_all_reduce(a, GROUP, out=out)
        assert r._is_alias_of(out)
        _check_bits(f"one_shot_all_reduce out {tag}", out.numpy(), ref)
        out_np = np.full((n,), -1, dt)
        sm.one_shot_all_reduce(a, GROUP, out=out_np)
        _check_bits(f"one_shot_all_reduce out=ndarray {tag}", out_np, ref)
        _check_bits(f"one_shot input unchanged {tag}", a.numpy(), _data(2, rank, (n,), dt))

        # Two-shot all-reduce, in place (odd size: uneven chunks per rank).
        n2 = 4099
        b = sm.empty((n2,), tag, GROUP)
        b.numpy()[:] = _data(3, rank, (n2,), dt)
        assert sm.two_shot_all_reduce_(b, GROUP) is None
        _check_bits(f"two_shot_all_reduce_ {tag}", b.numpy(), _ref_sum(3, world, (n2,), dt))

        # All-gather along dim 0.
        shape = (5, 7)
        c = sm.empty(shape, tag, GROUP)
        c.numpy()[:] = _data(4, rank, shape, dt)
        gathered = opreg.empty((world * 5, 7), tag)
        r = sm.all_gather_into(gathered, c, GROUP)
        assert r._is_alias_of(gathered)
        _check_bits(f"all_gather {tag}", gathered.numpy(),
                    np.concatenate([_data(4, q, shape, dt) for q in range(world)]))

        # Reduce-scatter: this rank's chunk (flat) of the sum.
        shape = (world * 6, 9)
        d = sm.empty(shape, tag, GROUP)
        d.numpy()[:] = _data(5, rank, shape, dt)
        chunk = opreg.empty((6, 9), tag)
        r = sm.reduce_scatter_into(chunk, d, GROUP)
        assert r._is_alias_of(chunk)
        full = _ref_sum(5, world, shape, dt).reshape(-1)
        per = full.size // world
        _check_bits(f"reduce_scatter {tag}", chunk.numpy().reshape(-1),
                    full[rank * per:(rank + 1) * per])
        done.append(f"collectives {tag}")

    # Fused all-reduce + residual add + RMS norm: the reference is the all-reduce sum followed
    # by the local opreg::fused_add_rms_norm_ (same arithmetic by contract).
    rows, hidden = 3, 64
    e = sm.empty((rows, hidden), "float32", GROUP)
    e.numpy()[:] = _data(6, rank, (rows, hidden), np.float32)
    residual = _data(7, 0, (rows, hidden), np.float32)  # the same on every rank
    weight = _data(8, 0, (hidden,), np.float32)
    ref_in = _ref_sum(6, world, (rows, hidden), np.float32)
    ref_res = residual.copy()
    opreg.ops.opreg.fused_add_rms_norm_(ref_in, ref_res, weight, 1e-6)
    sm.fused_all_reduce_add_rms_norm_(e, residual, weight, 1e-6, GROUP)
    _check_bits("fused_all_reduce_add_rms_norm_ input", e.numpy(), ref_in)
    _check_bits("fused_all_reduce_add_rms_norm_ residual", residual, ref_res)
    done.append("fused")
    return done


def _rank_main(rank: int, world: int, store_dir: str, queue: Any) -> None:
    code = 0
    try:
        sm.create_group(GROUP, rank, world, store_dir, timeout_s=GROUP_TIMEOUT_S)
        assert sm.group_exists(GROUP)
        info = sm.group_info(GROUP)
        assert (info["rank"], info["world_size"]) == (rank, world)
        done = _rank_body(rank, world)
        sm.destroy_group(GROUP)
        assert not sm.group_exists(GROUP)
        queue.put((rank, "ok", ", ".join(done)))
    except BaseException:  # noqa: BLE001 - reported to the parent
        queue.put((rank, "error", traceback.format_exc()))
        code = 2
    # Flush the queue before exiting (the parent reads it after join).
    queue.close()
    queue.join_thread()
    os._exit(code)


def test_two_process_collectives(tmp_path: Any) -> None:
    ctx = mp.get_context("spawn")  # fresh interpreters: no state or threads inherited
    queue = ctx.Queue()
    store_dir = str(tmp_path / "store")
    procs = [ctx.Process(target=_rank_main, args=(r, WORLD, store_dir, queue), daemon=True)
             for r in range(WORLD)]
    for p in procs:
        p.start()
    deadline = time.monotonic() + DEADLINE_S
    reports = {}
    # Read while waiting, so no rank blocks on a full pipe.
    while len(reports) < WORLD and time.monotonic() < deadline:
        try:
            rank, status, text = queue.get(timeout=0.2)
            reports[rank] = (status, text)
        except Exception:  # queue.Empty
            if all(not p.is_alive() for p in procs) and queue.empty():
                break
    hung = []
    for r, p in enumerate(procs):
        p.join(timeout=max(0.0, deadline - time.monotonic()))
        if p.is_alive():
            hung.append(r)
            p.kill()
            p.join(5)
    msgs = [f"rank {r}: exit {p.exitcode}, {reports.get(r, ('no report', ''))}"
            for r, p in enumerate(procs)]
    assert not hung, f"ranks {hung} hung (killed after {DEADLINE_S:.0f} s):\n" + "\n".join(msgs)
    for r, p in enumerate(procs):
        status, text = reports.get(r, ("no report", ""))
        assert status == "ok" and p.exitcode == 0, "\n".join(msgs)
        assert "fused" in text and "collectives float16" in text
    # Destroy removed the group's store keys.
    assert os.listdir(store_dir) == []


# ---- single process ---------------------------------------------------------------------------

@pytest.fixture()
def w1_group(tmp_path: Any) -> Any:
    name = "pytest_w1"
    sm.create_group(name, 0, 1, tmp_path / "store", timeout_s=5)
    try:
        yield name
    finally:
        sm.destroy_group(name)


def test_w1_group_empty_rendezvous_barrier(w1_group: str) -> None:
    assert sm.group_exists(w1_group)
    info = sm.group_info(w1_group)
    assert info["world_size"] == 1 and info["rank"] == 0 and info["timeout_s"] == 5.0
    x = sm.empty((4, 3), "float32", w1_group)
    assert isinstance(x, opreg.Tensor)
    assert x.shape == (4, 3) and x.dtype == "float32" and x.device == "cpu"
    assert x.is_contiguous()
    assert sm.is_symmetric(x)
    assert not sm.is_symmetric(opreg.zeros((4, 3)))
    assert not sm.is_symmetric(np.zeros(3, np.float32))
    assert not sm.is_symmetric("not a tensor")
    # A view inside the heap is symmetric too.
    assert sm.is_symmetric(x.select(0, 2))

    h = sm.rendezvous(x)
    assert isinstance(h, sm.SymmetricMemory)
    assert (h.rank, h.world_size, h.group_name) == (0, 1, w1_group)
    assert h.buffer_size == 4 * 3 * 4 and h.max_channels >= 1
    h.barrier()
    h.barrier(channel=3, timeout_s=1.0)
    h.put_signal(0, channel=1)
    h.wait_signal(0, channel=1, timeout_s=1.0)
    # buffer(rank) views the same bytes (this process's mapping of rank 0's copy).
    x.numpy()[:] = np.arange(12, dtype=np.float32).reshape(4, 3)
    b = h.buffer(0)
    assert b.shape == (4, 3) and b.dtype == "float32" and b.data_ptr() == x.data_ptr()
    assert b.numpy().tolist() == x.numpy().tolist()
    flat = h.get_buffer(0, (6,), "float32", 6)
    assert flat.numpy().tolist() == list(range(6, 12))
    with pytest.raises(ValueError, match=r"does not fit in the allocation of 48 bytes \(it needs 52\)"):
        h.get_buffer(0, (13,), "float32")
    # Offsets and shapes whose byte counts wrap around 64 bits: refused, not a view of the
    # signal pads or of unmapped memory.
    for offset in (2**62 - 64, 2**62 - 1, 2**63 - 1):
        with pytest.raises(ValueError, match="overflows 64 bits|does not fit"):
            h.get_buffer(0, (1,), "float32", offset)
    with pytest.raises(ValueError, match="overflows 64 bits"):
        h.get_buffer(0, (2**32, 2**32, 4), "float32")
    with pytest.raises(ValueError, match="symm_mem handle.get_buffer: argument 'dtype': unknown "
                                         "dtype 'complex64'"):
        h.get_buffer(0, (2,), "complex64")
    with pytest.raises(ValueError, match="symm_mem.empty: argument 'dtype': unknown dtype"):
        sm.empty((2,), "complex64", w1_group)
    with pytest.raises(IndexError, match="rank 1 is not in"):
        h.buffer(1)
    with pytest.raises(IndexError):
        h.put_signal(1)
    assert "SymmetricMemory(group='pytest_w1'" in repr(h)

    # W=1 collectives are copies / identities.
    y = sm.one_shot_all_reduce(x, w1_group)
    assert y.numpy().tolist() == x.numpy().tolist() and not y._is_alias_of(x)
    sm.two_shot_all_reduce_(x, w1_group)
    assert x.numpy().tolist() == np.arange(12).reshape(4, 3).tolist()

    # Zero-size allocations are fine; allocations are counted.
    z = sm.empty((0,), "float16", w1_group)
    assert z.numel() == 0 and z.dtype == "float16"
    assert sm.group_info(w1_group)["live_allocations"] >= 2


def test_tensors_outlive_destroy(tmp_path: Any) -> None:
    sm.create_group("pytest_outlive", 0, 1, str(tmp_path))
    x = sm.empty((8,), "float32", "pytest_outlive")
    x.numpy()[:] = 5.0
    h = sm.rendezvous(x)
    sm.destroy_group("pytest_outlive")
    assert not sm.group_exists("pytest_outlive")
    assert x.numpy().tolist() == [5.0] * 8  # the heap stays mapped while tensors live
    assert h.buffer(0).numpy().tolist() == [5.0] * 8
    del x, h


def test_group_context_manager_and_file_store(tmp_path: Any) -> None:
    store = sm.FileStore(tmp_path / "s")
    assert store.path == str(tmp_path / "s")
    store.set("k", b"v")
    assert store.get("k") == b"v"
    assert store.add("n", 2) == 2 and store.add("n", 3) == 5
    store.delete("k")
    with pytest.raises(RuntimeError, match="k"):
        store.get("k", timeout_s=0.05)
    # A timeout past what the clock can count waits (here: finds the key) instead of expiring
    # at once with a negative time.
    store.set("k2", b"v2")
    assert store.get("k2", timeout_s=1e30) == b"v2"
    store.delete("k2")
    store.delete("n")
    with sm.group("pytest_ctx", 0, 1, store) as name:
        assert sm.group_exists(name)
        assert sm.is_symmetric(sm.empty(3, "float32", name))
    assert not sm.group_exists("pytest_ctx")


def test_non_symmetric_input_errors_name_op_and_argument(w1_group: str) -> None:
    plain = opreg.zeros((8,))
    with pytest.raises(ValueError, match=r"symm_mem::one_shot_all_reduce.*argument 'input'"):
        sm.one_shot_all_reduce(plain, w1_group)
    with pytest.raises(ValueError, match=r"symm_mem::one_shot_all_reduce_out.*argument 'input'"):
        sm.one_shot_all_reduce(plain, w1_group, out=opreg.empty((8,)))
    with pytest.raises(ValueError, match=r"symm_mem::two_shot_all_reduce_.*argument 'input'"):
        sm.two_shot_all_reduce_(np.zeros(8, np.float32), w1_group)
    with pytest.raises(ValueError, match=r"symm_mem::all_gather_out.*argument 'input'"):
        sm.all_gather_into(opreg.empty((8,)), plain, w1_group)
    with pytest.raises(ValueError, match=r"symm_mem::reduce_scatter_out.*argument 'input'"):
        sm.reduce_scatter_into(opreg.empty((8,)), plain, w1_group)
    with pytest.raises(ValueError, match="not in symmetric memory"):
        sm.rendezvous(plain)
    with pytest.raises(TypeError, match="opreg.Tensor"):
        sm.rendezvous(np.zeros(3, np.float32))
    x = sm.empty((8,), "float32", w1_group)
    with pytest.raises(ValueError, match="reduce_op"):
        sm.one_shot_all_reduce(x, w1_group, reduce_op="max")


def test_ops_through_torch_ops_take_the_cpp_kernel_with_a_group_name(w1_group: str) -> None:
    # The group's name is a str: torch's stable ABI carries it, so torch.ops reaches the C++
    # kernel with no Python frame; a torch view of a symmetric tensor stays symmetric.
    torch = pytest.importorskip("torch", reason="torch is not installed (pip install torch)")
    import opreg.torch as opreg_torch
    if opreg_torch._kernels.C_BRIDGE_UNAVAILABLE:
        pytest.skip("no C++ bridge with this torch: " + opreg_torch._kernels.C_BRIDGE_UNAVAILABLE)
    for name in ("symm_mem::fused_all_reduce_add_rms_norm_", "symm_mem::all_gather_out"):
        assert name in opreg_torch.registered()
        assert name not in opreg_torch.python_kernels(), opreg_torch.python_kernels()[name]
    x = torch.from_dlpack(sm.empty((2, 8), "float32", w1_group))
    x.copy_(torch.arange(16.0).reshape(2, 8))
    residual, weight = torch.ones(2, 8), torch.full((8,), 2.0)
    total = x + residual
    version = x._version
    assert torch.ops.symm_mem.fused_all_reduce_add_rms_norm_(x, residual, weight, 1e-6,
                                                             w1_group) is None
    assert x._version > version
    torch.testing.assert_close(residual, total)  # one rank: the all-reduce is the identity
    torch.testing.assert_close(
        x, total * torch.rsqrt(total.pow(2).mean(-1, keepdim=True) + 1e-6) * weight)
    out = torch.empty(2, 8)
    assert torch.ops.symm_mem.all_gather_out(x, w1_group, out=out) is out
    assert torch.equal(out, x)
    with pytest.raises(ValueError, match=r"\[symm_mem::all_gather_out\] argument 'input' "
                                         r"\(#0\): expected a tensor in the symmetric memory"):
        torch.ops.symm_mem.all_gather_out(torch.ones(2, 8), w1_group, out=out)
    with pytest.raises(KeyError, match=r"\[symm_mem::all_gather_out\] .*no group named 'nope'"):
        torch.ops.symm_mem.all_gather_out(x, "nope", out=out)


def test_unknown_group_raises_key_error(w1_group: str, tmp_path: Any) -> None:
    with pytest.raises(KeyError, match="no_such_group"):
        sm.empty((4,), "float32", "no_such_group")
    with pytest.raises(KeyError, match="no_such_group"):
        sm.group_info("no_such_group")
    x = sm.empty((4,), "float32", w1_group)
    with pytest.raises(KeyError, match="no_such_group"):
        sm.one_shot_all_reduce(x, "no_such_group")
    assert not sm.group_exists("no_such_group")
    with pytest.raises(ValueError, match="already exists"):
        sm.create_group(w1_group, 0, 1, str(tmp_path))
    with pytest.raises(ValueError, match="rank 2 is not in"):
        sm.create_group("pytest_bad_rank", 2, 2, str(tmp_path))
    # A directory every user can write in is no store: another user could plant or swap keys.
    with pytest.raises(RuntimeError, match="refusing the store directory /tmp: its mode 1777"):
        sm.create_group("pytest_shared_tmp", 0, 1, "/tmp")
    with pytest.raises(TypeError, match="store"):
        sm.create_group("pytest_bad_store", 0, 1, 42)  # type: ignore[arg-type]


def test_absent_peer_times_out_and_releases_the_gil(tmp_path: Any) -> None:
    # Rank 1 never comes: creation fails with a RuntimeError naming it, after the timeout,
    # and other Python threads run meanwhile (the wait released the GIL).
    ticks = []
    stop = threading.Event()

    def ticker() -> None:
        while not stop.is_set():
            ticks.append(1)
            time.sleep(0.01)

    t = threading.Thread(target=ticker)
    t.start()
    t0 = time.monotonic()
    try:
        with pytest.raises(RuntimeError, match="rank.*1") as info:
            sm.create_group("pytest_absent", 0, 2, tmp_path, timeout_s=0.5)
    finally:
        stop.set()
        t.join()
    assert 0.4 < time.monotonic() - t0 < 10
    assert len(ticks) >= 10, "the blocking wait held the GIL"
    assert "pytest_absent" in str(info.value)
    assert not sm.group_exists("pytest_absent")
