"""A brief's request-size distribution: a few (input tokens, output tokens) buckets with shares.

The heterogeneous GPU mix (`apps.engine.mix`) prices a workload bucket by bucket, as Mélange does
(Griggs et al., arXiv 2404.14527, which buckets requests by input x output size): short requests
may be cheapest on a small GPU and long ones on a large one. A brief either lists its buckets
(`validate_buckets`) or gives p50/p95 token counts, from which `lognormal_buckets` builds the
documented default grid.

Latency inside a bucket is judged at the bucket's representative size: a capacity figure for a
bucket is "requests/s one replica serves at the latency target when every request has this many
input and output tokens".
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise

from scipy.stats import norm

from apps.engine.types import EngineInputError

FIELD = "request_size_buckets"

# At most 16 buckets. Every bucket costs one capacity evaluation per GPU option (thousands of
# quotes) and adds one column of split variables per option to the mix program; Mélange's grids
# and AIBrix's example profile (2 output x 3 input ticks) are of this order. Sixteen is enough to
# separate short chat from long documents in both dimensions and keeps a solve well under 1 s.
MAX_BUCKETS = 16

MIN_TOKENS = 1
# Ten million tokens: above every context window on sale (the largest are ~10M), so a bigger
# figure is a typing mistake rather than a workload.
MAX_TOKENS = 10_000_000

# Shares given by hand (percentages typed to one decimal, say) need not add up exactly.
SHARE_SUM_TOLERANCE = 1e-3

# z of the 95th percentile of the standard normal: scipy.stats.norm.ppf(0.95) = 1.6448536...
Z95 = float(norm.ppf(0.95))

# Probability edges of the default grid. Input: below the median, median to p80, p80 to p95 and
# the top 5%; output: below the median, median to p90, the top 10%. 4 x 3 = at most 12 buckets.
# House judgement: more bins where the tail is, since long requests are the ones that change
# which GPU is cheapest.
INPUT_EDGES = (0.0, 0.5, 0.8, 0.95, 1.0)
OUTPUT_EDGES = (0.0, 0.5, 0.9, 1.0)


@dataclass(frozen=True, kw_only=True, slots=True)
class SizeBucket:
    """`share` of the requests have `input_tokens` in and `output_tokens` out; share in (0, 1]."""

    input_tokens: int
    output_tokens: int
    share: float


def validate_buckets(buckets: Sequence[SizeBucket]) -> tuple[SizeBucket, ...]:
    """The buckets, checked, with their shares scaled to sum to exactly 1.

    Raises EngineInputError("request_size_buckets", ...) for an empty list, more than MAX_BUCKETS
    buckets, a token count outside [MIN_TOKENS, MAX_TOKENS], a share that is not a positive number,
    or shares that do not sum to 1 within SHARE_SUM_TOLERANCE.
    """
    if not buckets:
        raise EngineInputError(FIELD, "give at least one bucket")
    if len(buckets) > MAX_BUCKETS:
        raise EngineInputError(
            FIELD,
            f"{len(buckets)} buckets; at most {MAX_BUCKETS} (each bucket is priced on every GPU "
            "option, so more make the mix slow to solve without changing the answer much)",
        )
    for i, b in enumerate(buckets):
        for name in ("input_tokens", "output_tokens"):
            value = getattr(b, name)
            if isinstance(value, bool) or not isinstance(value, int):
                raise EngineInputError(FIELD, f"bucket {i + 1}: {name} must be a whole number")
            if not MIN_TOKENS <= value <= MAX_TOKENS:
                raise EngineInputError(
                    FIELD, f"bucket {i + 1}: {name} must be {MIN_TOKENS} to {MAX_TOKENS:,}"
                )
        if not isinstance(b.share, int | float) or not math.isfinite(b.share) or b.share <= 0:
            raise EngineInputError(FIELD, f"bucket {i + 1}: share must be a number above 0")
    total = math.fsum(b.share for b in buckets)
    if abs(total - 1.0) > SHARE_SUM_TOLERANCE:
        raise EngineInputError(FIELD, f"shares must sum to 1; they sum to {total:.6g}")
    return tuple(
        SizeBucket(
            input_tokens=b.input_tokens, output_tokens=b.output_tokens, share=b.share / total
        )
        for b in buckets
    )


def _bins(p50: int, p95: int, edges: tuple[float, ...]) -> list[tuple[int, float]]:
    """(representative tokens, probability) per bin of a log-normal with this p50 and p95."""
    sigma = (math.log(p95) - math.log(p50)) / Z95
    if sigma == 0.0:
        return [(p50, 1.0)]
    out = []
    for lo, hi in pairwise(edges):
        z = float(norm.ppf((lo + hi) / 2))
        tokens = round(p50 * math.exp(sigma * z))
        out.append((min(MAX_TOKENS, max(MIN_TOKENS, tokens)), hi - lo))
    return out


def _check_percentiles(field: str, p50: int, p95: int) -> None:
    if not MIN_TOKENS <= p50 <= MAX_TOKENS:
        raise EngineInputError(f"{field}.p50", f"must be {MIN_TOKENS} to {MAX_TOKENS:,}")
    if not p50 <= p95 <= MAX_TOKENS:
        raise EngineInputError(f"{field}.p95", f"must be >= p50 and at most {MAX_TOKENS:,}")


def lognormal_buckets(
    input_p50: int, input_p95: int, output_p50: int, output_p95: int
) -> tuple[SizeBucket, ...]:
    """The default buckets for a brief that gives only p50 and p95 token counts.

    Input and output lengths are each log-normal with mu = ln(p50) and
    sigma = (ln p95 - ln p50) / Z95, and are assumed independent of each other (a brief gives no
    correlation; real traffic often has long prompts with short answers, or the reverse).

    Each dimension is cut at the probability edges INPUT_EDGES / OUTPUT_EDGES; a bin's
    representative size is the log-normal's quantile at the bin's probability midpoint (the bin
    from p50 to p80 is represented by p65), rounded, at least 1. Latency inside a bucket is judged
    at that size, so the largest requests of a bin (the top 2.5% of the top bin) run longer than
    the figure says. When p95 == p50 a dimension has a single bin at p50.

    A cell's share is the product of its two bins' probabilities; cells that round to the same
    (input, output) are merged. The shares sum to 1.
    """
    _check_percentiles("input_tokens", input_p50, input_p95)
    _check_percentiles("output_tokens", output_p50, output_p95)
    cells: dict[tuple[int, int], float] = {}
    for tin, pin in _bins(input_p50, input_p95, INPUT_EDGES):
        for tout, pout in _bins(output_p50, output_p95, OUTPUT_EDGES):
            cells[(tin, tout)] = cells.get((tin, tout), 0.0) + pin * pout
    return validate_buckets(
        [
            SizeBucket(input_tokens=i, output_tokens=o, share=share)
            for (i, o), share in cells.items()
        ]
    )


def _empirical_bins(values: Sequence[int], edges: tuple[float, ...]) -> list[int]:
    """Each value's bin: values sorted, cut at the probability edges by rank (ties stay in one
    bin: a bin ends after the last copy of its edge value)."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    n = len(values)
    bins = [0] * n
    cut = 0
    for rank, i in enumerate(order):
        while cut + 1 < len(edges) - 1 and rank >= edges[cut + 1] * n:
            if rank > 0 and values[order[rank - 1]] == values[i]:
                break  # the same size as the one before: the same bin
            cut += 1
        bins[i] = cut
    return bins


