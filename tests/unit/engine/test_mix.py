"""The heterogeneous GPU mix: worked examples by hand, the failure reasons, dominance pruning, and
seeded random problems checked against a brute-force enumeration of replica counts."""

from __future__ import annotations

import itertools
import math
import random

import numpy as np
import pytest
from scipy.optimize import linprog

from apps.engine.mix import (
    LOAD_TOLERANCE,
    MixInfeasible,
    MixOption,
    MixPlan,
    best_single,
    solve_mix,
    undominated,
)


def _opt(key, cost, caps, fixed=0.0, max_replicas=None):
    return MixOption(
        key=key,
        label=key.upper(),
        replica_cost_per_month=cost,
        requests_per_s_per_replica=tuple(caps),
        fixed_cost_per_month=fixed,
        max_replicas=max_replicas,
    )


def _replicas(plan):
    return {p.key: p.replicas for p in plan.parts}


# Two buckets, short 80% and long 20%, at 10 req/s: 8 req/s short, 2 req/s long.
SHARES = (0.8, 0.2)
RATE = 10.0
# A: $1,000 a replica-month, 4 req/s short, 0.5 long. B: $2,800, 8 short, 4 long.
A = _opt("a", 1000, (4, 0.5))
B = _opt("b", 2800, (8, 4))


class TestWorkedExample:
    # Single A: 8/4 + 2/0.5 = 2 + 4 = 6 replicas = $6,000.
    # Single B: 8/8 + 2/4 = 1.5 -> 2 replicas = $5,600, the best single type.
    # Mix: per req/s, short costs $250 on A and $350 on B, long $2,000 on A and $700 on B, so long
    # goes to B: 2/4 = half a B replica. One B then has half a replica spare = 4 req/s of short;
    # the other 4 req/s short fill one A exactly (4/4). 1 A + 1 B = $3,800, 32% below $5,600.
    # Nothing cheaper: y_B = 0 is single A ($6,000); y_B = 1, y_A = 0 leaves 1.5 replicas of
    # load on one B; y_B >= 2 is $5,600 or more. With y_A = y_B = 1 the split is forced: A's
    # row (8 - sB)/4 + (2 - lB)/0.5 <= 1 and B's row sB/8 + lB/4 <= 1 give lB = 2, sB = 4.
    def test_the_mix_beats_every_single_type(self):
        plan = solve_mix(rate_rps=RATE, shares=SHARES, options=[A, B])
        assert isinstance(plan, MixPlan)
        assert plan.status == "optimal"
        assert _replicas(plan) == {"a": 1, "b": 1}
        assert plan.monthly_cost == 3800
        a, b = plan.parts
        assert a.bucket_shares == pytest.approx((0.5, 0.0))
        assert b.bucket_shares == pytest.approx((0.5, 1.0))
        assert a.load_replicas == pytest.approx(1.0)
        assert b.load_replicas == pytest.approx(1.0)
        assert (a.monthly_cost, b.monthly_cost) == (1000, 2800)

    def test_best_single_is_b_at_two_replicas(self):
        single = best_single(rate_rps=RATE, shares=SHARES, options=[A, B])
        assert single is not None
        assert single.status == "single"
        assert _replicas(single) == {"b": 2}
        assert single.monthly_cost == 5600
        assert single.parts[0].bucket_shares == (1.0, 1.0)
        assert single.parts[0].load_replicas == pytest.approx(1.5)

    def test_a_mix_of_one_option_equals_best_single(self):
        # A2 = $1,000, 4 short, 2 long. Per req/s it is cheaper than B = $3,000 (8 short, 4 long:
        # 3x the price for 2x the speed) on both buckets, so B has nothing to offer.
        # Single A2: 8/4 + 2/2 = 3 replicas = $3,000; single B: 1 + 0.5 -> 2
        # replicas = $6,000.
        a2, b3 = _opt("a", 1000, (4, 2)), _opt("b", 3000, (8, 4))
        plan = solve_mix(rate_rps=RATE, shares=SHARES, options=[a2, b3])
        single = best_single(rate_rps=RATE, shares=SHARES, options=[a2, b3])
        assert isinstance(plan, MixPlan) and single is not None
        assert _replicas(plan) == _replicas(single) == {"a": 3}
        assert plan.monthly_cost == single.monthly_cost == 3000


