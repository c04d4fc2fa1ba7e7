#!/usr/bin/env python3
# Copyright (c) 2026 The libmscclpp authors
# SPDX-License-Identifier: MIT
"""Writes the executor's test plans (docs/executor.md describes the format) for 2, 3 and 4 ranks.

Each plan is named <algorithm>_<n>ranks.json. Run from anywhere: python3 generate.py [output dir].
Every rank gets NTB thread blocks; thread block t handles slice t of every range (tbg_info) and owns its
own channel to each peer, so no two blocks ever signal through the same semaphore.
"""

import json
import os
import sys

# Eight blocks of 1024 threads, as MSCCL++'s own all-reduce plan: a block copies only as fast as the reads
# its threads keep in flight, so a few small blocks leave large messages far below the GPU's bandwidth.
NTB = 8


class Gpu:
    def __init__(self, rank, n, input_chunks, output_chunks, scratch_chunks):
        self.rank, self.n = rank, n
        self.peers = [p for p in range(n) if p != rank]
        self.input_chunks, self.output_chunks, self.scratch_chunks = input_chunks, output_chunks, scratch_chunks
        self.channels = {"memory": [], "port": []}  # channel id -> (peer, key)
        self.remote = []  # (rank, type, access types)
        self.semaphores = []
        self.tbs = [Tb(self, t) for t in range(NTB)]

    def make_channels(self, ctype, keys):
        # Same order on every rank: the k-th channel to a peer pairs with the peer's k-th channel to us.
        for key in keys:
            for p in self.peers:
                self.channels[ctype].append((p, key))

    def channel(self, ctype, peer, key):
        return self.channels[ctype].index((peer, key))

    def rbuf(self, rank, btype, access):
        entry = (rank, btype, tuple(access))
        if entry not in self.remote:
            self.remote.append(entry)
        return self.remote.index(entry)

    def to_json(self):
        return {
            "id": self.rank,
            "input_chunks": self.input_chunks,
            "output_chunks": self.output_chunks,
            "scratch_chunks": self.scratch_chunks,
            "channels": [{"channel_type": t, "connected_to": [p]} for t in ("memory", "port")
                         for (p, _) in self.channels[t]],
            "remote_buffers": [{"rank": r, "type": b, "access_channel_types": list(a)} for (r, b, a) in self.remote],
            "semaphores": [{"init_value": v} for v in self.semaphores],
            "threadblocks": [tb.to_json() for tb in self.tbs],
        }


class Tb:
    def __init__(self, gpu, tid):
        self.gpu, self.id = gpu, tid
        self.ops = []
        self.chans = {"memory": [], "port": []}
        self.refs = {"memory": [], "port": []}

    def ch(self, ctype, peer):
        gid = self.gpu.channel(ctype, peer, self.id)
        if gid not in self.chans[ctype]:
            self.chans[ctype].append(gid)
        return self.chans[ctype].index(gid)

    def remote(self, ctype, rank, btype, index, size=1, access=None):
        gid = self.gpu.rbuf(rank, btype, access or [ctype])
        if gid not in self.refs[ctype]:
            self.refs[ctype].append(gid)
        return {"buffer_id": self.refs[ctype].index(gid), "index": index, "size": size}

    def op(self, name, ctype=None, peers=None, src=None, dst=None, split=True, **extra):
        o = {"name": name}
        if ctype:
            o["channel_type"] = ctype
        if peers is not None:
            o["channel_ids"] = [self.ch(ctype, p) for p in peers]
        if src is not None:
            o["src_buff"] = src
        if dst is not None:
            o["dst_buff"] = dst
        if split:
            o["tbg_info"] = {"tb_id": self.id, "tbg_size": NTB}
        o.update(extra)
        self.ops.append(o)
        return o

    def sync(self, name, ctype, peers):
        self.op(name, ctype, peers, split=False)

    def nop(self):
        self.op("nop", split=False)

    def to_json(self):
        return {
            "id": self.id,
            "ops": self.ops,
            "channels": [{"channel_type": t, "channel_ids": ids} for t, ids in self.chans.items() if ids],
            "remote_buffer_refs": [{"access_channel_type": t, "remote_buffer_ids": ids}
                                   for t, ids in self.refs.items() if ids],
        }


