"""Worked examples in the API reference: the estimate request and response, and a rankings
response, as the demo data answers them (trimmed to a row or two). They document the shapes; the
schema beside them is the contract. (Issue 23 adds each row's configuration and figures: the
rankings example follows it then.)"""

from typing import Any, Final

from drf_spectacular.utils import OpenApiExample

ESTIMATE_REQUEST: Final[dict[str, Any]] = {
    "workload_type": "REALTIME_INFERENCE",
    "model": {"preset": "llama-3.1-8b"},
    "weight_precision": "FP8",
    "kv_cache_precision": "FP8",
    "input_tokens": {"p50": 1000, "p95": 4000},
    "output_tokens": {"p50": 200, "p95": 800},
    "concurrency": 32,
    "latency_target": {"ttft_p95_ms": 500, "itl_p95_ms": 50},
    "gpus": ["h100-sxm5-80gb"],
}
ESTIMATE_RESPONSE: Final[dict[str, Any]] = {
    "estimates": [
        {
            "gpu": "h100-sxm5-80gb",
            "gpu_count": 1,
            "layout": "TP1",
            "fits": True,
            "fit": "FITS",
            "fit_advice": None,
            "memory_capacity_gb": 85.52,
            "memory_capacity_source": "device (nvidia-smi MiB)",
            "memory": {
                "weights_gb": 9.08,
                "kv_cache_gb": 10.07,
                "activations_gb": 0.75,
                "gradients_gb": 0.0,
                "optimizer_gb": 0.0,
                "adapters_gb": 0.0,
                "overhead_gb": 1.5,
                "safety_margin_gb": 8.55,
                "total_gb": 21.4,
                "capacity_gb": 85.52,
                "headroom_gb": 64.12,
            },
            "max_concurrency": 208,
            "max_context_tokens": 31296,
            "performance": {
                "output_tokens_per_s": 4027.2,
                "output_tokens_per_s_per_gpu": 4027.2,
                "ttft_ms": 89.5,
                "itl_ms": 10.94,
                "e2e_latency_s": 8.84,
                "bound": "MEMORY",
                "training_tokens_per_s_per_gpu": None,
                "records_per_s": None,
                "images_per_hour": None,
                "clips_per_hour": None,
            },
            "meets_latency_target": True,
            "capacity": {
                "max_concurrency_at_target": 208,
                "replicas": 1,
                "gpus_total": 1,
                "gpu_hours_per_month": 730.0,
                "requests_per_s_at_target": 20.5904,
            },
            "training": None,
            "basis": "ESTIMATED",
            "notes": ["layout TP1: the whole model on one GPU"],
        }
    ]
}
RANKINGS_RESPONSE: Final[dict[str, Any]] = {
    "brief": 1,
    "computed_at": "2026-12-07T06:24:16.400949Z",
    "stale": False,
    "pending": False,
    "currency": "USD",
    "unit": "per 1M accepted tokens",
    "success_unit": "TOKEN",
    "unit_scale": 1000000,
    "no_ranking_reason": None,
    "total_rows": 10,
    "rows": [
        {
            "rank": 1,
            "candidate_kind": "API_ROUTE",
            "provider": "Model API D",
            "gpu": None,
            "system": None,
            "api_model": "llama-3.1-8b-instruct",
            "gpu_count": None,
            "replicas": None,
            "pricing_term": None,
            "quote_id": None,
            "api_route_id": 1,
            "cost_lines": {
                "api_input_tokens": "618.6259",
                "api_output_tokens": "123.7252",
                "retry_waste": "22.9593",
                "observability": "38.2655",
                "platform_labour": "480.0000",
            },
            "monthly_cost": "1283.5759",
            "accepted_outputs_per_month": "1176131493.3059",
            "effective_unit_cost": "1.091354077",
            "meets_constraints": True,
            "why_not": [],
            "basis": "ESTIMATED",
            "p95_latency_ms": None,
            "memory_headroom_gb": None,
            "layout": None,
            "paid_gpu_hours_per_month": None,
            "energy_kwh_per_month": None,
            "energy_j_per_output": None,
            "co2e_kg_per_month": None,
            "mix": None,
            "pools": None,
            "plan": None,
            "quote_age_days": None,
            "quote_stale": None,
            "notes": ["platform labour: 4 h a month per model API deployment x 120.00 USD/h"],
        },
    ],
    "not_costed": [
        {"quote_id": 12, "reason": "no FX rate for JPY (finance needs a rate of USD per JPY)"}
    ],
    "serving_plans_not_listed": [],
    "capacity_model": {},
    "sensitivity": {},
}

ESTIMATE_EXAMPLES: Final = [
    OpenApiExample(
        "A chat assistant on an H100",
        value=ESTIMATE_REQUEST,
        request_only=True,
        description="Llama 3.1 8B in FP8, 32 requests in flight, TTFT 500 ms and ITL 50 ms.",
    ),
    OpenApiExample(
        "The engine's answer",
        value=ESTIMATE_RESPONSE,
        response_only=True,
        status_codes=["200"],
    ),
]
RANKINGS_EXAMPLES: Final = [
    OpenApiExample(
        "A chat brief's table (first row)",
        value=RANKINGS_RESPONSE,
        response_only=True,
        status_codes=["200"],
        media_type="application/json",
        description="Costs per 1M accepted tokens in USD; `?limit=1` sends the first row.",
    )
]
