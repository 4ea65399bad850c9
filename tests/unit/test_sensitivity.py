"""apps.engine.sensitivity: the value at which each assumption changes the winner, checked by
costing either side of it with the candidate costing itself; the tornado and the totals."""

from dataclasses import replace
from decimal import Decimal as D

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from apps.engine.costing import (
    ApiRouteTerms,
    PricingTerm,
    cost_api_candidate,
    cost_gpu_candidate,
)
from apps.engine.sensitivity import Assumption, LeadingCandidate, sensitivity
from tests.unit.costing.builders import finance, quote, realtime_capacity, realtime_demand

DEMAND = realtime_demand()
FINANCE = finance()
CAPACITY = realtime_capacity()
ROUTE = ApiRouteTerms(input_price_per_mtok=D("0.5"), output_price_per_mtok=D("1.5"))


def gpu(key, q, capacity=CAPACITY, currency="USD", fx_rate=D(1)):
    return LeadingCandidate(key=key, quote=q, capacity=capacity, currency=currency, fx_rate=fx_rate)


def api(key="api", route=ROUTE):
    return LeadingCandidate(key=key, route=route, currency="USD")


def unit(c, demand=DEMAND, fin=FINANCE, **quote_changes):
    if c.route is not None:
        cost = cost_api_candidate(demand=demand, route=c.route, finance=fin)
    else:
        q = replace(c.quote, **quote_changes) if quote_changes else c.quote
        cost = cost_gpu_candidate(demand=demand, capacity=c.capacity, quote=q, finance=fin)
    return cost.effective_unit_cost if cost.meets_constraints else None


def finding(result, assumption, subject=None):
    (found,) = [f for f in result.findings if f.assumption is assumption and f.subject == subject]
    return found


def cheapest(candidates, **kwargs):
    costs = [(unit(c, **kwargs), i) for i, c in enumerate(candidates)]
    return candidates[min((u, i) for u, i in costs if u is not None)[1]].key


