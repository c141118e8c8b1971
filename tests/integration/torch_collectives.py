#!/usr/bin/env python3
"""torch.distributed collectives on the NCCL backend, checked exactly against a CPU reference.

Run alone it is a world of one rank (env:// on 127.0.0.1 with a free port); under torchrun
(RANK/WORLD_SIZE/LOCAL_RANK set) it runs with that world, ranks sharing GPUs round-robin.
Prints one line per check and a final "N passed, M failed"; exits 1 on any failure and 77
(SKIPPED) without a CUDA device.

Inputs are small integers, so sums, products, minima and maxima are exact in every dtype
(bf16 included) whatever the reduction order. The one inexact case is AVG with a world size
that is not a power of two (1/n is not representable); it is compared with a tolerance and
says so on its line.
"""

import struct
import argparse
import datetime
import os
import socket
import sys
import traceback

import torch
import torch.distributed as dist

DTYPES = [torch.float32, torch.bfloat16, torch.float16, torch.float64, torch.int32, torch.int64]
SIZES = [1, 7, 1024 + 3, 1 << 20]
EXIT_SKIPPED = 77
AVG_TOLERANCE = {torch.float64: 1e-12, torch.float32: 1e-6, torch.float16: 2e-3, torch.bfloat16: 1e-2}


class Checker:
    def __init__(self, rank):
        self.rank = rank
        self.passed = 0
        self.failed = 0

    def report(self, name, ok, detail=""):
        if ok:
            self.passed += 1
        else:
            self.failed += 1
        tail = f" ({detail})" if detail else ""
        print(f"[rank {self.rank}] {'PASS' if ok else 'FAIL'} {name}{tail}", flush=True)

    def compare(self, name, got, expected, tolerance=0.0):
        got = got.cpu()
        if got.shape != expected.shape or got.dtype != expected.dtype:
            self.report(name, False, f"got {got.dtype}{list(got.shape)}, "
                                     f"expected {expected.dtype}{list(expected.shape)}")
            return
        if tolerance == 0.0:
            bad = got != expected
        else:
            g, e = got.double(), expected.double()
            bad = (g - e).abs() > tolerance * e.abs().clamp(min=1.0)
        nbad = int(bad.sum())
        if nbad == 0:
            self.report(name, True, "within tolerance" if tolerance else "")
            return
        i = int(bad.flatten().nonzero()[0])
        self.report(name, False, f"{nbad} wrong of {got.numel()}; first at {i}: "
                                 f"got {got.flatten()[i].item()}, expected {expected.flatten()[i].item()}")

    def run(self, name, fn):
        """Runs one check; an exception is that check's failure, not the program's."""
        try:
            fn()
        except Exception as e:  # noqa: BLE001 - every error is a test result here
            self.report(name, False, f"{type(e).__name__}: {e}".splitlines()[0])
            traceback.print_exc(file=sys.stderr)


def values(rank, count, salt):
    """Small signed integers in [-8, 8], different per rank, element and salt (int64, CPU)."""
    i = torch.arange(count, dtype=torch.int64)
    return (i * 7 + rank * 3 + salt) % 17 - 8


def factors(rank, count):
    """Values in {1, -1, 2} so a product over ranks stays exact (|p| <= 2^world)."""
    table = torch.tensor([1, -1, 2, 1], dtype=torch.int64)
    return table[(torch.arange(count, dtype=torch.int64) + rank) % 4]


PREMUL_FACTOR = 2.0


def premul_factor_as_nccl_reads_it(dtype):
    """The PreMulSum scalar the NCCL library actually applies.

    PyTorch (ProcessGroupNCCL's unpackPreMulSum<float, ncclBfloat16>) hands NCCL a 4-byte
    float scalar for bfloat16 data, and NCCL copies sizeof(bfloat16) = 2 bytes of it: the low
    half of the float. That is PyTorch's behavior with any NCCL, not Purlin's; the test
    reproduces it exactly so that a forwarding bug would still show.
    """
    if dtype != torch.bfloat16:
        return PREMUL_FACTOR
    low = struct.pack("<f", PREMUL_FACTOR)[:2]
    return struct.unpack("<f", b"\x00\x00" + low)[0]


def reference(op, inputs, world, dtype=None):
    """Reduction of int64 inputs in float64 (exact here), before the cast to the test dtype."""
    stack = torch.stack([x.double() for x in inputs])
    if op == "sum":
        return stack.sum(0)
    if op == "prod":
        return stack.prod(0)
    if op == "min":
        return stack.min(0).values
    if op == "max":
        return stack.max(0).values
    if op == "avg":
        return stack.sum(0) / world
    if op == "premul_sum":
        return (stack * premul_factor_as_nccl_reads_it(dtype)).sum(0)
    raise ValueError(op)


def reduce_ops(dtype):
    ops = {"sum": dist.ReduceOp.SUM, "prod": dist.ReduceOp.PRODUCT,
           "min": dist.ReduceOp.MIN, "max": dist.ReduceOp.MAX}
    if dtype.is_floating_point:
        ops["avg"] = dist.ReduceOp.AVG
        make_premul = getattr(dist, "_make_nccl_premul_sum", None)  # private in PyTorch
        if make_premul is not None:
            ops["premul_sum"] = make_premul(PREMUL_FACTOR)
    return ops


