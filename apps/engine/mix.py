"""The heterogeneous GPU mix: which GPU options, how many replicas of each, and which share of each
request-size bucket goes to which, at the least cost per month.

The integer program is Mélange's (Griggs et al., "Mélange: Cost Efficient Large Language Model
Serving by Exploiting GPU Heterogeneity", arXiv 2404.14527, section 5); AIBrix's GPU optimizer
(vllm-project/aibrix, gpu_optimizer/optimizer/solver/melange) reuses it unchanged. With buckets b
(share s_b of a rate of R requests/s) and options o (capacity cap[b,o] requests/s per replica at
the latency target, replica cost c_o and fixed cost f_o per month):

    minimise    sum_o c_o * y_o + sum_o f_o * z_o
    subject to  sum_o x[b,o] = 1                                   every bucket with s_b > 0
                sum_b x[b,o] * s_b * R / (cap[b,o] * U) - y_o <= 0  every option (load fits)
                y_o - M_o * z_o <= 0                                every option with f_o > 0
                x[b,o] in [0, 1], y_o integer in [0, M_o], z_o binary

where U is the target utilisation (MIX_TARGET_UTILISATION) and M_o is the option's max_replicas,
or, without one, ceil(sum_b s_b * R / (cap[b,o] * U)) (at least 1): the replicas it would need
to carry every bucket it can serve, which no optimal plan exceeds. x[b,o] exists only where
cap[b,o] > 0 (the same as bounding it to 0). Solved with scipy.optimize.milp (HiGHS), the
constraint matrix built in scipy.sparse.

Where we differ from Mélange:
- x is continuous: a load balancer can send any fraction of a bucket's requests to an option.
  Mélange cuts each bucket into `slice_factor` equal slices and makes x binary per slice (its
  README: 4 slices are enough); continuous x is that with infinitely many slices, and easier.
- Options carry a fixed monthly cost (a quote's network and monthly extras, paid once if the
  option is used at all) through the binary z, and may cap their replicas (max_replicas).
  Mélange has neither. Costs are per month, not per hour.
- Dominated options are pruned before the solve (below), so a call can pass every quote.

Pruning. Option p dominates option o when, on every bucket with a share, cap[b,p] >= cap[b,o],
c_p <= c_o, f_p <= f_o, and p has no max_replicas (identical options: the first one given
dominates the rest). Any plan using o can then move o's load onto p with y_p + y_o replicas at no
more cost, so dropping o loses nothing. A capped p is never used to prune: its cap might be why o
is needed. To stay fast on ~2,000 quotes, options are first grouped by capacity vector (quotes of
one GPU type and count share one), the cheapest few of each group kept by a sort, and only those
compared pairwise (numpy, survivors x survivors x buckets). Then a bound: the best single-option
plan (`best_single`'s arithmetic) is a feasible mix, and any plan that uses option o pays at least
one replica of it and its fixed cost, c_o + f_o. An option with c_o + f_o above the best single
plan's cost is in no optimal plan, so it is dropped too. On the 67 real-time briefs
bench/recompute.py seeds, this left about a seventh of the options and cut HiGHS's time per
solve about sevenfold (42 to 6 ms), with the same plans.

Exactness. milp returns floats. The plan is rebuilt in plain Python: splits below
LOAD_TOLERANCE are dropped and each bucket's row scaled back to sum to 1, each option's load is
recomputed, and its replicas are set to ceil(load / U - LOAD_TOLERANCE). That is the solver's
rounded count, except that a count rounding left a hair short of the load is bumped by one, and a
count above what the load needs (only possible where a replica costs nothing) comes down. The
reported cost is recomputed from those integers.

Results. `solve_mix` returns a `MixPlan`, or a `MixInfeasible` that says why not: the buckets no
option can serve at the latency target (`unservable_buckets`), or that every bucket can be served
but the options' max_replicas leave too little capacity, or that the time limit passed with no
plan. `best_single` is the baseline the mix's saving is reported against: the cheapest plan on
one option alone, under the same request-size model, by arithmetic.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.optimize import Bounds, LinearConstraint, milp
from scipy.sparse import coo_array

# A guard, not a budget: HiGHS solves the problems gpuselect builds (10 buckets, a few hundred
# options after pruning) in well under a second (bench/mix.py). Past this it returns its best
# plan so far, reported with status "time_limit" and its gap.
MIX_TIME_LIMIT_S = 5.0

# HiGHS's relative MIP gap at which it stops (its default is 1e-4). 1e-6 of a monthly bill is
# below a cent on anything gpuselect prices, so the plan is optimal as far as money goes.
MIX_MIP_REL_GAP = 1e-6

# The share of a replica's latency-bounded capacity the plan may load it to. 1.0: the capacities
# passed in are already "requests/s at the brief's latency target" (the capacity model's figure,
# or a benchmark run's), which is the headroom; Mélange's program also packs load up to the
# replica count. A caller wanting room for bursts above the brief's rate passes less.
MIX_TARGET_UTILISATION = 1.0

# Loads, splits and replica counts are compared with this slack: 0.8 * 10 / 5 is
# 1.6000000000000003 in floating point, which must still fit in ceil(1.6) = 2 replicas.
LOAD_TOLERANCE = 1e-9


@dataclass(frozen=True, kw_only=True, slots=True)
class MixOption:
    """One way to add replicas: a quote at one GPU count, say.

    requests_per_s_per_replica has one figure per bucket, in bucket order: the requests/s one
    replica serves while meeting the brief's latency target at that bucket's size; 0 where it
    cannot meet the target at that size, or the model does not fit.
    """

    key: str
    label: str
    replica_cost_per_month: float
    requests_per_s_per_replica: tuple[float, ...]
    fixed_cost_per_month: float = 0.0
    max_replicas: int | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class MixPart:
    """One option in a plan. bucket_shares: the share of each bucket's requests it serves (0 for
    a bucket with no share). load_replicas: replicas' worth of load it carries at full capacity,
    so load_replicas / replicas is its utilisation."""

    key: str
    label: str
    replicas: int
    bucket_shares: tuple[float, ...]
    load_replicas: float
    monthly_cost: float


@dataclass(frozen=True, kw_only=True, slots=True)
class MixPlan:
    """parts: the options with replicas, in the order given. status: "optimal", "time_limit"
    (the best plan found in time; gap says how far from optimal it may be) or "single" (from
    best_single). monthly_cost is recomputed from the integer replica counts."""

    parts: tuple[MixPart, ...]
    monthly_cost: float
    solve_s: float
    status: str
    gap: float
    options_considered: int = 0


@dataclass(frozen=True, kw_only=True, slots=True)
class MixInfeasible:
    """No plan. unservable_buckets: indices of the buckets with a share that no option can serve
    at the latency target (empty when the reason is something else)."""

    unservable_buckets: tuple[int, ...]
    reason: str


def _check(rate_rps: float, shares: Sequence[float], options: Sequence[MixOption]) -> None:
    if not (math.isfinite(rate_rps) and rate_rps > 0):
        raise ValueError(f"rate_rps must be above 0, not {rate_rps}")
    if not shares or any(not (math.isfinite(s) and s >= 0) for s in shares) or sum(shares) <= 0:
        raise ValueError("shares must be numbers >= 0, not all 0")
    for o in options:
        if len(o.requests_per_s_per_replica) != len(shares):
            raise ValueError(
                f"{o.key}: {len(o.requests_per_s_per_replica)} capacities, not one a bucket"
            )
        if any(not (math.isfinite(c) and c >= 0) for c in o.requests_per_s_per_replica):
            raise ValueError(f"{o.key}: capacities must be numbers >= 0")
        if not (o.replica_cost_per_month >= 0 and o.fixed_cost_per_month >= 0):
            raise ValueError(f"{o.key}: costs must be >= 0")
        if o.max_replicas is not None and o.max_replicas < 0:
            raise ValueError(f"{o.key}: max_replicas must be >= 0")


def unservable_buckets(shares: Sequence[float], options: Sequence[MixOption]) -> tuple[int, ...]:
    """Indices of the buckets with a share that no option can serve (capacity 0 on all)."""
    return tuple(
        b
        for b, s in enumerate(shares)
        if s > 0 and not any(o.requests_per_s_per_replica[b] > 0 for o in options)
    )


def undominated(shares: Sequence[float], options: Sequence[MixOption]) -> tuple[int, ...]:
    """Indices, ascending, of the options no other option dominates (module docstring), leaving
    out options that can serve no bucket with a share."""
    used = [b for b, s in enumerate(shares) if s > 0]
    groups: dict[tuple[float, ...], list[int]] = {}
    for i, o in enumerate(options):
        cap = tuple(o.requests_per_s_per_replica[b] for b in used)
        if any(c > 0 for c in cap):
            groups.setdefault(cap, []).append(i)
    # Within a group (one capacity vector), sorted by replica cost, then fixed cost, then order
    # given: an option is dominated exactly when an unlimited option before it has a fixed cost
    # no higher than its own.
    kept: list[int] = []
    for members in groups.values():
        members.sort(
            key=lambda i: (options[i].replica_cost_per_month, options[i].fixed_cost_per_month, i)
        )
        least_fixed = math.inf
        for i in members:
            o = options[i]
            if o.fixed_cost_per_month < least_fixed:
                kept.append(i)
            if o.max_replicas is None:
                least_fixed = min(least_fixed, o.fixed_cost_per_month)
    kept.sort()
    if len(kept) < 2:
        return tuple(kept)
    # Across groups the capacity vectors differ, so domination needs cap >= everywhere and
    # cost <= (no ties left to break): p dominates o when all of cap[p] >= cap[o], rc, fixed.
    caps = np.array([[options[i].requests_per_s_per_replica[b] for b in used] for i in kept])
    rc = np.array([options[i].replica_cost_per_month for i in kept])
    fx = np.array([options[i].fixed_cost_per_month for i in kept])
    free = np.array([options[i].max_replicas is None for i in kept])
    dominated = np.zeros(len(kept), dtype=bool)
    for p in np.flatnonzero(free):
        hit = (caps <= caps[p]).all(axis=1) & (rc >= rc[p]) & (fx >= fx[p])
        hit[p] = False
        dominated |= hit
    return tuple(i for i, d in zip(kept, dominated, strict=True) if not d)


def _plan(
    *,
    rate_rps: float,
    shares: Sequence[float],
    options: Sequence[MixOption],
    split: dict[int, list[float]],
    target_utilisation: float,
    solve_s: float,
    status: str,
    gap: float,
    considered: int,
) -> MixPlan:
    """A plan from option index -> share of each bucket it serves, checked in plain Python."""
    n = len(shares)
    # Drop hair-thin splits and scale each bucket's row back to 1.
    for xs in split.values():
        for b in range(n):
            if xs[b] < LOAD_TOLERANCE:
                xs[b] = 0.0
    for b in range(n):
        if shares[b] > 0:
            total = math.fsum(xs[b] for xs in split.values())
            for xs in split.values():
                xs[b] /= total
    parts = []
    for i in sorted(split):
        o, xs = options[i], split[i]
        load = math.fsum(
            xs[b] * shares[b] * rate_rps / o.requests_per_s_per_replica[b]
            for b in range(n)
            if xs[b] > 0
        )
        replicas = math.ceil(load / target_utilisation - LOAD_TOLERANCE)
        if replicas <= 0:
            continue
        cost = o.replica_cost_per_month * replicas + o.fixed_cost_per_month
        parts.append(
            MixPart(
                key=o.key,
                label=o.label,
                replicas=replicas,
                bucket_shares=tuple(xs),
                load_replicas=load,
                monthly_cost=cost,
            )
        )
    return MixPlan(
        parts=tuple(parts),
        monthly_cost=math.fsum(p.monthly_cost for p in parts),
        solve_s=solve_s,
        status=status,
        gap=gap,
        options_considered=considered,
    )


def solve_mix(
    *,
    rate_rps: float,
    shares: Sequence[float],
    options: Sequence[MixOption],
    target_utilisation: float = MIX_TARGET_UTILISATION,
    time_limit_s: float = MIX_TIME_LIMIT_S,
) -> MixPlan | MixInfeasible:
    """The cheapest mix of options serving rate_rps requests/s split into buckets by shares (the
    module docstring has the program). shares need not sum to 1 exactly: a bucket's rate is
    share * rate_rps. Raises ValueError for inconsistent input (a capacity vector of the wrong
    length, a negative figure)."""
    started = time.perf_counter()
    _check(rate_rps, shares, options)
    if not 0 < target_utilisation <= 1:
        raise ValueError("target_utilisation must be in (0, 1]")
    missing = unservable_buckets(shares, options)
    if missing:
        names = ", ".join(str(b) for b in missing)
        return MixInfeasible(
            unservable_buckets=missing,
            reason=f"no option meets the latency target at the size of bucket(s) {names}",
        )
    keep = undominated(shares, options)
    single = best_single_cost(
        rate_rps=rate_rps, shares=shares, options=options, target_utilisation=target_utilisation
    )
    if single is not None:
        bound = single[0]
        keep = tuple(
            i
            for i in keep
            if options[i].replica_cost_per_month + options[i].fixed_cost_per_month <= bound
        )
    used = [b for b, s in enumerate(shares) if s > 0]

    # Variables: the x[b,o] that exist (cap > 0), then y[o], then z[o] for options with a fixed
    # cost. Rows: one equality per used bucket, one load row per option, one y <= M z row per z.
    x_of: list[tuple[int, int]] = []  # (bucket, position in keep)
    coef: list[float] = []  # load coefficient s_b * R / (cap * U)
    for k, i in enumerate(keep):
        cap = options[i].requests_per_s_per_replica
        for b in used:
            if cap[b] > 0:
                x_of.append((b, k))
                coef.append(shares[b] * rate_rps / (cap[b] * target_utilisation))
    nx, ny = len(x_of), len(keep)
    with_fixed = [k for k, i in enumerate(keep) if options[i].fixed_cost_per_month > 0]
    nz = len(with_fixed)
    full_load = np.zeros(ny)
    np.add.at(full_load, [k for _, k in x_of], coef)
    big_m = np.array(
        [
            options[i].max_replicas
            if options[i].max_replicas is not None
            else max(1, math.ceil(full_load[k]))
            for k, i in enumerate(keep)
        ],
        dtype=float,
    )

    bucket_row = {b: r for r, b in enumerate(used)}
    rows: list[int] = []
    cols: list[int] = []
    vals: list[float] = []
    for j, ((b, k), a) in enumerate(zip(x_of, coef, strict=True)):
        rows += [bucket_row[b], len(used) + k]
        cols += [j, j]
        vals += [1.0, a]
    for k in range(ny):
        rows.append(len(used) + k)
        cols.append(nx + k)
        vals.append(-1.0)
    for r, k in enumerate(with_fixed):
        row = len(used) + ny + r
        rows += [row, row]
        cols += [nx + k, nx + ny + r]
        vals += [1.0, -big_m[k]]
    n_rows = len(used) + ny + nz
    a_matrix = coo_array((vals, (rows, cols)), shape=(n_rows, nx + ny + nz)).tocsr()
    lower = np.concatenate([np.ones(len(used)), np.full(ny + nz, -np.inf)])
    upper = np.concatenate([np.ones(len(used)), np.zeros(ny + nz)])

    c = np.concatenate(
        [
            np.zeros(nx),
            [options[i].replica_cost_per_month for i in keep],
            [options[keep[k]].fixed_cost_per_month for k in with_fixed],
        ]
    )
    integrality = np.concatenate([np.zeros(nx), np.ones(ny + nz)])
    bounds = Bounds(np.zeros(nx + ny + nz), np.concatenate([np.ones(nx), big_m, np.ones(nz)]))
    res = milp(
        c,
        integrality=integrality,
        bounds=bounds,
        constraints=LinearConstraint(a_matrix, lower, upper),
        options={"time_limit": time_limit_s, "mip_rel_gap": MIX_MIP_REL_GAP, "disp": False},
    )
    if res.x is None:
        if res.status == 2:
            reason = "every bucket can be served, but the options' max_replicas are too few"
        else:
            reason = f"the solver stopped with no plan: {res.message}"
        return MixInfeasible(unservable_buckets=(), reason=reason)

    split: dict[int, list[float]] = {}
    for j, (b, k) in enumerate(x_of):
        value = min(1.0, max(0.0, float(res.x[j])))
        if value > 0:
            split.setdefault(keep[k], [0.0] * len(shares))[b] = value
    gap = float(res.mip_gap) if res.mip_gap is not None else 0.0
    return _plan(
        rate_rps=rate_rps,
        shares=shares,
        options=options,
        split=split,
        target_utilisation=target_utilisation,
        solve_s=time.perf_counter() - started,
        status="optimal" if res.status == 0 else "time_limit",
        gap=gap,
        considered=len(keep),
    )


def best_single(
    *,
    rate_rps: float,
    shares: Sequence[float],
    options: Sequence[MixOption],
    target_utilisation: float = MIX_TARGET_UTILISATION,
) -> MixPlan | None:
    """The cheapest plan that sends every request to one option: replicas =
    ceil(sum_b share_b * rate / (cap_b * U) - LOAD_TOLERANCE). None when no option can serve
    every bucket with a share within its max_replicas. Ties go to the option given first."""
    started = time.perf_counter()
    _check(rate_rps, shares, options)
    best = best_single_cost(
        rate_rps=rate_rps, shares=shares, options=options, target_utilisation=target_utilisation
    )
    if best is None:
        return None
    i = best[1]
    return _plan(
        rate_rps=rate_rps,
        shares=shares,
        options=options,
        split={i: [1.0 if s > 0 else 0.0 for s in shares]},
        target_utilisation=target_utilisation,
        solve_s=time.perf_counter() - started,
        status="single",
        gap=0.0,
        considered=len(options),
    )


def best_single_cost(
    *,
    rate_rps: float,
    shares: Sequence[float],
    options: Sequence[MixOption],
    target_utilisation: float = MIX_TARGET_UTILISATION,
) -> tuple[float, int] | None:
    """(cost a month, index) of the cheapest option that serves every request alone, within its
    max_replicas; the first given on a tie. None when there is none."""
    best: tuple[float, int] | None = None
    for i, o in enumerate(options):
        cap = o.requests_per_s_per_replica
        if any(s > 0 and cap[b] <= 0 for b, s in enumerate(shares)):
            continue
        load = math.fsum(s * rate_rps / cap[b] for b, s in enumerate(shares) if s > 0)
        replicas = math.ceil(load / target_utilisation - LOAD_TOLERANCE)
        if o.max_replicas is not None and replicas > o.max_replicas:
            continue
        cost = o.replica_cost_per_month * replicas + o.fixed_cost_per_month
        if best is None or cost < best[0]:
            best = (cost, i)
    return best
