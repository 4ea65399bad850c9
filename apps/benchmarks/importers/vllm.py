"""vLLM serving-benchmark results: ``vllm bench serve --save-result`` JSON and the
older ``benchmarks/benchmark_serving.py --save-result`` JSON.

Key history (vllm-project/vllm, benchmarks/benchmark_serving.py, then
vllm/benchmarks/serve.py):

* early 2024 (~v0.4): ``request_inthroughput`` (sic), ``input_throughput``,
  ``output_throughput``, ``mean/median/p99_ttft_ms``, ``mean/median/p99_tpot_ms``;
  ``version`` is the *serving backend* version the user passed (default "N/A").
* PR #5263 (Jun 2024, ~v0.5.0): ``mean/median/p99_itl_ms``; ``request_throughput``.
* ~v0.5.4-0.6.x: ``--percentile-metrics`` / ``--metric-percentiles`` give
  ``std_*`` and ``p{N}_*_ms`` for any chosen percentiles, and ``*_e2el_ms``.
* PR #9338 (Oct 2024, ~v0.6.4): goodput, saved under the key ``"request_goodput:"``
  (trailing colon) by benchmark_serving.py; PR #9390 adds ``max_concurrency``.
* ``vllm bench serve``: ``request_goodput`` (no colon), ``failed``,
  ``endpoint_type``, ``label``; ``--append-result`` writes one JSON object a line.
* ``vllm bench sweep serve`` (vllm/benchmarks/sweep/serve.py ``run_benchmark``): each
  ``run=N.json`` is the file ``vllm bench serve`` wrote, loaded, given ``run_number`` and then
  ``run_data.update(serve_overrides)`` (later versions also the bench overrides) and written
  back with ``json.dump(indent=4)``; ``summary.json`` is the list of a point's runs. An update
  keeps a key already there in its place, so the keys after ``run_number`` are the sweep's
  parameters the result did not already hold (``max_num_seqs`` in the real file).

Trap: vLLM ``tpot`` is (latency - ttft) / (output_len - 1) per request, i.e. the
first token is EXCLUDED: it maps straight to ``tpot_ms``. ``itl`` is the gap
between streamed chunks: it maps to ``itl_ms``. All latencies are already ms.
"""

from __future__ import annotations

from typing import Any, Final

from .common import VLLM, CanonicalRun, ImportFormatError, RunBuilder, count, number

_METRICS = (("ttft", "ttft_ms"), ("tpot", "tpot_ms"), ("itl", "itl_ms"), ("e2el", "e2e_latency_ms"))
_PERCENTILES = ("p50", "p90", "p95", "p99")
_MARKERS = ("mean_ttft_ms", "mean_tpot_ms", "mean_itl_ms", "mean_e2el_ms")
_CONDITION_KEYS = (
    "backend",
    "endpoint_type",
    "model_id",
    "tokenizer_id",
    "num_prompts",
    "request_rate",
    "burstiness",
    "max_concurrency",
    "best_of",
    "use_beam_search",
    "ramp_up_strategy",
    "ramp_up_start_rps",
    "ramp_up_end_rps",
    "date",
)
#: the key ``vllm bench sweep serve`` adds to each result (sweep/serve.py ``run_benchmark``)
SWEEP_RUN_KEY: Final = "run_number"
#: how much of one sweep parameter's name and value a label keeps, like ``--metadata``'s
SWEEP_TEXT_CHARS: Final = 60


def looks_like(data: dict[str, Any]) -> bool:
    """True for a vLLM serving result object."""
    return (
        "completed" in data
        and any(k in data for k in _MARKERS)
        and ("request_throughput" in data or "request_inthroughput" in data)
    )


def _metadata(data: dict[str, Any]) -> dict[str, str]:
    """The ``--metadata KEY=VALUE`` pairs of a result: vLLM writes them into the result object
    itself, after ``num_prompts`` and before ``request_rate`` (vllm/benchmarks/serve.py
    ``main_async`` and benchmarks/benchmark_serving.py ``main``: ``result_json[key] = value``
    between the two), so they are the keys between those two, as the JSON keeps its order."""
    keys = list(data)
    if "num_prompts" not in keys or "request_rate" not in keys:
        return {}
    start, end = keys.index("num_prompts") + 1, keys.index("request_rate")
    return {
        str(k)[:60]: str(data[k])[:60]
        for k in keys[start:end]
        if isinstance(data[k], str | int | float) and not isinstance(data[k], bool)
    }


def _sweep_parameters(data: dict[str, Any]) -> dict[str, str]:
    """The parameters ``vllm bench sweep serve`` wrote after ``run_number`` (its serve
    overrides, ``run_data.update(serve_overrides)``), as the JSON keeps its order."""
    keys = list(data)
    start = keys.index(SWEEP_RUN_KEY) + 1
    return {
        str(k)[:SWEEP_TEXT_CHARS]: str(data[k])[:SWEEP_TEXT_CHARS]
        for k in keys[start:]
        if isinstance(data[k], str | int | float) and not isinstance(data[k], bool)
    }


