"""The serving plans (apps.engine.mix, apps.engine.disagg) and the energy model against the
published claims issue 16 names: Mélange (arXiv 2404.14527) and DistServe (arXiv 2401.09670).
``section()`` is the part of bench/accuracy.md that bench/accuracy.py writes from it.

Run alone: .venv/bin/python bench/plans_accuracy.py (prints the section).
"""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "unit" / "engine"))

from engine_catalog import gpu  # noqa: E402
from test_disagg import BRIEF  # noqa: E402  (DistServe's example: OPT-13B, 512 / 64, 10 rps)

from apps.engine import PRESETS, EstimateRequest, Precision, WorkloadType, estimate  # noqa: E402
from apps.engine.disagg import DisaggPlan, PoolOption, plan_disagg  # noqa: E402
from apps.engine.energy import busy_power_share  # noqa: E402
from apps.engine.mix import MixOption, MixPlan, best_single, solve_mix  # noqa: E402
from apps.engine.request_sizes import SizeBucket, lognormal_buckets  # noqa: E402

HOURS = 730


def _distserve(ttft_ms: float, itl_ms: float) -> tuple[float, float, str]:
    """(prefill goodput rps/GPU, decode rps/GPU, the plan for 10 rps) on one A100-80GB per
    instance, 512 prompt / 64 output tokens."""
    request = replace(BRIEF, ttft_p95_ms=ttft_ms, itl_p95_ms=itl_ms)  # test_disagg's brief
    option = PoolOption(
        key="a100", label="A100", gpu=gpu("a100-sxm4-80gb"), gpus_per_instance=1,
        cost_per_gpu_month=1.0,
    )  # fmt: skip
    plan = plan_disagg(request, [option])
    assert isinstance(plan, DisaggPlan), plan
    gpus = plan.prefill.instances + plan.decode.instances
    text = (
        f"{plan.prefill.instances} prefill + {plan.decode.instances} decode = {gpus} GPUs, "
        f"{10 / gpus:.2f} rps/GPU"
    )
    return plan.prefill.goodput_rps_per_instance, plan.decode.rps_per_instance, text


def _capacities(buckets: tuple[SizeBucket, ...], slug: str, itl_ms: float) -> tuple[float, ...]:
    """Requests/s one GPU completes at the TPOT target in each bucket (Llama 2 7B, FP16)."""
    out = []
    for b in buckets:
        request = EstimateRequest(
            workload_type=WorkloadType.REALTIME_INFERENCE,
            model=PRESETS["llama-2-7b"],
            weight_precision=Precision.FP16,
            kv_cache_precision=Precision.FP16,
            input_tokens_p50=b.input_tokens,
            input_tokens_p95=b.input_tokens,
            output_tokens_p50=b.output_tokens,
            output_tokens_p95=b.output_tokens,
            requests_per_second=1.0,
            itl_p95_ms=itl_ms,
            gpu_count=1,
        )
        (found,) = estimate(request, (gpu(slug),))
        rate = found.capacity.requests_per_s_at_target if found.capacity and found.fits else 0
        out.append(rate or 0.0)
    return tuple(out)


# Mélange's repository prices per GPU-hour (melange-release melange/config/example.json):
# A10G $1.01, A100-80GB $3.67. The catalog has no A10G; the L4 (24 GB, like the A10G, but with
# half its memory bandwidth) stands in at the A10G's price. The paper's own H100 and L4 prices
# are not in our sources, so the H100 is left out of this check.
MELANGE_PRICES = {"l4-24gb": 1.01, "a100-sxm4-80gb": 3.67}
# Request sizes standing in for the paper's datasets (their histograms are not in our sources):
# short chat turns (Chatbot Arena-like), long documents summarised (PubMed-like), and 80/20.
SHORT = lognormal_buckets(80, 600, 150, 600)
LONG = lognormal_buckets(3000, 3900, 200, 400)


def _melange(buckets: tuple[SizeBucket, ...], rate: float) -> tuple[str, str, str]:
    options = [
        MixOption(
            key=slug,
            label=slug,
            replica_cost_per_month=price * HOURS,
            requests_per_s_per_replica=_capacities(buckets, slug, 120.0),
        )
        for slug, price in MELANGE_PRICES.items()
    ]
    shares = [b.share for b in buckets]
    mix = solve_mix(rate_rps=rate, shares=shares, options=options)
    single = best_single(rate_rps=rate, shares=shares, options=options)
    if not isinstance(mix, MixPlan) or single is None:
        return "no plan", "-", "-"
    parts = " + ".join(f"{p.replicas} {p.key.split('-')[0].upper()}" for p in mix.parts)
    best = f"{single.parts[0].replicas} {single.parts[0].key.split('-')[0].upper()}"
    return parts, best, f"{1 - mix.monthly_cost / single.monthly_cost:.0%}"


def _mixed() -> tuple[SizeBucket, ...]:
    return tuple(replace(b, share=b.share * 0.8) for b in SHORT) + tuple(
        replace(b, share=b.share * 0.2) for b in LONG
    )