class TestFixedCost:
    # B's fixed cost is paid by the mix (1 A + 1 B = $3,800 + f) and by single B ($5,600 + f),
    # not by single A ($6,000). f = $2,000: mix $5,800 < $6,000. f = $2,500: mix $6,300, so A
    # alone at $6,000 wins although B is in the option list.
    @pytest.mark.parametrize(
        ("fixed", "replicas", "cost"),
        [(2000, {"a": 1, "b": 1}, 5800), (2500, {"a": 6}, 6000)],
    )
    def test_a_second_option_is_used_only_when_it_saves_more_than_its_fixed_cost(
        self, fixed, replicas, cost
    ):
        b = _opt("b", 2800, (8, 4), fixed=fixed)
        plan = solve_mix(rate_rps=RATE, shares=SHARES, options=[A, b])
        assert isinstance(plan, MixPlan)
        assert _replicas(plan) == replicas
        assert plan.monthly_cost == cost


class TestInfeasible:
    def test_a_bucket_no_option_serves_is_reported(self):
        a, b = _opt("a", 1, (4, 0, 1)), _opt("b", 2, (8, 0, 0))
        got = solve_mix(rate_rps=RATE, shares=(0.5, 0.3, 0.2), options=[a, b])
        assert isinstance(got, MixInfeasible)
        assert got.unservable_buckets == (1,)
        assert "bucket(s) 1" in got.reason
        assert best_single(rate_rps=RATE, shares=(0.5, 0.3, 0.2), options=[a, b]) is None

    def test_an_unservable_bucket_with_no_share_does_not_matter(self):
        a = _opt("a", 100, (4, 0))
        plan = solve_mix(rate_rps=RATE, shares=(1.0, 0.0), options=[a])
        assert isinstance(plan, MixPlan)
        assert _replicas(plan) == {"a": 3}  # 10 / 4 = 2.5 -> 3
        assert plan.parts[0].bucket_shares == (1.0, 0.0)

    def test_too_few_max_replicas_is_reported_as_such(self):
        # One A and one B carry 10 req/s exactly (the worked example). At 11 req/s (8.8 short,
        # 2.2 long) A's row gives sB/4 + 2 lB >= 5.6 and B's sB/4 + lB/2 <= 2, so lB >= 2.4,
        # more than the 2.2 there is: no split fits one of each.
        a, b = _opt("a", 1000, (4, 0.5), max_replicas=1), _opt("b", 2800, (8, 4), max_replicas=1)
        assert isinstance(solve_mix(rate_rps=RATE, shares=SHARES, options=[a, b]), MixPlan)
        got = solve_mix(rate_rps=11, shares=SHARES, options=[a, b])
        assert isinstance(got, MixInfeasible)
        assert got.unservable_buckets == ()
        assert "max_replicas" in got.reason


class TestCapacityZero:
    def test_an_option_that_cannot_serve_a_bucket_never_gets_its_requests(self):
        # A is ten times cheaper and would take everything (5/10 + 5/10 = 1 replica, $100) but
        # cannot meet the target on long requests. Long goes to B: 5/10 = half a replica; the
        # spare half takes the 5 req/s of short, so one B ($1,000) and no A.
        a, b = _opt("a", 100, (10, 0)), _opt("b", 1000, (10, 10))
        plan = solve_mix(rate_rps=10, shares=(0.5, 0.5), options=[a, b])
        assert isinstance(plan, MixPlan)
        assert _replicas(plan) == {"b": 1}
        assert plan.monthly_cost == 1000


