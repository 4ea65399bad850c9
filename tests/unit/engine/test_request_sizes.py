"""Request-size buckets: validation names its field, and the log-normal default grid."""

from __future__ import annotations

import math

import pytest

from apps.engine.request_sizes import (
    INPUT_EDGES,
    MAX_BUCKETS,
    OUTPUT_EDGES,
    Z95,
    SizeBucket,
    lognormal_buckets,
    validate_buckets,
)
from apps.engine.types import EngineInputError


def _b(input_tokens: int, output_tokens: int, share: float) -> SizeBucket:
    return SizeBucket(input_tokens=input_tokens, output_tokens=output_tokens, share=share)


class TestValidateBuckets:
    def test_normalises_shares_within_tolerance_to_exactly_one(self):
        got = validate_buckets([_b(100, 10, 0.6004), _b(2000, 300, 0.4)])
        assert math.fsum(b.share for b in got) == pytest.approx(1.0, abs=1e-15)
        assert got[0].share == pytest.approx(0.6004 / 1.0004)
        assert (got[1].input_tokens, got[1].output_tokens) == (2000, 300)

    @pytest.mark.parametrize(
        ("buckets", "words"),
        [
            ([], "at least one"),
            ([_b(1, 1, 1 / 17)] * 17, "at most 16"),
            ([_b(0, 10, 1.0)], "input_tokens"),
            ([_b(10, 10_000_001, 1.0)], "output_tokens"),
            ([_b(10, 10, 1.0), _b(20, 20, 0.0)], "bucket 2: share"),  # counted from 1
            ([_b(10, 10, -0.5), _b(20, 20, 1.5)], "bucket 1: share"),
            ([_b(10, 10, math.nan)], "share"),
            ([_b(10, 10, 0.5), _b(20, 20, 0.49)], "they sum to 0.99"),
            ([_b(10, 10, 0.5), _b(20, 20, 0.502)], "they sum to 1.002"),
        ],
    )
    def test_bad_buckets_raise_naming_the_field(self, buckets, words):
        with pytest.raises(EngineInputError) as err:
            validate_buckets(buckets)
        assert err.value.field == "request_size_buckets"
        assert words in err.value.message

    def test_sixteen_buckets_are_allowed(self):
        assert len(validate_buckets([_b(1, i + 1, 1 / 16) for i in range(16)])) == 16
        assert MAX_BUCKETS == 16

    def test_a_fractional_token_count_is_rejected(self):
        with pytest.raises(EngineInputError, match="whole number"):
            validate_buckets([_b(10.5, 10, 1.0)])  # type: ignore[arg-type]


class TestLognormalBuckets:
    def test_grid_is_four_input_by_three_output_bins_summing_to_one(self):
        got = lognormal_buckets(1000, 4000, 200, 800)
        assert len(got) == (len(INPUT_EDGES) - 1) * (len(OUTPUT_EDGES) - 1) == 12
        assert math.fsum(b.share for b in got) == pytest.approx(1.0, abs=1e-15)

    def test_one_bucket_by_hand(self):
        # Input p50 1000, p95 4000: sigma = ln 4 / 1.6448536 = 1.3862944 / 1.6448536 = 0.8428071.
        # The bin p50..p80 is represented at p65: norm.ppf(0.65) = 0.3853205, so
        # 1000 * exp(0.8428071 * 0.3853205) = 1000 * exp(0.3247522) = 1383.69 -> 1384 tokens.
        # Output p50 200, p95 800 has the same sigma; its bin p0..p50 sits at p25:
        # norm.ppf(0.25) = -0.6744898, 200 * exp(-0.5684547) = 200 * 0.566391 = 113.28 -> 113.
        # Share: (0.8 - 0.5) * (0.5 - 0.0) = 0.15.
        got = {
            (b.input_tokens, b.output_tokens): b.share
            for b in lognormal_buckets(1000, 4000, 200, 800)
        }
        assert got[(1384, 113)] == pytest.approx(0.15)

    def test_sigma_zero_gives_one_bin_in_that_dimension(self):
        assert lognormal_buckets(500, 500, 64, 64) == (_b(500, 64, 1.0),)
        got = lognormal_buckets(500, 500, 200, 800)
        assert [b.input_tokens for b in got] == [500, 500, 500]
        assert [b.share for b in got] == pytest.approx([0.5, 0.4, 0.1])

    def test_representative_sizes_rise_and_straddle_the_median(self):
        ins = sorted({b.input_tokens for b in lognormal_buckets(1000, 4000, 200, 800)})
        assert ins == sorted(ins) and len(ins) == 4
        assert ins[0] < 1000 < ins[1]

    def test_mean_input_is_near_the_lognormal_mean(self):
        # Log-normal mean exp(mu + sigma^2 / 2) = 1000 * exp(0.8428^2 / 2) = 1426.4 tokens. The
        # grid's top bin is represented at p97.5, so it misses the far tail and comes out low
        # (1354.6 here, -5%): within 10%, and below, is the honest claim.
        got = lognormal_buckets(1000, 4000, 200, 800)
        mean = math.fsum(b.share * b.input_tokens for b in got)
        sigma = math.log(4) / Z95
        exact = 1000 * math.exp(sigma**2 / 2)
        assert 0.9 * exact < mean < exact

    def test_cells_that_round_alike_are_merged(self):
        # p50 1, p95 2: sigma = ln 2 / 1.6448536 = 0.4214. The bins sit at p25, p65, p87.5 and
        # p97.5, i.e. exp(0.4214 * z) for z = -0.674, 0.385, 1.150, 1.960: 0.75, 1.18, 1.62, 2.28
        # tokens, which round to 1, 1, 2, 2 -> two cells, 0.5 + 0.3 and 0.15 + 0.05.
        got = lognormal_buckets(1, 2, 7, 7)
        assert [(b.input_tokens, b.share) for b in got] == [
            (1, pytest.approx(0.8)),
            (2, pytest.approx(0.2)),
        ]

    @pytest.mark.parametrize(
        ("args", "field"),
        [
            ((0, 10, 10, 10), "input_tokens.p50"),
            ((100, 50, 10, 10), "input_tokens.p95"),
            ((100, 100, 10, 9), "output_tokens.p95"),
        ],
    )
    def test_bad_percentiles_name_their_field(self, args, field):
        with pytest.raises(EngineInputError) as err:
            lognormal_buckets(*args)
        assert err.value.field == field
