"""Java YCSB 0.17 CoreWorkload key choice, ported from its algorithms (single client thread), as an
independent reference for pmlab's generator (src/pmlab/workload).

ZipfianGenerator (Gray et al.; incremental zeta when the item count grows), ScrambledZipfianGenerator
(10^10 + 1 items, zetan 26.46902820178302, Utils.fnvhash64 = Math.abs of FNV-1a 64), SkewedLatestGenerator
(ZipfianGenerator(lastValue) over the acknowledged insert counter, returning max - rank), the
CoreWorkload key chooser bounds (insertstart .. insertstart + insertcount + expectednewkeys, inclusive,
a draw beyond the last inserted record drawn again), expectednewkeys = (int)(insertproportion x
operationcount x 2.0) and the operation choice over the raw proportions. Prints per workload: the
operation mix and the share of key-choosing operations that went to the top 1, 1000 and 10000 keys.

The reference values of tests/workload/ycsb_java_reference_test.cpp are the means over seeds 1-4 of
    python3 scripts/ycsb_java_reference.py 100000 500000 --seeds 4
"""
import collections
import random
import sys

ZIPF = 0.99
def zeta(n, theta, start=0, initial=0.0):
    s = initial
    for i in range(start, n):
        s += 1.0 / (i + 1) ** theta
    return s

class Zipfian:
    def __init__(self, mn, mx, theta=ZIPF, zetan=None):
        self.base = mn; self.items = mx - mn + 1; self.theta = theta
        self.zeta2 = zeta(2, theta); self.alpha = 1.0 / (1.0 - theta)
        self.zetan = zetan if zetan is not None else zeta(self.items, theta)
        self.countforzeta = self.items
        self.eta = (1 - (2.0 / self.items) ** (1 - theta)) / (1 - self.zeta2 / self.zetan)
    def next_long(self, rng, itemcount):
        if itemcount != self.countforzeta:
            if itemcount > self.countforzeta:
                self.zetan = zeta(itemcount, self.theta, self.countforzeta, self.zetan)
            else:
                self.zetan = zeta(itemcount, self.theta)
            self.countforzeta = itemcount
            self.eta = (1 - (2.0 / self.items) ** (1 - self.theta)) / (1 - self.zeta2 / self.zetan)
        u = rng.random(); uz = u * self.zetan
        if uz < 1.0: return self.base
        if uz < 1.0 + 0.5 ** self.theta: return self.base + 1
        return self.base + int(itemcount * (self.eta * u - self.eta + 1) ** self.alpha)
    def next(self, rng):
        return self.next_long(rng, self.items)

MASK = (1 << 64) - 1
def fnvhash64(v):
    h = 0xCBF29CE484222325
    for _ in range(8):
        h ^= v & 0xFF; h = (h * 0x100000001B3) & MASK; v >>= 8
    if h >> 63:  # Java long negative: Math.abs (Long.MIN_VALUE stays)
        if h != 1 << 63: h = (-h) & MASK
    return h

class Scrambled:
    def __init__(self, mn, mx):
        self.min = mn; self.itemcount = mx - mn + 1
        self.gen = Zipfian(0, 10_000_000_000, ZIPF, 26.46902820178302)
    def next(self, rng):
        return self.min + fnvhash64(self.gen.next(rng)) % self.itemcount

WORKLOADS = {  # read, update, insert, scan, rmw, distribution
    "a": (0.5, 0.5, 0, 0, 0, "zipfian"), "b": (0.95, 0.05, 0, 0, 0, "zipfian"), "c": (1, 0, 0, 0, 0, "zipfian"),
    "d": (0.95, 0, 0.05, 0, 0, "latest"), "e": (0, 0, 0.05, 0.95, 0, "zipfian"), "f": (0.5, 0, 0, 0, 0.5, "zipfian"),
    "d-zipfian": (0.95, 0, 0.05, 0, 0, "zipfian"), "insert-mix": (0.5, 0, 0.5, 0, 0, "zipfian"),
}

def simulate(name, records, ops, seed=1):
    read, update, insert, scan, rmw, dist = WORKLOADS[name]
    rng = random.Random(seed)
    expected_new = int(insert * ops * 2.0)
    last = records - 1  # the acknowledged counter's lastValue (one thread: every insert acknowledged)
    if dist == "zipfian":
        chooser = Scrambled(0, records + expected_new)
    else:
        latest = Zipfian(0, last - 1)  # ZipfianGenerator(lastValue) = (0, lastValue - 1)
    cuts = [read, read + update, read + update + insert, read + update + insert + scan]
    total = read + update + insert + scan + rmw
    mix = collections.Counter(); hits = collections.Counter(); chosen = 0
    for _ in range(ops):
        u = rng.random() * total  # DiscreteGenerator over the raw proportions
        op = "read" if u < cuts[0] else "update" if u < cuts[1] else "insert" if u < cuts[2] else "scan" if u < cuts[3] else "rmw"
        mix[op] += 1
        if op == "insert":
            last += 1; continue
        if dist == "zipfian":
            while True:
                k = chooser.next(rng)
                if k <= last: break
        else:
            k = last - latest.next_long(rng, last)
        hits[k] += 1; chosen += 1
    top = sorted(hits.values(), reverse=True)
    share = lambda n: sum(top[:n]) / chosen
    return {op: mix[op] / ops for op in ("read", "update", "insert", "scan", "rmw")}, (share(1), share(1000), share(10000))

if __name__ == "__main__":
    args = sys.argv[1:]
    seeds = 1
    if "--seeds" in args:
        i = args.index("--seeds")
        seeds = int(args[i + 1])
        del args[i:i + 2]
    records, ops = int(args[0]), int(args[1])
    for name in (args[2:] or WORKLOADS):
        runs = [simulate(name, records, ops, seed) for seed in range(1, seeds + 1)]
        mix = {k: sum(r[0][k] for r in runs) / seeds for k in runs[0][0]}
        shares = tuple(sum(r[1][i] for r in runs) / seeds for i in range(3))
        print(name, " ".join(f"{k}={v:.5f}" for k, v in mix.items() if v),
              "top1=%.5f top1000=%.5f top10000=%.5f" % shares)