class TestUndominated:
    def test_the_cheaper_of_two_identical_capacity_vectors_is_kept(self):
        opts = [_opt("dear", 1100, (4, 1)), _opt("cheap", 1000, (4, 1)), _opt("same", 1000, (4, 1))]
        assert undominated((0.5, 0.5), opts) == (1,)

    def test_a_lower_fixed_cost_keeps_a_dearer_replica(self):
        opts = [_opt("a", 1000, (4, 1), fixed=500), _opt("b", 1100, (4, 1), fixed=0)]
        assert undominated((0.5, 0.5), opts) == (0, 1)

    def test_a_faster_cheaper_option_removes_a_slower_one(self):
        opts = [_opt("slow", 1000, (4, 1)), _opt("fast", 900, (5, 1)), _opt("odd", 900, (3, 2))]
        assert undominated((0.5, 0.5), opts) == (1, 2)

    def test_only_buckets_with_a_share_count(self):
        opts = [_opt("slow", 1000, (4, 9)), _opt("fast", 900, (5, 1))]
        assert undominated((1.0, 0.0), opts) == (1,)
        assert undominated((0.5, 0.5), opts) == (0, 1)

    def test_an_option_with_max_replicas_prunes_nothing(self):
        opts = [_opt("capped", 900, (5, 1), max_replicas=1), _opt("slow", 1000, (4, 1))]
        assert undominated((0.5, 0.5), opts) == (0, 1)

    def test_an_option_serving_no_bucket_is_dropped(self):
        assert undominated((1.0, 0.0), [_opt("a", 1, (0, 5)), _opt("b", 2, (1, 0))]) == (1,)


class TestSingleOptionBound:
    # Best single is B at 2 replicas, $5,600 (TestWorkedExample). C serves everything at once but
    # one replica and its fixed cost come to $5,700: no plan using it can beat single B.
    C = _opt("c", 5000, (100, 100), fixed=700)

    def test_an_option_dearer_on_one_replica_than_the_best_single_plan_is_not_considered(self):
        plan = solve_mix(rate_rps=RATE, shares=SHARES, options=[A, B, self.C])
        assert isinstance(plan, MixPlan)
        assert plan.options_considered == 2
        assert _replicas(plan) == {"a": 1, "b": 1}

    def test_an_option_at_the_bound_is_still_considered(self):
        c = _opt("c", 4900, (100, 100), fixed=700)  # $5,600: as dear as single B, kept
        plan = solve_mix(rate_rps=RATE, shares=SHARES, options=[A, B, c])
        assert isinstance(plan, MixPlan)
        assert plan.options_considered == 3
        assert plan.monthly_cost == 3800

    def test_the_bound_never_drops_the_cheapest_plan(self):
        # Cheaper than single B, C alone is the plan ($3,500 < $3,800 for A + B).
        c = _opt("c", 3000, (100, 100), fixed=500)
        plan = solve_mix(rate_rps=RATE, shares=SHARES, options=[A, B, c])
        assert isinstance(plan, MixPlan)
        assert _replicas(plan) == {"c": 1}
        assert plan.monthly_cost == 3500


def _brute_force(rate, shares, options):
    """The least monthly cost over every replica vector up to each option's need (or cap), each
    checked for a feasible split with an LP. Vectors are tried cheapest first."""
    used = [b for b, s in enumerate(shares) if s > 0]
    ranges = []
    for o in options:
        full = sum(
            shares[b] * rate / o.requests_per_s_per_replica[b]
            for b in used
            if o.requests_per_s_per_replica[b] > 0
        )
        top = math.ceil(full) if o.max_replicas is None else o.max_replicas
        ranges.append(range(top + 1))

    def cost(ys):
        return sum(
            o.replica_cost_per_month * y + (o.fixed_cost_per_month if y else 0)
            for o, y in zip(options, ys, strict=True)
        )

    for ys in sorted(itertools.product(*ranges), key=cost):
        # Variables x[b, o] for used buckets; rows: each bucket sums to 1, each option's load
        # <= y. A bucket an option cannot serve has x bounded to 0.
        nb, no = len(used), len(options)
        a_eq = np.zeros((nb, nb * no))
        a_ub = np.zeros((no, nb * no))
        bounds = []
        for r, b in enumerate(used):
            for k, o in enumerate(options):
                j = r * no + k
                a_eq[r, j] = 1
                cap = o.requests_per_s_per_replica[b]
                if cap > 0:
                    a_ub[k, j] = shares[b] * rate / cap
                    bounds.append((0, 1))
                else:
                    bounds.append((0, 0))
        res = linprog(
            np.zeros(nb * no),
            A_ub=a_ub,
            b_ub=np.array(ys, dtype=float) + 1e-9,
            A_eq=a_eq,
            b_eq=np.ones(nb),
            bounds=bounds,
        )
        if res.status == 0:
            return cost(ys)
    return None