def loc(btype, index, size=1):
    return {"type": btype, "index": index, "size": size}


def plan(name, collective, protocol, inplace, gpus, double_scratch=False, **extra):
    p = {
        "name": name,
        "collective": collective,
        "protocol": protocol,
        "inplace": inplace,
        "num_threads_per_block": 1024,
        "use_double_scratch_buffer": double_scratch,
        "buffer_alignment": 16,
        "min_message_size": 0,
        "max_message_size": 1 << 40,
        "gpus": [g.to_json() for g in gpus],
    }
    p.update(extra)
    return p


def handshake(tb, ctype="memory", relaxed=False):
    """Tells every peer this rank has entered the collective, and waits until all have."""
    peers = tb.gpu.peers
    tb.sync("rlxsignal" if relaxed else "signal", ctype, peers)
    tb.sync("rlxwait" if relaxed else "wait", ctype, peers)
    tb.nop()


# ---- all-reduce ----

def allreduce_oneshot(n):
    """Each rank reads every peer's input and writes the sum to its output."""
    gpus = [Gpu(r, n, 1, 1, 0) for r in range(n)]
    for g in gpus:
        g.make_channels("memory", range(NTB))
        for tb in g.tbs:
            handshake(tb, relaxed=True)
            tb.op("rre", "memory", src=[loc("i", 0)] + [tb.remote("memory", p, "i", 0) for p in g.peers],
                  dst=[loc("o", 0)], reduce_op="sum")
            tb.nop()
            handshake(tb)
    return plan("allreduce_oneshot", "allreduce", "Simple", False, gpus)


def allreduce_twoshot(n, inplace):
    """Rank r sums chunk r of every input and writes it to chunk r of every output (read-reduce-send)."""
    out = "i" if inplace else "o"
    gpus = [Gpu(r, n, n, 0 if inplace else n, 0) for r in range(n)]
    for g in gpus:
        g.make_channels("memory", range(NTB))
        r = g.rank
        for tb in g.tbs:
            handshake(tb)
            access = ["memory"]
            src = [loc("i", r)] + [tb.remote("memory", p, "i", r, access=access) for p in g.peers]
            dst = [loc(out, r)] + [tb.remote("memory", p, out, r, access=access) for p in g.peers]
            tb.op("rres", "memory", src=src, dst=dst)
            tb.nop()
            handshake(tb)
    return plan("allreduce_twoshot" + ("_inplace" if inplace else ""), "allreduce", "Simple", inplace, gpus)


def allreduce_twoshot_get(n):
    """Reduce-scatter by get into scratch and reduce-send, then the owner's writes are the all-gather."""
    gpus = [Gpu(r, n, n, n, n) for r in range(n)]
    for g in gpus:
        g.make_channels("memory", range(NTB))
        r = g.rank
        for tb in g.tbs:
            handshake(tb)
            tb.op("get", "memory", src=[tb.remote("memory", p, "i", r) for p in g.peers],
                  dst=[loc("s", p) for p in g.peers])
            tb.nop()
            tb.op("res", "memory", src=[loc("i", r)] + [loc("s", p) for p in g.peers],
                  dst=[loc("o", r)] + [tb.remote("memory", p, "o", r) for p in g.peers])
            tb.nop()
            handshake(tb)
    return plan("allreduce_twoshot_get", "allreduce", "Simple", False, gpus)


def allreduce_pipeline(n):
    """One-shot all-reduce whose reads go through scratch in pipelined units: get, then reduce."""
    gpus = [Gpu(r, n, 1, 1, n) for r in range(n)]
    for g in gpus:
        g.make_channels("memory", range(NTB))
        for tb in g.tbs:
            handshake(tb)
            inner = [
                {"name": "get", "channel_type": "memory",
                 "src_buff": [tb.remote("memory", p, "i", 0) for p in g.peers],
                 "dst_buff": [loc("s", p) for p in g.peers], "tbg_info": {"tb_id": tb.id, "tbg_size": NTB}},
                {"name": "nop"},
                {"name": "re", "src_buff": [loc("i", 0)] + [loc("s", p) for p in g.peers], "dst_buff": [loc("o", 0)],
                 "tbg_info": {"tb_id": tb.id, "tbg_size": NTB}},
                {"name": "nop"},
            ]
            tb.op("pipeline", split=False, iter_context={"unit_size": 4096, "num_chunks": 1}, ops=inner)
            tb.op("barrier", split=False, barrier_id=0, num_threadblocks=NTB)
            handshake(tb)
    return plan("allreduce_pipeline", "allreduce", "Simple", False, gpus)


