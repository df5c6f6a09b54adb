"""A latency table for a search space: every choice priced in context by the full simulator, then summed
along the network with the non-additive terms carried explicitly, vectorised over candidates.

Where latency is not a sum of independent per-block numbers (reference/dla.md s0.1 fact 13, s3.1, s3.4):
- **Placement and transitions.** A block's steps, the GPU<->DLA transitions into it and the launch of any DLA
  loadable it opens depend on what produced its input (the previous block's exit). Each unit (stem, block
  slot, head) is priced for every choice *given the previous unit's exit signature* (device, op and
  precision of the step writing its output: that sets the transition or reformat into the next unit), and
  the table records the signature the unit exits with, so the chain is followed step by step.
- **Per-loadable fixed cost.** A unit that starts a new DLA region pays that loadable's launch; one that
  continues the previous unit's region does not. The launch rows are part of the unit's priced cost, and
  how many loadables the unit opens is recorded.
- **Loadable limit.** At most `max_loadables_per_core` loadables fit a core; later regions fall back to the
  GPU. The table counts loadables along the chain and prices each unit per number of loadables left
  (0 .. 7): with none left it runs in its all-GPU form, with fewer than it opens it crosses the limit
  part-way. These prices come from builds with a lowered per-core limit that runs out at that point
  (every unit, choice and context of the designed candidates). A price never observed is interpolated
  between the unit's full and all-GPU forms and its candidates are flagged inexact.
- **Builds TensorRT times.** An INT8 build is timed against its FP16 alternative (builder.always_timed: the
  FP16 engine on the GPU, the GPU layers in FP16 on the DLA), and the faster one is the engine; which one
  wins depends on the whole network. So an INT8 table is two tables, one per build, each priced from its
  Plan without the choice, and each candidate gets the faster total. (The FP32 engine a GPU build is timed
  against where copies dominate is not followed.)
Designed candidates (greedy, full depth) put every block choice, with each input width, after each kind of
previous block. Prices come from full estimates of those whole networks (each build's Plan, costed as
`dlasim.estimate` costs it): each step's time is
charged to the unit of its first layer; reformats, transitions and launches to the unit of the layer step
that follows them (trailing output reformats to the last unit). Nothing is fitted.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .space import SearchSpace, unit_of

START = 0                # exit state before the stem: the network input on the host
BIG = 1 << 20            # a loadable limit no network reaches (prices units with every loadable available)


@dataclass(frozen=True)
class Observation:
    unit: int
    key: int
    state: object        # previous unit's exit signature
    free: int            # loadables still available when the unit starts
    cost_ms: float
    opened: int          # loadables launched by the unit
    exit: object


def _charge(steps) -> dict[int, list]:
    """unit -> [cost_ms, loadables opened, exit signature] from the rows of one estimate; the signature is
    what the next unit's input costs depend on: (device, op, precision) of the step writing the output."""
    out: dict[int, list] = {}
    pending_ms, pending_open = 0.0, 0
    last = None
    for r in steps:
        if r.kind != "layer" or not r.layers:
            pending_ms += r.time_ms
            pending_open += r.op == "Launch"
            continue
        u = unit_of(r.layers[0])
        acc = out.setdefault(u, [0.0, 0, None])
        acc[0] += pending_ms + r.time_ms
        acc[1] += pending_open
        acc[2] = (r.device, r.op, r.precision)
        pending_ms, pending_open = 0.0, 0
        last = u
    if last is not None:
        out[last][0] += pending_ms
        out[last][1] += pending_open
    return out