def buckets_from_requests(
    input_tokens: Sequence[int], output_tokens: Sequence[int]
) -> tuple[SizeBucket, ...]:
    """The request-size buckets of a benchmark's request log (one prompt and one output length
    per request): each dimension cut at INPUT_EDGES / OUTPUT_EDGES by rank, as the log-normal
    default is by probability; a cell's sizes are the medians of its requests, its share their
    count over all. Requests with a length below MIN_TOKENS are left out."""
    pairs = [
        (int(i), int(o))
        for i, o in zip(input_tokens, output_tokens, strict=False)
        if i >= MIN_TOKENS and o >= MIN_TOKENS
    ]
    if not pairs:
        raise EngineInputError(FIELD, "the request log has no request with a prompt and an output")
    in_bins = _empirical_bins([p[0] for p in pairs], INPUT_EDGES)
    out_bins = _empirical_bins([p[1] for p in pairs], OUTPUT_EDGES)
    cells: dict[tuple[int, int], list[tuple[int, int]]] = {}
    for pair, a, b in zip(pairs, in_bins, out_bins, strict=True):
        cells.setdefault((a, b), []).append(pair)
    merged: dict[tuple[int, int], int] = {}
    for members in cells.values():
        size = (
            min(MAX_TOKENS, round(statistics.median(p[0] for p in members))),
            min(MAX_TOKENS, round(statistics.median(p[1] for p in members))),
        )
        merged[size] = merged.get(size, 0) + len(members)
    return tuple(
        SizeBucket(input_tokens=i, output_tokens=o, share=count / len(pairs))
        for (i, o), count in sorted(merged.items())
    )