class TestWinnerChanges:
    def test_the_winners_price_rise_hands_it_to_the_runner_up_where_they_cross(self):
        cheap, dear = gpu("cheap", quote(price="2.00")), gpu("dear", quote(price="2.60"))
        result = sensitivity(demand=DEMAND, finance=FINANCE, candidates=[cheap, dear])
        assert result.winner == "cheap"
        found = finding(result, Assumption.PRICE, "cheap")
        assert found.down is None and found.up.new_winner == "dear"
        m = found.up.value
        below = unit(cheap, hourly_price_per_gpu=D("2.00") * m * D("0.999"))
        above = unit(cheap, hourly_price_per_gpu=D("2.00") * m * D("1.001"))
        assert below < unit(dear) < above

    def test_a_challengers_price_cut_makes_it_the_winner_where_they_cross(self):
        cheap, dear = gpu("cheap", quote(price="2.00")), gpu("dear", quote(price="2.60"))
        result = sensitivity(demand=DEMAND, finance=FINANCE, candidates=[cheap, dear])
        found = finding(result, Assumption.PRICE, "dear")
        assert found.up is None and found.down.new_winner == "dear"
        m = found.down.value
        assert m < 1
        assert unit(dear, hourly_price_per_gpu=D("2.60") * m * D("1.001")) > unit(cheap)
        assert unit(dear, hourly_price_per_gpu=D("2.60") * m * D("0.999")) < unit(cheap)

    def test_less_labour_turns_an_api_winner_into_the_gpu_one_at_the_found_hours(self):
        candidates = [api(), gpu("gpu", quote(price="2.00"))]
        result = sensitivity(demand=DEMAND, finance=FINANCE, candidates=candidates)
        assert result.winner == "api"
        found = finding(result, Assumption.LABOUR_HOURS)
        assert found.down.new_winner == "gpu" and found.up is None
        k = found.down.value

        def at(x):
            return replace(
                FINANCE,
                platform_hours_self_managed=FINANCE.platform_hours_self_managed * x,
                platform_hours_managed_endpoint=FINANCE.platform_hours_managed_endpoint * x,
                platform_hours_api=FINANCE.platform_hours_api * x,
            )

        assert cheapest(candidates, fin=at(k * D("1.001"))) == "api"
        assert cheapest(candidates, fin=at(k * D("0.999"))) == "gpu"

    def test_retries_past_an_api_rate_limit_hand_the_win_to_the_gpu(self):
        # 2M requests over 200 h = 166.7 a minute before retries; a 200 rpm limit is hit at
        # r = 1 - 166.67 / 200 = 1/6.
        limited = api(route=replace(ROUTE, rate_limit_rpm=200))
        candidates = [limited, gpu("gpu", quote(price="2.00"))]
        result = sensitivity(demand=DEMAND, finance=FINANCE, candidates=candidates)
        found = finding(result, Assumption.RETRY_RATE)
        assert found.up.new_winner == "gpu"
        assert found.up.value == pytest.approx(D(1) / D(6), rel=D("0.002"))

    def test_a_lower_load_leaves_reserved_gpus_idle_and_hands_the_win_to_the_api(self):
        # Real-time replicas on a 1-year reservation: cheap at full load, idle below it.
        reserved = gpu("reserved", quote(PricingTerm.RESERVED_1Y, price="0.40"))
        route = replace(ROUTE, input_price_per_mtok=D("0.2"), output_price_per_mtok=D("0.6"))
        candidates = [reserved, api(route=route)]
        fin = replace(FINANCE, platform_hours_self_managed=D(4))
        result = sensitivity(demand=DEMAND, finance=fin, candidates=candidates)
        assert result.winner == "reserved"
        found = finding(result, Assumption.UTILIZATION)
        assert found.down.new_winner == "api"
        v = found.down.value
        assert 0 < v < 1

        def load(x):
            return replace(DEMAND, requests_per_month=DEMAND.requests_per_month * x)

        assert cheapest(candidates, demand=load(v * D("1.01")), fin=fin) == "reserved"
        assert cheapest(candidates, demand=load(v * D("0.99")), fin=fin) == "api"
        assert 0 < found.down.winner_utilization < 1

    def test_a_weaker_dollar_against_a_euro_quote_hands_the_win_to_the_dollar_one(self):
        euro = gpu("eur", quote(price="2.00"), currency="EUR", fx_rate=D("1.08"))
        dollar = gpu("usd", quote(price="2.30"))
        result = sensitivity(demand=DEMAND, finance=FINANCE, candidates=[euro, dollar])
        found = finding(result, Assumption.FX_RATE, "EUR")
        assert found.up.new_winner == "usd"
        m = found.up.value
        scaled = {
            name: getattr(euro.quote, name) * m
            for name in (
                "hourly_price_per_gpu", "storage_price_per_tb_month", "egress_price_per_gb",
                "network_monthly", "monthly_extras",
            )
        }  # fmt: skip
        assert unit(euro, **{k: v * D("0.999") for k, v in scaled.items()}) < unit(dollar)
        assert unit(euro, **{k: v * D("1.001") for k, v in scaled.items()}) > unit(dollar)

    def test_the_acceptance_rate_never_changes_the_winner(self):
        candidates = [api(), gpu("gpu", quote(price="2.00"))]
        result = sensitivity(demand=DEMAND, finance=FINANCE, candidates=candidates)
        found = finding(result, Assumption.ACCEPTANCE_RATE)
        assert (found.never, found.down, found.up) == (True, None, None)

    def test_no_candidate_meeting_the_brief_gives_no_answer(self):
        failing = gpu("gpu", quote(), capacity=replace(CAPACITY, fits=False))
        assert sensitivity(demand=DEMAND, finance=FINANCE, candidates=[failing]) is None


class TestTornado:
    def test_each_bar_is_the_winners_unit_cost_at_minus_and_plus_twenty_percent(self):
        winner = gpu("gpu", quote(price="2.00"))
        dear = replace(ROUTE, input_price_per_mtok=D(2), output_price_per_mtok=D(6))
        result = sensitivity(demand=DEMAND, finance=FINANCE, candidates=[winner, api(route=dear)])
        assert result.winner == "gpu"
        bars = {b.assumption: b for b in result.tornado}
        price = bars[Assumption.PRICE]
        assert (price.low_value, price.high_value) == (D("0.8"), D("1.2"))
        assert price.low_unit_cost == unit(winner, hourly_price_per_gpu=D("1.60"))
        assert price.high_unit_cost == unit(winner, hourly_price_per_gpu=D("2.40"))
        retry = bars[Assumption.RETRY_RATE]
        assert retry.high_unit_cost == unit(winner, fin=replace(FINANCE, retry_rate=D("0.024")))
        accept = bars[Assumption.ACCEPTANCE_RATE]
        assert (accept.low_value, accept.high_value) == (D("0.72"), D(1))  # capped at 1
        swings = [b.swing for b in result.tornado]
        assert swings == sorted(swings, reverse=True)