def is_power_of_two(n):
    return n & (n - 1) == 0


class Suite:
    def __init__(self, check, rank, world, device):
        self.check, self.rank, self.world, self.device = check, rank, world, device

    def dev(self, x, dtype):
        """A fresh device copy: collectives write in place and must never touch the inputs."""
        return x.to(device=self.device, dtype=dtype, copy=True)

    def all_reduce(self, dtype, count):
        for opname, op in reduce_ops(dtype).items():
            gen = factors if opname == "prod" else (lambda r, c: values(r, c, 1))
            inputs = [gen(r, count) for r in range(self.world)]
            tol = 0.0
            if opname == "avg" and not is_power_of_two(self.world):
                tol = AVG_TOLERANCE[dtype]
            expected = reference(opname, inputs, self.world, dtype).to(dtype)
            name = f"all_reduce {opname} {dtype} n={count}"

            def body(inputs=inputs, op=op, expected=expected, tol=tol, name=name):
                t = self.dev(inputs[self.rank], dtype)
                dist.all_reduce(t, op=op)
                self.check.compare(name, t, expected, tol)
            self.check.run(name, body)

    def all_gather(self, dtype, count):
        inputs = [values(r, count, 2) for r in range(self.world)]
        expected = torch.cat(inputs).to(dtype)
        for in_place in (False, True):
            name = f"all_gather_into_tensor{' in-place' if in_place else ''} {dtype} n={count}"

            def body(in_place=in_place, name=name):
                out = torch.empty(self.world * count, dtype=dtype, device=self.device)
                if in_place:
                    inp = out[self.rank * count:(self.rank + 1) * count]
                    inp.copy_(self.dev(inputs[self.rank], dtype))
                else:
                    inp = self.dev(inputs[self.rank], dtype)
                dist.all_gather_into_tensor(out, inp)
                self.check.compare(name, out, expected)
            self.check.run(name, body)

    def reduce_scatter(self, dtype, count):
        inputs = [values(r, self.world * count, 3) for r in range(self.world)]
        mine = slice(self.rank * count, (self.rank + 1) * count)
        for opname, op in (("sum", dist.ReduceOp.SUM), ("max", dist.ReduceOp.MAX)):
            expected = reference(opname, [x[mine] for x in inputs], self.world).to(dtype)
            for in_place in (False, True):
                name = f"reduce_scatter_tensor{' in-place' if in_place else ''} {opname} {dtype} n={count}"

                def body(op=op, in_place=in_place, expected=expected, name=name):
                    inp = self.dev(inputs[self.rank], dtype)
                    out = inp[mine] if in_place else torch.empty(count, dtype=dtype, device=self.device)
                    dist.reduce_scatter_tensor(out, inp, op=op)
                    self.check.compare(name, out, expected)
                self.check.run(name, body)

    def all_to_all(self, dtype, count):
        inputs = [values(r, self.world * count, 4) for r in range(self.world)]
        mine = slice(self.rank * count, (self.rank + 1) * count)
        expected = torch.cat([x[mine] for x in inputs]).to(dtype)
        name = f"all_to_all_single {dtype} n={count}"

        def body():
            out = torch.empty(self.world * count, dtype=dtype, device=self.device)
            dist.all_to_all_single(out, self.dev(inputs[self.rank], dtype))
            self.check.compare(name, out, expected)
        self.check.run(name, body)

    def all_to_all_uneven(self, dtype, scale):
        """all_to_all_single with split sizes, zeros among them (mixture-of-experts dispatch)."""
        w, me = self.world, self.rank

        def split(src, dst):
            return ((3 * src + 5 * dst + 1) % 7) * scale

        inputs = [values(r, sum(split(r, d) for d in range(w)), 8) for r in range(w)]
        parts = []
        for s in range(w):
            at = sum(split(s, d) for d in range(me))
            parts.append(inputs[s][at:at + split(s, me)])
        expected = torch.cat(parts).to(dtype)
        name = f"all_to_all_single uneven splits {dtype} x{scale}"

        def body():
            out = torch.empty(expected.numel(), dtype=dtype, device=self.device)
            dist.all_to_all_single(out, self.dev(inputs[me], dtype),
                                   output_split_sizes=[split(s, me) for s in range(w)],
                                   input_split_sizes=[split(me, d) for d in range(w)])
            self.check.compare(name, out, expected)
        self.check.run(name, body)

    def send_recv(self, dtype, count):
        """batch_isend_irecv around a ring, then blocking send/recv between neighbours."""
        w, me = self.world, self.rank
        if w < 2:
            return
        nxt, prv = (me + 1) % w, (me - 1) % w
        name = f"batch_isend_irecv ring {dtype} n={count}"

        def ring():
            recv = torch.empty(count, dtype=dtype, device=self.device)
            ops = [dist.P2POp(dist.isend, self.dev(values(me, count, 9), dtype), nxt),
                   dist.P2POp(dist.irecv, recv, prv)]
            for req in dist.batch_isend_irecv(ops):
                req.wait()
            self.check.compare(name, recv, values(prv, count, 9).to(dtype))
        self.check.run(name, ring)

        peer = me ^ 1
        if peer >= w:
            return
        name = f"send/recv pair {dtype} n={count}"

        def pair():
            recv = torch.empty(count, dtype=dtype, device=self.device)
            if me % 2 == 0:
                dist.send(self.dev(values(me, count, 10), dtype), peer)
                dist.recv(recv, peer)
            else:
                dist.recv(recv, peer)
                dist.send(self.dev(values(me, count, 10), dtype), peer)
            self.check.compare(name, recv, values(peer, count, 10).to(dtype))
        self.check.run(name, pair)

    def broadcast(self, dtype, count):
        for src in sorted({0, self.world - 1}):
            name = f"broadcast src={src} {dtype} n={count}"

            def body(src=src, name=name):
                t = self.dev(values(self.rank, count, 5), dtype)
                dist.broadcast(t, src=src)
                self.check.compare(name, t, values(src, count, 5).to(dtype))
            self.check.run(name, body)

    def reduce(self, dtype, count):
        inputs = [values(r, count, 6) for r in range(self.world)]
        expected = reference("sum", inputs, self.world).to(dtype)
        for dst in sorted({0, self.world - 1}):
            name = f"reduce sum dst={dst} {dtype} n={count}"

            def body(dst=dst, name=name):
                t = self.dev(inputs[self.rank], dtype)
                dist.reduce(t, dst=dst, op=dist.ReduceOp.SUM)
                if self.rank == dst:  # other ranks' buffers are unspecified after a reduce
                    self.check.compare(name, t, expected)
                else:
                    self.check.report(name, True, "not the root")
            self.check.run(name, body)

    def barrier(self):
        def body():
            dist.barrier(device_ids=[self.device.index])
            torch.cuda.synchronize(self.device)
            self.check.report("barrier", True)
        self.check.run("barrier", body)

    def cuda_graph(self, replays=3):
        """An all_reduce captured once and replayed: each replay sums the previous result."""
        count = 1024 + 3
        inputs = [values(r, count, 7) for r in range(self.world)]
        expected = (reference("sum", inputs, self.world) * self.world ** (replays - 1)).float()
        name = f"all_reduce sum in a CUDA graph x{replays} float32 n={count}"

        def body():
            t = self.dev(inputs[self.rank], torch.float32)
            stream = torch.cuda.Stream(device=self.device)
            stream.wait_stream(torch.cuda.current_stream(self.device))
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph, stream=stream):
                dist.all_reduce(t)
            torch.cuda.current_stream(self.device).wait_stream(stream)
            for _ in range(replays):
                graph.replay()
            torch.cuda.synchronize(self.device)
            self.check.compare(name, t, expected)
        self.check.run(name, body)


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=SIZES, help="element counts")
    parser.add_argument("--no-graph", action="store_true", help="skip the CUDA graph check")
    parser.add_argument("--timeout", type=int, default=120, help="collective timeout (s)")
    args = parser.parse_args()

    if not torch.cuda.is_available():
        print("SKIPPED: no CUDA device", flush=True)
        return EXIT_SKIPPED  # not 0: an integration run without a GPU has tested nothing

    # A standalone run is a world of one; torchrun sets these for larger worlds.
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", str(free_port()))
    os.environ.setdefault("RANK", "0")
    os.environ.setdefault("WORLD_SIZE", "1")
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    local_rank = int(os.environ.get("LOCAL_RANK", rank))
    device = torch.device("cuda", local_rank % torch.cuda.device_count())
    torch.cuda.set_device(device)

    init = dict(backend="nccl", init_method="env://", rank=rank, world_size=world,
                timeout=datetime.timedelta(seconds=args.timeout))
    try:
        # device_id creates the NCCL communicator now (ncclCommInitRank*), not lazily.
        dist.init_process_group(device_id=device, **init)
    except TypeError:  # PyTorch without device_id
        dist.init_process_group(**init)

    check = Checker(rank)
    print(f"[rank {rank}] torch {torch.__version__}, world {world}, {device} "
          f"({torch.cuda.get_device_name(device)}), NCCL {torch.cuda.nccl.version()}", flush=True)
    suite = Suite(check, rank, world, device)
    for dtype in DTYPES:
        for count in args.sizes:
            suite.all_reduce(dtype, count)
            suite.all_gather(dtype, count)
            suite.reduce_scatter(dtype, count)
            suite.all_to_all(dtype, count)
            suite.broadcast(dtype, count)
            suite.reduce(dtype, count)
            suite.send_recv(dtype, count)
        for scale in (1, 1031):
            suite.all_to_all_uneven(dtype, scale)
    suite.barrier()
    if not args.no_graph:
        suite.cuda_graph()  # last: a failed capture can leave the stream unusable

    try:
        dist.destroy_process_group()
    except Exception as e:  # noqa: BLE001
        check.report("destroy_process_group", False, str(e))
    print(f"[rank {rank}] {check.passed} passed, {check.failed} failed", flush=True)
    return 0 if check.failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
