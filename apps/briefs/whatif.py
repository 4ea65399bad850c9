"""The what-if calculator: a serving brief tried out on every GPU without saving it.

The page holds no figures of its own: its script (static/js/whatif.js) posts the inputs to
``POST /api/v1/estimate`` as they change and draws the fit table and two charts from the
answers. Anyone signed in may use it; only the roles that write briefs may save one from it
(through ``POST /api/v1/briefs/``, which checks the same rule).
"""

from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_GET

from apps.catalog.selectors import gpu_specs
from apps.core.roles import BRIEF_EDITORS, has_role
from apps.engine import PRESETS
from apps.engine import constants as c
from apps.engine.types import ModelKind

from .charts import short_name
from .choices import TOKEN_SERVING_TYPES, Precision, WorkloadType
from .models import CONCURRENCY_MAX, LATENCY_TARGET_MAX_MS, TOKENS_MAX
from .selectors import teams_for_user

# The concurrencies the throughput chart sweeps: powers of two from one request up to vLLM's
# default scheduler limit per replica (max_num_seqs 256, apps.engine.constants.VLLM_MAX_NUM_SEQS,
# https://docs.vllm.ai/en/latest/configuration/engine_args.html), the range serving benchmarks
# plot their throughput-vs-interactivity curves over (vLLM benchmark_serving --max-concurrency).
SWEEP_CONCURRENCIES = tuple(2**k for k in range(9) if 2**k <= c.VLLM_MAX_NUM_SEQS)
# The GPU counts the context chart answers: the engine's sizes within one node
# (apps.engine.constants.AUTO_GPU_COUNTS: 1, 2, 4, 8) and two 8-GPU nodes, the first size a
# model that fits no single node is answered at (AUTO_NODE_COUNTS).
CONTEXT_GPU_COUNTS = (*c.AUTO_GPU_COUNTS, c.AUTO_NODE_COUNTS[0] * max(c.AUTO_GPU_COUNTS))
# Lines per chart: the first GPUs of the sorted fit table. Okabe & Ito's colour-blind safe
# palette (apps/briefs/charts.py) has seven distinct colours besides black; five lines keep the
# legend short enough to sit beside a half-width chart without covering data.
LEADING_GPUS = 5
# The first answer: the design's estimate example (docs/design.md, POST /api/v1/estimate).
DEFAULTS = {
    "workload_type": "REALTIME_INFERENCE",
    "preset": "llama-3.1-8b",
    "weight_precision": "FP8",
    "kv_cache_precision": "FP8",
    "input_tokens": 1000,
    "output_tokens": 200,
    "concurrency": 32,
    "ttft_ms": 500,
    "itl_ms": 50,
}
# Milliseconds the page waits after the last keystroke before it asks again.
DEBOUNCE_MS = 350


def _presets() -> list[dict[str, Any]]:
    """The decoder presets (what serves tokens), by name, with their context windows."""
    rows = [
        {
            "slug": slug,
            "name": spec.name,
            "params_billion": spec.params_billion,
            "max_context_tokens": spec.max_context_tokens,
        }
        for slug, spec in PRESETS.items()
        if spec.kind is ModelKind.DECODER
    ]
    return sorted(rows, key=lambda r: r["name"].lower())


def _label(params_billion: float) -> str:
    size = f"{params_billion:,.0f}" if params_billion >= 10 else f"{params_billion:.1f}"
    return f"{size} B"


@login_required
@require_GET
def whatif_page(request: HttpRequest) -> HttpResponse:
    can_save = has_role(request.user, BRIEF_EDITORS)
    teams = list(teams_for_user(request.user).values("id", "name")) if can_save else []
    presets = _presets()
    specs = gpu_specs()
    setup = {
        "urls": {
            "estimate": reverse("api:estimate"),
            "briefs": reverse("api:brief-list"),
            "brief": reverse("briefs:detail", args=[0]).replace("/0/", "/{id}/"),
            "gpu": reverse("catalog:gpu-detail", args=["SLUG"]).replace("SLUG", "{slug}"),
        },
        "names": {spec.slug: spec.name for spec in specs},
        "short_names": {spec.slug: short_name(spec.name) for spec in specs},
        "windows": {p["slug"]: p["max_context_tokens"] for p in presets},
        "sweep": list(SWEEP_CONCURRENCIES),
        "counts": list(CONTEXT_GPU_COUNTS),
        "leading": LEADING_GPUS,
        "debounce_ms": DEBOUNCE_MS,
        "limits": {
            "tokens": TOKENS_MAX,
            "concurrency": CONCURRENCY_MAX,
            "latency_ms": LATENCY_TARGET_MAX_MS,
        },
        "can_save": can_save,
    }
    return render(
        request,
        "briefs/whatif.html",
        {
            "setup": setup,
            "defaults": DEFAULTS,
            "presets": [
                {**p, "label": f"{p['name']} ({_label(p['params_billion'])})"} for p in presets
            ],
            "workloads": [
                (v, label) for v, label in WorkloadType.choices if v in TOKEN_SERVING_TYPES
            ],
            "precisions": Precision.choices,
            "can_save": can_save,
            "teams": teams,
            "limits": setup["limits"],
        },
    )