def allreduce_oneshot_ll(n):
    """Every rank sends its input as packets into slot `rank` of every peer's scratch, then adds them up."""
    gpus = [Gpu(r, n, 1, 1, n) for r in range(n)]
    for g in gpus:
        g.make_channels("memory", range(NTB))
        for tb in g.tbs:
            tb.op("ppkt", "memory", src=[loc("i", 0) for _ in g.peers],
                  dst=[tb.remote("memory", p, "s", g.rank) for p in g.peers])
            tb.op("repkt", src=[loc("i", 0)] + [loc("s", p) for p in g.peers], dst=[loc("o", 0)])
    return plan("allreduce_oneshot_ll", "allreduce", "LL", False, gpus, double_scratch=True)


def allreduce_twoshot_ll(n, inplace, variant):
    """Chunk p goes as packets to rank p; rank r adds chunk r up and sends the sum back as packets.

    variant "respkt": reduce-send-packets; "recpkt": reduce into local packets, then read-put-packets
    forwards them; "recspkt": reduce-copy-send-packets.
    """
    out = "i" if inplace else "o"
    gpus = [Gpu(r, n, n, 0 if inplace else n, 3 * n) for r in range(n)]
    for g in gpus:
        g.make_channels("memory", range(NTB))
        r = g.rank
        for tb in g.tbs:
            tb.op("ppkt", "memory", src=[loc("i", p) for p in g.peers],
                  dst=[tb.remote("memory", p, "s", r) for p in g.peers])
            src = [loc("i", r)] + [loc("s", p) for p in g.peers]
            sends = [tb.remote("memory", p, "s", n + r) for p in g.peers]
            if variant == "respkt":
                tb.op("respkt", "memory", src=src, dst=[loc(out, r)] + sends)
            elif variant == "recpkt":
                tb.op("recpkt", src=src, dst=[loc(out, r), loc("s", 2 * n + r)])
                tb.op("rppkt", "memory", src=[loc("s", 2 * n + r) for _ in g.peers], dst=sends)
            else:
                tb.op("recspkt", "memory", src=src, dst=[loc(out, r), loc("s", 2 * n + r)] + sends)
            for p in g.peers:
                tb.op("upkt", src=[loc("s", n + p)], dst=[loc(out, p)])
    name = "allreduce_twoshot_ll" + ("" if variant == "respkt" else "_" + variant) + ("_inplace" if inplace else "")
    return plan(name, "allreduce", "LL", inplace, gpus, double_scratch=True)


# ---- all-gather, reduce-scatter ----

def allgather(n):
    """Every block copies its slice of the rank's own slot (block 1 then releases a semaphore) and puts its
    slice into the peers' outputs; block 0 waits on the semaphore before the closing handshake."""
    gpus = [Gpu(r, n, 1, n, 0) for r in range(n)]
    for g in gpus:
        g.make_channels("memory", range(NTB))
        g.semaphores = [0]
        r = g.rank
        for tb in g.tbs:
            handshake(tb)
            tb.op("copy", src=[loc("i", 0)], dst=[loc("o", r)])
            if tb.id == 1:
                tb.nop()
                tb.op("sem_release", split=False, semaphore_ids=[0])
            tb.op("put", "memory", src=[loc("i", 0) for _ in g.peers],
                  dst=[tb.remote("memory", p, "o", r) for p in g.peers])
            tb.nop()
            if tb.id == 0:
                tb.op("sem_acquire", split=False, semaphore_ids=[0])
            handshake(tb)
    return plan("allgather", "allgather", "Simple", False, gpus)