def section() -> list[str]:
    lines = [
        "## Serving plans and energy against published claims (issue 16)",
        "",
        "Computed by `bench/plans_accuracy.py` with the engine's own figures; no constant was "
        "set to approach these papers.",
        "",
        "### DistServe (arXiv 2401.09670), section 1 / figure 1",
        "",
        "OPT-13B, FP16, 512 prompt and 64 output tokens, one A100-80GB per instance, 10 "
        "requests/s. The paper: prefill-only ~5.6 rps/GPU, decode-only ~10 rps/GPU, 2 prefill + "
        "1 decode GPUs = 3.3 rps/GPU. Two secondary write-ups say figure 1 uses P90 TTFT 0.4 s "
        "and TPOT 0.04 s, not table 1's chatbot SLO (0.25 s / 0.1 s); both are run.",
        "",
        "| SLO (TTFT / ITL) | prefill rps/GPU (paper 5.6) | decode rps/GPU (paper 10) | plan "
        "(paper 2 + 1, 3.3 rps/GPU) |",
        "|---|---:|---:|---|",
    ]
    for ttft, itl in ((250.0, 100.0), (400.0, 40.0)):
        prefill, decode, plan = _distserve(ttft, itl)
        lines.append(f"| {ttft:.0f} ms / {itl:.0f} ms | {prefill:.1f} | {decode:.1f} | {plan} |")
    lines += [
        "",
        "- Each pool alone is faster than the paper's: the engine prefills 512 tokens of "
        "OPT-13B at about 60% of the A100's FP16 peak (its prefill efficiency is calibrated on "
        "vLLM and SGLang, not DistServe's 2023 prototype), and its decode instance runs the "
        "largest batch whose mean step meets the ITL target, with no burstiness; the paper's 10 "
        "rps at 64 output tokens implies only ~26 sequences in flight. Under table 1's SLO the "
        "integer pool sizes still come to the paper's 3 GPUs; under figure 1's, 2.",
        "- The TTFT tail: DistServe's Eq. 1 is a mean; the planner scales the queueing term by "
        "ln 20 for a p95 (`TTFT_QUEUE_P95_FACTOR`). A Lindley-recursion simulation of M/D/1 "
        "gives p95 / mean waiting of 3.06-3.28 at 80-95% utilisation (where goodput binds), but "
        "4.1 at 50% and 9.7 at 10%, where the queueing term is small next to the prompt's own "
        "time: at low load the p95 TTFT is understated by up to ~25%.",
        "",
        "### Mélange (arXiv 2404.14527)",
        "",
        "The paper's savings (against the best single GPU type, at TPOT 40 / 120 ms): Chatbot "
        "Arena 9-77%, PubMed 2-33%, mixed 4-51%, on A10G, L4, A100 and H100 with its own price "
        "table and dataset histograms. Not reproducible here as published: the catalog has no "
        "A10G, and the H100 / L4 prices and the histograms are not in our sources. What is "
        "checked: the direction of its claims, Llama 2 7B at TPOT 120 ms, the L4 at the "
        "A10G's $1.01/h standing in for the small GPU against the A100-80GB at $3.67/h (the "
        "repository's prices), on log-normal stand-ins for short, long and 80/20 traffic.",
        "",
        "| requests | rate (req/s) | mix | best single type | saving |",
        "|---|---:|---|---|---:|",
    ]
    savings = []
    for name, buckets in (("short", SHORT), ("long", LONG), ("80/20", _mixed())):
        for rate in (1.0, 4.0, 16.0):
            parts, best, saving = _melange(buckets, rate)
            lines.append(f"| {name} | {rate:g} | {parts} | {best} | {saving} |")
            if saving.endswith("%"):
                savings.append(int(saving[:-1]))
    lines += [
        "",
        "- Agrees in direction: at 1 req/s of short requests the small GPU alone is cheapest "
        "(the paper's low-rate observation: the big GPU would sit mostly idle), and a mix saves "
        "where whole replicas of one type would be partly idle. Differs in size: the savings "
        f"here reach {max(savings, default=0)}%, at the low end of the paper's ranges; the L4 "
        "has half the A10G's memory bandwidth at the A10G's price, so its edge on short "
        "requests is smaller than the paper's A10G (up to 72% more tokens per dollar than the "
        "A100), and the traffic is a stand-in.",
        "- In the candidate table a mix also pays each extra quote's fixed costs (a deployment's "
        "platform labour, the quote's extras), which Mélange does not price: a mix is listed "
        "only when it is cheaper after them.",
        "",
        "### Energy",
        "",
        "GPU draw while working is TDP x a share log-linear in the batch between ML.ENERGY's "
        f"anchors (H100 SXM under vLLM: {busy_power_share(1):.2f} of TDP at batch 1, "
        f"{busy_power_share(128):.2f} at 128); at batch 32 the model gives "
        f"{busy_power_share(32):.2f}, against the 373 W of 400 W (0.93) Sada et al. measured on "
        "A100 at 32 concurrent: the A100 is drawn ~20% low. Idle paid hours draw 0.15 of TDP "
        "(a parked H200's ~80 W of 700 W plus the 26-50 W a CUDA context adds); the host's "
        "share of the server is drawn in full on every paid hour, which errs high.",
        "",
    ]
    return lines


if __name__ == "__main__":
    print("\n".join(section()))