def _random_problem(rng):
    """2-3 buckets, 2-3 options each fastest per dollar on a different bucket (so that mixes
    happen), fixed costs and a replica cap now and then, and a dominated copy of one option."""
    n_buckets = rng.randint(2, 3)
    raw = [rng.choice([1, 2, 3, 5]) for _ in range(n_buckets)]
    shares = tuple(r / sum(raw) for r in raw)
    options = []
    for k in range(rng.randint(2, 3)):
        strong = k % n_buckets
        caps = [
            rng.choice([2, 4, 6]) if b == strong else rng.choice([0, 0.5, 1, 2])
            for b in range(n_buckets)
        ]
        options.append(
            _opt(
                f"o{k}",
                rng.choice([100, 250, 400, 700]),
                caps,
                fixed=rng.choice([0, 0, 50, 300]),
                max_replicas=rng.choice([None, None, None, 3]),
            )
        )
    # A dominated copy (dearer, no faster) for the pruning to remove.
    first = options[0]
    options.append(
        _opt(
            "copy",
            first.replica_cost_per_month + rng.choice([0, 50]),
            [c * rng.choice([0.5, 1]) for c in first.requests_per_s_per_replica],
            fixed=first.fixed_cost_per_month,
        )
    )
    rng.shuffle(options)
    return rng.choice([2.0, 3.0, 5.0, 7.5]), shares, options


def _assert_plan_keeps_every_constraint(plan, rate, shares, options):
    by_key = {o.key: o for o in options}
    for b, s in enumerate(shares):
        if s > 0:
            assert math.fsum(p.bucket_shares[b] for p in plan.parts) == pytest.approx(1.0)
    total = 0.0
    for p in plan.parts:
        o = by_key[p.key]
        load = math.fsum(
            x * shares[b] * rate / o.requests_per_s_per_replica[b]
            for b, x in enumerate(p.bucket_shares)
            if x > 0
        )
        for b, x in enumerate(p.bucket_shares):
            if o.requests_per_s_per_replica[b] == 0:
                assert x == 0
        assert load == pytest.approx(p.load_replicas)
        assert load <= p.replicas + LOAD_TOLERANCE
        assert o.max_replicas is None or p.replicas <= o.max_replicas
        total += o.replica_cost_per_month * p.replicas + o.fixed_cost_per_month
    assert plan.monthly_cost == pytest.approx(total)


@pytest.mark.parametrize("seed", range(40))
def test_solve_mix_matches_brute_force_on_small_problems(seed):
    rng = random.Random(seed)
    rate, shares, options = _random_problem(rng)
    expected = _brute_force(rate, shares, options)
    got = solve_mix(rate_rps=rate, shares=shares, options=options)
    if expected is None:
        assert isinstance(got, MixInfeasible)
        return
    assert isinstance(got, MixPlan)
    assert got.monthly_cost == pytest.approx(expected)
    _assert_plan_keeps_every_constraint(got, rate, shares, options)
    single = best_single(rate_rps=rate, shares=shares, options=options)
    if single is not None:
        _assert_plan_keeps_every_constraint(single, rate, shares, options)
        assert got.monthly_cost <= single.monthly_cost + 1e-6


def test_bad_input_raises_value_error():
    with pytest.raises(ValueError, match="one a bucket"):
        solve_mix(rate_rps=1, shares=(0.5, 0.5), options=[_opt("a", 1, (1,))])
    with pytest.raises(ValueError, match="rate_rps"):
        best_single(rate_rps=0, shares=(1.0,), options=[_opt("a", 1, (1,))])