class TestTotals:
    def test_totals_are_monthly_times_months_plus_what_a_longer_commitment_binds(self):
        reserved = gpu("r3", quote(PricingTerm.RESERVED_3Y, price="1.50"))
        result = sensitivity(demand=DEMAND, finance=FINANCE, candidates=[reserved])
        cost = cost_gpu_candidate(
            demand=DEMAND, capacity=CAPACITY, quote=reserved.quote, finance=FINANCE
        )
        by_months = {t.months: t for t in result.totals}
        assert by_months[12].running == cost.monthly_cost * 12
        # 24 more months of the reserved GPU-hours are owed after a year
        assert by_months[12].committed_beyond == D("1.50") * cost.paid_gpu_hours_per_month * 24
        assert by_months[36].committed_beyond == 0
        assert by_months[36].total == cost.monthly_cost * 36

    def test_bought_hardware_still_owes_its_undepreciated_capex(self):
        owned = gpu(
            "own",
            quote(PricingTerm.OWNED, price="0", capex_per_gpu=D(30000), depreciation_months=60),
        )
        result = sensitivity(demand=DEMAND, finance=FINANCE, candidates=[owned])
        by_months = {t.months: t for t in result.totals}
        gpus = cost_gpu_candidate(
            demand=DEMAND, capacity=CAPACITY, quote=owned.quote, finance=FINANCE
        ).gpus_paid
        # 60 months' depreciation: 48 of 60 months' capex left after a year, 24 after three
        assert by_months[12].committed_beyond == D(30000) * gpus * 48 / 60
        assert by_months[36].committed_beyond == D(30000) * gpus * 24 / 60

    def test_the_work_stays_within_a_few_hundred_costings(self):
        candidates = [
            api(),
            gpu("a", quote(price="2.00")),
            gpu("b", quote(PricingTerm.RESERVED_1Y, price="1.90")),
            gpu("c", quote(price="2.10"), currency="EUR", fx_rate=D("1.08")),
            gpu("d", quote(PricingTerm.SPOT, price="1.20")),
        ]
        result = sensitivity(demand=DEMAND, finance=FINANCE, candidates=candidates)
        assert result.costings < 400


class TestCrossingsHoldForAnyPrices:
    @settings(max_examples=25, deadline=None)
    @given(
        a=st.decimals(min_value=D("0.5"), max_value=D("6"), places=2),
        b=st.decimals(min_value=D("0.5"), max_value=D("6"), places=2),
        api_out=st.decimals(min_value=D("0.1"), max_value=D("20"), places=2),
    )
    def test_just_short_of_a_found_value_the_winner_holds_and_just_past_it_changes(
        self, a, b, api_out
    ):
        route = replace(ROUTE, output_price_per_mtok=api_out)
        candidates = [
            gpu("a", quote(price=str(a))),
            gpu("b", quote(PricingTerm.RESERVED_1Y, price=str(b))),
            api(route=route),
        ]
        result = sensitivity(demand=DEMAND, finance=FINANCE, candidates=candidates)
        assume(result is not None)
        winner = result.winner
        assert winner == cheapest(candidates)
        by_key = {c.key: c for c in candidates}
        for found in result.findings:
            if found.assumption is not Assumption.PRICE:
                continue
            subject = by_key[found.subject]
            for change, step in ((found.down, D("-0.002")), (found.up, D("0.002"))):
                if change is None:
                    continue

                def priced(m, subject=subject):
                    if subject.route is not None:
                        moved = LeadingCandidate(
                            key=subject.key,
                            route=replace(
                                subject.route,
                                input_price_per_mtok=subject.route.input_price_per_mtok * m,
                                output_price_per_mtok=subject.route.output_price_per_mtok * m,
                            ),
                            currency="USD",
                        )
                    else:
                        moved = gpu(
                            subject.key,
                            replace(
                                subject.quote,
                                hourly_price_per_gpu=subject.quote.hourly_price_per_gpu * m,
                            ),
                        )
                    return cheapest([moved if c.key == subject.key else c for c in candidates])

                assert priced(change.value * (1 - step)) == winner
                assert priced(change.value * (1 + step)) == change.new_winner