def parse(data: object) -> list[CanonicalRun]:
    """Parse one vLLM result object, or a list of them (``--append-result``)."""
    if isinstance(data, list):
        if not data:
            raise ImportFormatError("not a vLLM result: empty JSON list")
        return [_parse_one(item, index) for index, item in enumerate(data, start=1)]
    return [_parse_one(data, None)]


def _parse_one(data: object, index: int | None) -> CanonicalRun:
    where = f" (line {index})" if index is not None else ""
    if not isinstance(data, dict):
        raise ImportFormatError(f"not a vLLM result{where}: expected a JSON object")
    b = RunBuilder(VLLM)
    for short, canon in _METRICS:
        key = f"mean_{short}_ms"
        b.stat(canon, "mean", number(data, key, key), f"{key} (ms)")
        key = f"median_{short}_ms"
        median = number(data, key, key)
        b.stat(canon, "p50", median, f"{key} (ms)")
        for pct in _PERCENTILES:
            key = f"{pct}_{short}_ms"
            if pct == "p50" and median is not None:
                continue
            b.stat(canon, pct, number(data, key, key), f"{key} (ms)")
    b.note("tpot_ms", "tpot = (latency - ttft) / (output_len - 1): first token excluded")
    b.note("itl_ms", "itl = gaps between streamed chunks (ms)")

    legacy_rps = "request_throughput" not in data and "request_inthroughput" in data
    rps_key = "request_inthroughput" if legacy_rps else "request_throughput"
    b.scalar("request_throughput_rps", number(data, rps_key, rps_key), f"{rps_key} (req/s)")
    out_tps = number(data, "output_throughput", "output_throughput")
    b.scalar("output_tokens_per_s", out_tps, "output_throughput (tok/s)")
    total_tps = number(data, "total_token_throughput", "total_token_throughput")
    if total_tps is not None:
        b.scalar("total_tokens_per_s", total_tps, "total_token_throughput (tok/s)")
    else:
        in_tps = number(data, "input_throughput", "input_throughput")
        if in_tps is not None and out_tps is not None:
            b.scalar(
                "total_tokens_per_s",
                in_tps + out_tps,
                "derived input_throughput + output_throughput (tok/s; legacy file)",
            )

    completed = count(data, "completed", "completed")
    b.scalar("completed", completed, "completed (successful requests)")
    failed = count(data, "failed", "failed")
    if failed is not None:
        b.scalar("failed", failed, "failed")
    elif isinstance(data.get("errors"), list):
        errors = [e for e in data["errors"] if e]
        b.scalar("failed", len(errors), "derived: non-empty entries of errors[] (--save-detailed)")

    goodput_key = "request_goodput" if "request_goodput" in data else "request_goodput:"
    b.scalar(
        "goodput_rps",
        number(data, goodput_key, goodput_key),
        f"{goodput_key} (req/s meeting --goodput SLOs)",
    )
    if completed:
        for key, canon in (
            ("total_input_tokens", "input_tokens_mean"),
            ("total_output_tokens", "output_tokens_mean"),
        ):
            total = number(data, key, key)
            if total is not None:
                b.scalar(canon, total / completed, f"derived {key} / completed (tokens)")
    b.scalar("duration_s", number(data, "duration", "duration"), "duration (s)")
    b.request_log(data, "input_lens", "output_lens")  # --save-detailed files hold them

    conditions: dict[str, Any] = {k: data[k] for k in _CONDITION_KEYS if k in data}
    if "version" in data:
        conditions["backend_version"] = data["version"]
    metadata = _metadata(data)
    if metadata:
        conditions["metadata"] = ", ".join(f"{k}={v}" for k, v in metadata.items())
    run_number = count(data, SWEEP_RUN_KEY, f"{SWEEP_RUN_KEY} (vllm bench sweep serve)")
    sweep: dict[str, str] = {}
    if run_number is not None:
        conditions["sweep_run_number"] = run_number
        sweep = _sweep_parameters(data)
        if sweep:
            conditions["sweep_parameters"] = ", ".join(f"{k}={v}" for k, v in sweep.items())
    label = data.get("label") if isinstance(data.get("label"), str) else None
    load = []
    if "request_rate" in data:
        load.append(f"rate={data['request_rate']}")
    if data.get("max_concurrency") is not None:
        load.append(f"concurrency={data['max_concurrency']}")
    if metadata:
        # --metadata KEY=VALUE names the run (runs of one --append-result file are told apart
        # by it, not as "#2", "#3"); the --label, if any, stays in front, else the run's load
        # (the runs of one set of metadata at several rates), before the metadata so that a
        # long metadata text cut at the label's length keeps it.
        front = label or " ".join(load)
        label = f"{front} ({conditions['metadata']})" if front else conditions["metadata"]
    if label is None:
        label = " ".join([str(data.get("backend", data.get("endpoint_type", "vllm"))), *load])
    if run_number is not None:
        # A sweep's replicates of one point differ only by their run number: it names them
        # (run=0, run=1), with the point's serve parameters, instead of "#2".
        label = f"{label} run={run_number}"
        if sweep:
            label = f"{label} ({conditions['sweep_parameters']})"
    # vLLM does not write its own version into the result file.
    return b.build(tool_version=None, conditions=conditions, label=label)