def allgather_port(n, put):
    """All-gather through the proxy: put + signal (+ flush), put-with-signal, or put-with-signal-and-flush."""
    gpus = [Gpu(r, n, 1, n, 0) for r in range(n)]
    for g in gpus:
        g.make_channels("port", range(NTB))
        r = g.rank
        for tb in g.tbs:
            handshake(tb, "port")
            tb.op("copy", src=[loc("i", 0)], dst=[loc("o", r)])
            src = [loc("i", 0) for _ in g.peers]
            dst = [tb.remote("port", p, "o", r) for p in g.peers]
            tb.op(put, "port", g.peers, src=src, dst=dst)
            if put == "put":
                tb.sync("signal", "port", g.peers)
            if put != "pwsf":
                tb.sync("flush", "port", g.peers)
            tb.sync("wait", "port", g.peers)
            tb.nop()
    return plan("allgather_port_" + put, "allgather", "Simple", False, gpus)


def allgather_ll(n, ctype):
    """All-gather with packets: copy-packets into local scratch, then forward them (read-put-packets over
    memory channels, or put-packets over port channels), and unpack the peers' slots."""
    gpus = [Gpu(r, n, 1, n, n) for r in range(n)]
    for g in gpus:
        g.make_channels(ctype, range(NTB))
        r = g.rank
        for tb in g.tbs:
            tb.op("copy", src=[loc("i", 0)], dst=[loc("o", r)])
            tb.op("cpkt", src=[loc("i", 0)], dst=[loc("s", r)])
            if ctype == "memory":
                tb.op("rppkt", "memory", src=[loc("s", r) for _ in g.peers],
                      dst=[tb.remote("memory", p, "s", r) for p in g.peers])
            else:
                tb.nop()
                tb.op("ppkt", "port", g.peers, src=[loc("s", r) for _ in g.peers],
                      dst=[tb.remote("port", p, "s", r) for p in g.peers])
                tb.sync("flush", "port", g.peers)
            for p in g.peers:
                tb.op("upkt", src=[loc("s", p)], dst=[loc("o", p)])
    return plan("allgather_ll_" + ctype, "allgather", "LL", False, gpus, double_scratch=True)


def reduce_scatter(n):
    """Rank r reads chunk r of every peer's input and sums it into its output; the blocks meet at a
    barrier before the closing handshake."""
    gpus = [Gpu(r, n, n, 1, 0) for r in range(n)]
    for g in gpus:
        g.make_channels("memory", range(NTB))
        r = g.rank
        for tb in g.tbs:
            handshake(tb)
            tb.op("rre", "memory", src=[loc("i", r)] + [tb.remote("memory", p, "i", r) for p in g.peers],
                  dst=[loc("o", 0)])
            tb.op("barrier", split=False, barrier_id=0, num_threadblocks=NTB)
            handshake(tb)
    return plan("reduce_scatter", "reducescatter", "Simple", False, gpus)


def reduce_scatter_ll(n):
    """Packets of chunk p to rank p, summed with reduce-packets."""
    gpus = [Gpu(r, n, n, 1, n) for r in range(n)]
    for g in gpus:
        g.make_channels("memory", range(NTB))
        r = g.rank
        for tb in g.tbs:
            tb.op("ppkt", "memory", src=[loc("i", p) for p in g.peers],
                  dst=[tb.remote("memory", p, "s", r) for p in g.peers])
            tb.op("repkt", src=[loc("i", r)] + [loc("s", p) for p in g.peers], dst=[loc("o", 0)])
    return plan("reduce_scatter_ll", "reducescatter", "LL", False, gpus, double_scratch=True)


def all_plans(n):
    yield allreduce_oneshot(n)
    yield allreduce_twoshot(n, False)
    yield allreduce_twoshot(n, True)
    yield allreduce_twoshot_get(n)
    yield allreduce_pipeline(n)
    yield allreduce_oneshot_ll(n)
    for variant in ("respkt", "recpkt", "recspkt"):
        yield allreduce_twoshot_ll(n, False, variant)
    yield allreduce_twoshot_ll(n, True, "respkt")
    yield allgather(n)
    for put in ("put", "pws", "pwsf"):
        yield allgather_port(n, put)
    yield allgather_ll(n, "memory")
    yield allgather_ll(n, "port")
    yield reduce_scatter(n)
    yield reduce_scatter_ll(n)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    for n in (2, 3, 4):
        for p in all_plans(n):
            p["name"] = f"{p['name']}_{n}ranks"
            with open(os.path.join(out, p["name"] + ".json"), "w") as f:
                json.dump(p, f, indent=1)
                f.write("\n")


if __name__ == "__main__":
    main()