@dataclass
class LatencyTable:
    """Per-unit prices of a search space on one platform / device / precision / batch.

    `predict(X)` returns the predicted latency (ms) of every encoded candidate (rows of X);
    `predict(X, flags=True)` also returns a boolean array: True where every unit's price was observed in the
    candidate's own context (previous exit, loadables left), which is exact as long as a unit's steps
    depend on nothing further away (benchmarks/bench_nas.py checks this against full estimates); False
    where a price was interpolated.
    Exit states are the (device, op, precision) of the step writing a unit's output (`states` lists them).
    """
    space: SearchSpace
    hardware: str
    device: str
    precision: str
    batch: int
    limit: int
    states: list                       # exit signatures; index 0 is the network input
    cost: list[np.ndarray]             # unit -> (keys, states, free levels) ms
    opened: list[np.ndarray]           # unit -> (keys, states) loadables opened with every loadable available
    exit: list[np.ndarray]             # unit -> (keys, states, levels) exit state index
    known: list[np.ndarray]            # unit -> (keys, states, levels) priced from an observation
    builds: int = 0
    notes: list[str] = field(default_factory=list)
    # INT8 / best: the same space priced with the FP16 alternative TensorRT times (builder.always_timed);
    # predict keeps the faster per candidate
    alternative: "LatencyTable | None" = None
    _flat_cache: list | None = field(default=None, repr=False, compare=False)

    # ---- construction ------------------------------------------------------------------------------
    @classmethod
    def build(cls, space: SearchSpace, hw="orin-agx", device: str = "dla", precision: str = "int8",
              batch: int = 1, max_builds: int = 4000) -> "LatencyTable":
        """Price every choice of `space` in context with full estimates of designed candidates."""
        from ..build_options import BuildOptions
        from ..builder import always_timed
        from ..hardware import hardware
        plat = hardware(hw)
        tables = [cls._priced(space, plat, opts, gpu_p, max_builds)
                  for opts, gpu_p in always_timed(BuildOptions.of(device=device, precision=precision, batch=batch),
                                                  plat)]
        tab = tables[0]
        if len(tables) > 1:
            tab.alternative = tables[1]
            tab.builds += tables[1].builds
            tab.notes.append(f"also priced with its FP16 alternative ({tables[1].builds} full estimates), as "
                             "TensorRT times it; each candidate gets the faster")
        return tab

    @classmethod
    def _priced(cls, space: SearchSpace, plat, opts, gpu_precision: str | None, max_builds: int) -> "LatencyTable":
        """The table of one build (`opts`, Plan.gpu_precision), not timed against any other: its estimates are
        estimate_plan's of the passes' Plan (builder.build_engine would pick among the alternatives)."""
        from ..passes import cached_plan
        from ..simulate import estimate_plan
        device, precision, batch = opts.device, opts.precision, opts.batch
        limit = plat.dla.support.max_loadables_per_core if (plat.dla and device == "dla") else 0
        n_keys = _n_keys(space)
        designs = _designs(space, n_keys, max_builds)
        builds = 0

        def run(row, p, lim):
            nonlocal builds
            e = estimate_plan(cached_plan(space.build(row, batch=batch), p, opts, gpu_precision))
            builds += 1
            return _observe(space, row, _charge(e.steps), lim)

        levels = 8 if limit else 1
        tab = cls(space, plat.label, device, precision, batch, limit, [START],
                  [np.zeros((k, 1, levels)) for k in n_keys], [np.zeros((k, 1), np.int64) for k in n_keys],
                  [np.zeros((k, 1, levels), np.int64) for k in n_keys],
                  [np.zeros((k, 1, levels), bool) for k in n_keys])
        chains = []
        for row in designs:
            obs = run(row, _with_limit(plat, BIG) if limit else plat, BIG)
            for o in obs:
                tab._put(o, full=True)
            chains.append((row, obs))
        if limit:
            for row, _ in chains:                      # every unit with no loadable left
                for o in run(row, _with_limit(plat, 0), 0):
                    tab._put(o)
            # units that cross the limit part-way: a build whose limit runs out inside the unit, m loadables
            # after it starts, for every (unit, choice, state, m) not seen yet
            for row, obs in chains:
                used = 0
                for o in obs:
                    st = tab._state(o.state)
                    for m in range(min(o.opened, levels)):
                        if not tab.known[o.unit][o.key, st, m]:
                            for o2 in run(row, _with_limit(plat, used + m), used + m):
                                tab._put(o2)
                    used += o.opened
        tab.builds = builds
        tab.notes.append(f"priced from {builds} full estimates of {len(designs)} designed candidates; exact by "
                         "construction where every unit was priced in its context; otherwise interpolated "
                         "between the unit's full and all-GPU prices and flagged")
        return tab

    def _state(self, sig) -> int:
        """Index of an exit signature, growing the state axis of every unit's arrays for a new one."""
        if sig in self.states:
            return self.states.index(sig)
        self.states.append(sig)
        for arrs in (self.cost, self.opened, self.exit, self.known):
            for u, a in enumerate(arrs):
                pad = [(0, 0)] * a.ndim
                pad[1] = (0, 1)
                arrs[u] = np.pad(a, pad)
        return len(self.states) - 1

    def _put(self, o: Observation, full: bool = False) -> None:
        u, k, st = o.unit, o.key, self._state(o.state)
        ex = self._state(o.exit)
        levels = self.cost[u].shape[2]
        if full:                            # every level with at least the loadables the unit opens
            self.opened[u][k, st] = o.opened
            lo = min(o.opened, levels - 1)
        else:
            lo = min(o.free, levels - 1)
            if self.known[u][k, st, lo]:
                return
        hi = levels if full else lo + 1
        self.cost[u][k, st, lo:hi] = o.cost_ms
        self.exit[u][k, st, lo:hi] = ex
        self.known[u][k, st, lo:hi] = True

    # ---- prediction --------------------------------------------------------------------------------
    def predict(self, X, flags: bool = False):
        """Latency (ms) of each encoded candidate (one per row of X); with flags, also the exact mask."""
        X = np.asarray(X, dtype=np.int64)
        if X.ndim == 1:
            X = X[None, :]
        if X.shape[1] != self.space.n_columns:
            raise ValueError(f"{self.space.name}: candidates have {self.space.n_columns} columns, "
                             f"got {X.shape[1]}")
        total, exact = self._chain(X)
        if self.alternative is not None:         # the build TensorRT keeps: the faster of the two
            alt, alt_exact = self.alternative._chain(X)
            faster = alt < total
            total, exact = np.where(faster, alt, total), np.where(faster, alt_exact, exact)
        return (total, exact) if flags else total

    def _chain(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(latency ms, exact mask) of each candidate along this table's chain of unit prices."""
        keys, present = unit_keys(self.space, X)
        flat = self._flat()
        n = X.shape[0]
        ns, levels = len(self.states), self.cost[0].shape[2]
        top, limit = levels - 1, self.limit
        total = np.zeros(n)
        state = np.zeros(n, np.int64)
        used = np.zeros(n, np.int64)
        free = np.full(n, top if limit else 0, np.int64)
        exact = np.ones(n, bool)
        for u, (cost_f, exit_f, known_f, opened_f) in enumerate(flat):
            p = present[:, u]
            k = np.where(p, keys[:, u], self.cost[u].shape[0])     # an absent unit: the pass-through key
            i2 = k * ns + state
            i3 = i2 * levels + free
            c = cost_f[i3]
            nxt = exit_f[i3]
            ok = known_f[i3]
            if not ok.all():        # interpolate between the full price and a known all-GPU price
                c, nxt = self._interpolate(u, np.minimum(k, self.cost[u].shape[0] - 1), state, free, ok, c, nxt)
                exact &= ok
            total += c
            if limit:
                used += np.minimum(opened_f[i2], np.maximum(limit - used, 0))
                free = np.minimum(np.maximum(limit - used, 0), top)
            state = nxt
        return total, exact

    def _flat(self) -> list[tuple]:
        """Per unit, the price arrays flattened for one-index lookups, with one extra key for an absent unit
        (no cost, no loadables, exits in the state it was entered with)."""
        if self._flat_cache is None:
            out = []
            ns = len(self.states)
            for u in range(len(self.cost)):
                k, _, lv = self.cost[u].shape
                cost = np.concatenate([self.cost[u], np.zeros((1, ns, lv))])
                ex = np.concatenate([self.exit[u], np.repeat(np.arange(ns)[None, :, None], lv, axis=2)])
                known = np.concatenate([self.known[u], np.ones((1, ns, lv), bool)])
                opened = np.concatenate([self.opened[u], np.zeros((1, ns), np.int64)])
                out.append((cost.ravel(), ex.ravel(), known.ravel(), opened.ravel()))
            self._flat_cache = out
        return self._flat_cache

    def _interpolate(self, u, k, state, free, ok, c, nxt):
        cost_u, known_u, top = self.cost[u], self.known[u], self.cost[u].shape[2] - 1
        zero_known = known_u[k, :, 0]
        zs = np.argmax(zero_known, axis=1)
        zero = np.where(zero_known.any(axis=1), cost_u[k, zs, 0], cost_u[k, state, top])
        frac = np.clip(free / np.maximum(self.opened[u][k, state], 1), 0, 1)
        c = np.where(ok, c, zero + (cost_u[k, state, top] - zero) * frac)
        return c, np.where(ok, nxt, self.exit[u][k, zs, 0])

    def loadables(self, X) -> np.ndarray:
        """DLA loadables each candidate would need with no limit (before the limit sends any to the GPU)."""
        keys, present = unit_keys(self.space, np.asarray(X, dtype=np.int64).reshape(-1, self.space.n_columns))
        n = keys.shape[0]
        state = np.zeros(n, np.int64)
        count = np.zeros(n, np.int64)
        top = self.cost[0].shape[2] - 1
        for u in range(len(self.cost)):
            k, p = keys[:, u], present[:, u]
            count += np.where(p, self.opened[u][k, state], 0)
            state = np.where(p, self.exit[u][k, state, top], state)
        return count


def _with_limit(plat, n: int):
    sup = plat.dla.support.model_copy(update={"max_loadables_per_core": n})
    return plat.model_copy(update={"dla": plat.dla.model_copy(update={"support": sup})})


def _n_keys(space: SearchSpace) -> list[int]:
    W = max(len(st.widths) for st in space.stages)
    out = [1]
    for st in space.stages:
        out += [len(st.kernels) * len(st.expands) * len(st.acts) * W * W] * st.max_depth
    return out + [W]


def unit_keys(space: SearchSpace, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(keys, present): per candidate and unit, the index of the unit's choice in context of its input width,
    and whether the unit exists (block slots past the stage's depth do not)."""
    n = X.shape[0]
    W = max(len(st.widths) for st in space.stages)
    S = len(space.stages)
    units = 2 + sum(st.max_depth for st in space.stages)
    keys = np.zeros((n, units), np.int64)
    present = np.ones((n, units), bool)
    base, u = 2 * S, 1
    for s, st in enumerate(space.stages):
        depth = np.asarray(st.depths)[X[:, 2 * s]]
        w_own = X[:, 2 * s + 1]
        w_prev = X[:, 2 * s - 1] if s else np.zeros(n, np.int64)
        for j in range(st.max_depth):
            k, e, a = X[:, base], X[:, base + 1], X[:, base + 2]
            w_in = w_prev if j == 0 else w_own
            keys[:, u] = (((k * len(st.expands) + e) * len(st.acts) + a) * W + w_own) * W + w_in
            present[:, u] = depth > j
            base += 3
            u += 1
    keys[:, u] = X[:, 2 * S - 1]
    return keys, present


def _observe(space: SearchSpace, row, charged: dict, limit: int) -> list[Observation]:
    keys, present = unit_keys(space, np.asarray(row, dtype=np.int64)[None, :])
    out, state, used = [], START, 0
    for u in range(keys.shape[1]):
        if not present[0, u]:
            continue
        cost, opened, ex = charged.get(u, (0.0, 0, state))
        out.append(Observation(u, int(keys[0, u]), state, max(limit - used, 0), cost, opened, ex))
        used += opened
        state = ex
    return out


def _designs(space: SearchSpace, n_keys: list[int], max_builds: int) -> list[np.ndarray]:
    """Candidates that between them put every block choice (with each input width) after each kind of
    previous block: greedy, slot by slot at full depth, preferring a choice not yet seen at the slot in that
    context (the previous block's activation stands in for its exit), then one whose activation leaves the
    next slot a context with unseen choices. Stops after 30 candidates in a row that add nothing."""
    W = max(len(st.widths) for st in space.stages)
    S = len(space.stages)
    covered = [np.zeros((k, 2), bool) for k in n_keys]
    rows: list[np.ndarray] = []
    rng = np.random.default_rng(0)
    idle = 0
    while len(rows) < max_builds and idle < 30:
        row = np.zeros(space.n_columns, np.int64)
        progress = False
        base, u, ctx = 2 * S, 1, 0
        for s, st in enumerate(space.stages):
            row[2 * s] = len(st.depths) - 1
            w_prev = row[2 * s - 1] if s else 0
            n_c = len(st.kernels) * len(st.expands) * len(st.acts)
            open_w = [int((~covered[u][[(c * W + w) * W + w_prev for c in range(n_c)], ctx]).sum())
                      for w in range(len(st.widths))]
            best = max(open_w)
            w_own = int(rng.choice([w for w, n_u in enumerate(open_w) if n_u == best]))
            row[2 * s + 1] = w_own
            for j in range(st.max_depth):
                w_in = w_prev if j == 0 else w_own
                nxt = covered[u + 1] if u + 1 < len(covered) - 1 else None

                def score(c):
                    a = c % len(st.acts)
                    here = not covered[u][(c * W + w_own) * W + w_in, ctx]
                    later = nxt is not None and not nxt[:, 0 if a == 0 else 1].all()
                    return 2 * here + later
                scores = [score(c) for c in range(n_c)]
                top = max(scores)
                c = int(rng.choice([c for c in range(n_c) if scores[c] == top]))
                key = (c * W + w_own) * W + w_in
                progress |= not covered[u][key, ctx]
                covered[u][key, ctx] = True
                a = c % len(st.acts)
                row[base:base + 3] = (c // (len(st.acts) * len(st.expands)), (c // len(st.acts)) % len(st.expands), a)
                ctx = 0 if a == 0 else 1
                base += 3
                u += 1
        idle = 0 if progress else idle + 1
        if progress:
            rows.append(row)
    return rows
