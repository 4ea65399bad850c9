"""GenAI-Perf ``profile_export_genai_perf.json`` (triton-inference-server/perf_analyzer,
genai-perf/genai_perf/export_data/json_exporter.py).

The file is the stats dict (``{"time_to_first_token": {"unit": "ms", "avg": ...,
"p25".."p99", "min", "max", "std"}, ...}``) merged with ``"input_config"``:

* CLI era (<= 0.0.12, 2024): ``input_config`` is ``vars(args)``: ``model`` (list),
  ``concurrency``, ``request_rate``, ``synthetic_input_tokens_mean``,
  ``output_tokens_mean``, ``service_kind``, ``endpoint_type``; per-user throughput
  is ``output_token_throughput_per_request``.
* config era (2025, YAML config): ``input_config`` is the config dict
  (``model_names``, ``endpoint``, ``perf_analyzer.stimulus``, ``input``);
  ``output_token_throughput_per_user``, ``time_to_second_token``, ``request_goodput``
  and ``request_count`` appear.

Trap: GenAI-Perf ``inter_token_latency`` is (request_latency - ttft) / (osl - 1) per
request, first token EXCLUDED -> ``tpot_ms``; there is no chunk-gap metric, so
``itl_ms`` stays absent. GenAI-Perf writes no tool version into the file.
"""

from __future__ import annotations

from typing import Any

from .aiperf import latency, metric_obj, scalar
from .common import (
    GENAI_PERF,
    CanonicalRun,
    ImportFormatError,
    JsonObject,
    RunBuilder,
    as_object,
)


def looks_like(data: dict[str, Any]) -> bool:
    if not isinstance(data.get("time_to_first_token"), dict):
        return False
    return "input_config" in data or "request_throughput" in data


def parse(data: object) -> list[CanonicalRun]:
    if not isinstance(data, dict):
        raise ImportFormatError("not a GenAI-Perf export: expected a JSON object")
    b = RunBuilder(GENAI_PERF)
    latency(b, "ttft_ms", data, "time_to_first_token")
    latency(b, "tpot_ms", data, "inter_token_latency", "; first token excluded")
    latency(b, "e2e_latency_ms", data, "request_latency")
    b.note("itl_ms", "absent: GenAI-Perf reports no chunk-gap distribution")
    scalar(b, "request_throughput_rps", data, "request_throughput")
    scalar(b, "output_tokens_per_s", data, "output_token_throughput")
    scalar(b, "input_tokens_mean", data, "input_sequence_length")
    scalar(b, "output_tokens_mean", data, "output_sequence_length")
    scalar(b, "completed", data, "request_count", whole=True)
    if metric_obj(data, "request_goodput"):
        scalar(b, "goodput_rps", data, "request_goodput")
    conditions = _conditions(as_object(data.get("input_config")))
    label = None
    if conditions.get("concurrency") is not None:
        label = f"concurrency={conditions['concurrency']}"
    elif conditions.get("request_rate") is not None:
        label = f"rate={conditions['request_rate']} req/s"
    return [b.build(tool_version=None, conditions=conditions, label=label)]


def _conditions(config: JsonObject) -> dict[str, Any]:
    if "model_names" in config or "perf_analyzer" in config:
        endpoint = as_object(config.get("endpoint"))
        stimulus = as_object(as_object(config.get("perf_analyzer")).get("stimulus"))
        inp = as_object(config.get("input"))
        names = config.get("model_names")
        return {
            "model": names[0] if isinstance(names, list) and names else None,
            "endpoint_type": endpoint.get("type"),
            "service_kind": endpoint.get("service_kind"),
            "streaming": endpoint.get("streaming"),
            "concurrency": stimulus.get("concurrency"),
            "request_rate": stimulus.get("request_rate"),
            "input_tokens_mean": as_object(inp.get("synthetic_tokens")).get("mean"),
            "output_tokens_mean": as_object(inp.get("output_tokens")).get("mean"),
        }
    model = config.get("model")
    return {
        "model": model[0] if isinstance(model, list) and model else model,
        "endpoint_type": config.get("endpoint_type"),
        "service_kind": config.get("service_kind"),
        "backend": config.get("backend"),
        "streaming": config.get("streaming"),
        "concurrency": config.get("concurrency"),
        "request_rate": config.get("request_rate"),
        "input_tokens_mean": config.get("synthetic_input_tokens_mean"),
        "output_tokens_mean": config.get("output_tokens_mean"),
    }
