"""Reads of the catalog, and the one place catalog rows become engine inputs."""

import re
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import replace
from typing import Any

from django.db.models import Count, Max, QuerySet

from apps.engine import (
    PRESETS,
    EngineInputError,
    Estimate,
    EstimateRequest,
    GpuSpec,
    estimate,
    estimate_to_dict,
    parse_estimate_request,
)
from apps.engine.costing import Basis
from apps.engine.deployment import Deployment, deploy, shown
from apps.engine.estimator import candidate_counts, estimate_at

from .models import Gpu, GpuSystem


def gpu_list(*, vendor: str | None = None) -> QuerySet[Gpu]:
    qs = Gpu.objects.order_by("vendor", "-memory_gb", "slug")
    if vendor:
        qs = qs.filter(vendor__iexact=vendor)
    return qs


def system_list_for_gpu(gpu: Gpu) -> QuerySet[GpuSystem]:
    return GpuSystem.objects.filter(gpu=gpu).order_by("slug")


# "8x 400 Gb/s InfiniBand NDR" (NICs per node) or "ConnectX-8 SuperNIC (800 Gb/s) per GPU": the
# two ways apps/catalog/data/systems.csv states a node's scale-out network (from the systems'
# datasheets cited there).
_NICS_PER_NODE = re.compile(r"^\s*(\d+)\s*x\s*(\d+(?:\.\d+)?)\s*Gb/s", re.IGNORECASE)
_PER_GPU = re.compile(r"(\d+(?:\.\d+)?)\s*Gb/s\)?\s*per GPU", re.IGNORECASE)
BITS_PER_BYTE = 8


def scale_out_gb_per_s_per_gpu(network: str, gpus_per_node: int) -> float | None:
    """A system's node-to-node bandwidth per GPU in GB/s per direction, read from its stated
    scale-out network; None when the text gives no rate the node's GPUs share ("ConnectX-7 /
    BlueField-3 per tray"), so the engine takes its documented default."""
    per_gpu = _PER_GPU.search(network)
    if per_gpu:
        return float(per_gpu.group(1)) / BITS_PER_BYTE
    nics = _NICS_PER_NODE.search(network)
    if nics and gpus_per_node > 0:
        return int(nics.group(1)) * float(nics.group(2)) / gpus_per_node / BITS_PER_BYTE
    return None


def system_scale_out(systems: Any) -> dict[int, float]:
    """GPU id -> the scale-out bandwidth per GPU its catalog systems state, for the GPUs whose
    systems all state the same figure (a GPU sold in differently networked systems keeps the
    engine's default: the estimate is per GPU, not per system)."""
    found: dict[int, set[float]] = {}
    for system in systems:
        rate = scale_out_gb_per_s_per_gpu(system.scale_out_network, system.gpus_per_node)
        found.setdefault(system.gpu_id, set()).add(rate if rate is not None else -1.0)
    return {
        gpu: rates.pop() for gpu, rates in found.items() if len(rates) == 1 and -1.0 not in rates
    }


_NAMES_CACHE: dict[tuple[Any, ...], dict[str, str]] = {}


def gpu_names() -> dict[str, str]:
    """Every catalog GPU's name by slug ("h100-sxm5-80gb": "H100 SXM5 80GB"), read once per
    catalog version."""
    key = catalog_version()
    found = _NAMES_CACHE.get(key)
    if found is None:
        _NAMES_CACHE.clear()
        found = _NAMES_CACHE[key] = dict(Gpu.objects.values_list("slug", "name"))
    return found


def preset_name(slug: Any) -> str:
    """A catalog preset as its model card names it ("Llama 3.1 70B"); an unknown one as
    written."""
    spec = PRESETS.get(str(slug))
    return spec.name if spec is not None else str(slug)


def preset_choices(*, kind: str | None = None) -> list[tuple[str, str]]:
    """The model presets a form offers, (slug, name) by name; of one model kind (DECODER,
    ENCODER, DIFFUSION) when given."""
    return sorted(
        ((slug, spec.name) for slug, spec in PRESETS.items() if kind is None or spec.kind == kind),
        key=lambda pair: pair[1].lower(),
    )


def gpu_spec_from_row(gpu: Gpu, scale_out_gb_per_s: float | None = None) -> GpuSpec:
    def opt(value: object) -> float | None:
        return float(value) if value is not None else None  # type: ignore[arg-type]

    return GpuSpec(
        slug=gpu.slug,
        name=gpu.name,
        vendor=gpu.vendor,
        form_factor=gpu.form_factor,
        memory_gb=float(gpu.memory_gb),
        device_memory_mib=gpu.device_memory_mib,
        memory_bandwidth_tbps=float(gpu.memory_bandwidth_tbps),
        bf16_tflops=float(gpu.bf16_dense_tflops),
        fp8_tflops=opt(gpu.fp8_dense_tflops),
        fp4_tflops=opt(gpu.fp4_dense_tflops),
        int8_tops=opt(gpu.int8_dense_tops),
        tdp_w=float(gpu.tdp_w),
        interconnect=gpu.interconnect,
        interconnect_gbps=float(gpu.interconnect_gbps_bidirectional),
        max_gpus_per_node=gpu.max_gpus_per_node,
        architecture=gpu.architecture,
        scale_out_gb_per_s=scale_out_gb_per_s,
    )


#: The basis of an estimate whose factors benchmark runs of the same model calibrated.
BASIS_CALIBRATED = Basis.CALIBRATED.value

# The engine factors that benchmark runs may calibrate (apps.engine.estimate_at).
CALIBRATED_FACTORS = ("decode_bw_efficiency", "prefill_mfu", "training_mfu")

_SPECS_CACHE: dict[tuple[Any, ...], tuple[GpuSpec, ...]] = {}


# The catalog version pinned by ``one_catalog_version`` for the block it wraps (None outside).
_PINNED: ContextVar[tuple[Any, ...] | None] = ContextVar("catalog_version_pinned", default=None)


def catalog_version() -> tuple[Any, ...]:
    """Count and last change of the GPU and system rows, in one aggregate query (every system
    belongs to a GPU, so the join sees them all): what the engine's view of the catalog and a
    quote's joined facts depend on. Inside ``one_catalog_version``, the version it read."""
    pinned = _PINNED.get()
    return pinned if pinned is not None else _catalog_version_read()


def _catalog_version_read() -> tuple[Any, ...]:
    v = Gpu.objects.aggregate(
        gpu_rows=Count("id", distinct=True),
        gpu_last=Max("updated_at"),
        system_rows=Count("systems", distinct=True),
        system_last=Max("systems__updated_at"),
    )
    return (v["gpu_rows"], v["gpu_last"], v["system_rows"], v["system_last"])


@contextmanager
def one_catalog_version() -> Iterator[tuple[Any, ...]]:
    """One catalog version for the block: read once at its start, and every reader inside it
    (the engine's specs, the GPU names, the quotes' joined facts, the engine stamp) sees that
    one. A candidate table's compute asks for it about ten times; a catalog change during a
    compute is the next compute's (the change asks every table to recompute). Nested blocks
    keep the outer block's version."""
    pinned = _PINNED.get()
    if pinned is not None:
        yield pinned
        return
    version = _catalog_version_read()
    token = _PINNED.set(version)
    try:
        yield version
    finally:
        _PINNED.reset(token)


def gpu_specs() -> tuple[GpuSpec, ...]:
    """Every catalog GPU as the engine sees it.

    The catalog changes rarely and the engine runs on every request, so the specs are built
    once per catalog version (`catalog_version`, one aggregate query).
    """
    key = catalog_version()
    cached = _SPECS_CACHE.get(key)
    if cached is None:
        scale_out = system_scale_out(GpuSystem.objects.all())
        cached = tuple(
            gpu_spec_from_row(g, scale_out.get(g.pk)) for g in Gpu.objects.order_by("slug")
        )
        _SPECS_CACHE.clear()
        _SPECS_CACHE[key] = cached
    return cached


def estimates_for_body(
    body: Any, *, calibration: Mapping[str, Mapping[str, Any]] | None = None
) -> list[dict[str, Any]]:
    """The engine's per-GPU answer for a contract-shaped body (raises EngineInputError).

    ``calibration`` maps a GPU slug to multipliers of the engine's efficiency factors learnt
    from benchmark runs (``decode_bw_efficiency``, ``prefill_mfu``, ``runs`` and ``run_ids``);
    such GPUs are answered with basis ``CALIBRATED``, naming the runs."""
    specs = gpu_specs()
    request = parse_estimate_request(body, known_gpus={spec.slug for spec in specs})
    return estimates_for_request(request, calibration=calibration)


def deployment_json(found: Deployment) -> dict[str, Any]:
    """How the GPU is deployed as a candidate table costs it (apps.engine.deployment): the
    replicas that carry the load, each replica's share, and the engine's figures for one
    replica at that share, with the verdict taken on them (no retries: a stateless estimate)."""
    e = found.estimate
    perf = e.performance
    e2e = perf.e2e_latency_s
    throughput = perf.output_tokens_per_s
    return {
        "gpus_per_replica": found.gpus_per_replica,
        "replicas": found.replicas,
        "gpus": found.gpus,
        "in_flight_per_replica": found.in_flight,
        "layout": e.layout,
        "fit": e.fit.value,
        "ttft_p95_ms": _num(shown(perf.ttft_ms)),
        "itl_p95_ms": _num(shown(perf.itl_ms)),
        "latency_p95_ms": _num(shown(e2e * 1000 if e2e is not None else None)),
        "output_tokens_per_s": _num(
            shown(throughput * found.replicas if throughput is not None else None)
        ),
        "memory_headroom_gb": _num(shown(e.memory.headroom_gb)),
        "meets_brief": not found.why_not,
        "why_not": found.why_not or None,
    }


def _num(value: Any) -> float | None:
    return None if value is None else float(value)


def estimates_for_request(
    request: EstimateRequest, *, calibration: Mapping[str, Mapping[str, Any]] | None = None
) -> list[dict[str, Any]]:
    """The engine's per-GPU answer for a typed request (``estimates_for_body``), as JSON. At
    the engine's own sizes (no ``gpu_count`` asked), each LLM-serving answer also says how the
    GPU is deployed as a candidate table would cost it (``deployment``)."""
    specs = gpu_specs()
    answers = [
        estimate_json(e, calibration)
        for e in engine_estimates(request, calibration=calibration, specs=specs)
    ]
    if request.gpu_count is None:
        by_slug = {spec.slug: spec for spec in specs}
        for answer in answers:
            spec = by_slug.get(answer["gpu"])
            found = None if spec is None else _deployed(request, spec, calibration)
            if found is not None:
                answer["deployment"] = deployment_json(found)
    return answers


def _deployed(
    request: EstimateRequest,
    spec: GpuSpec,
    calibration: Mapping[str, Mapping[str, Any]] | None,
) -> Deployment | None:
    factors = (calibration or {}).get(spec.slug)
    multipliers = (
        {k: float(v) for k, v in factors.items() if k in CALIBRATED_FACTORS} if factors else None
    )

    def at(req: EstimateRequest, gpu: GpuSpec, count: int) -> Estimate:
        return estimate_at(req, gpu, count, multipliers)

    return deploy(request, spec, at, candidate_counts(spec))


def engine_estimates(
    request: EstimateRequest,
    *,
    calibration: Mapping[str, Mapping[str, Any]] | None = None,
    specs: Sequence[GpuSpec] | None = None,
) -> list[Estimate]:
    """The engine's per-GPU answer for a typed request, typed: a GPU that benchmark runs of the
    same model calibrated has basis ``CALIBRATED`` and a note naming the runs. ``specs``: the
    catalog as ``gpu_specs()`` read it, for a caller making many calls in a row (each read
    asks the database whether the catalog changed)."""
    if specs is None:
        specs = gpu_specs()
    if request.gpus is not None:
        unknown = [slug for slug in request.gpus if slug not in {spec.slug for spec in specs}]
        if unknown:
            raise EngineInputError("gpus", f"unknown GPU slug {unknown[0]!r}")
    if not calibration:
        return list(estimate(request, specs))
    answers: list[Estimate] = []
    for spec in specs:
        factors = calibration.get(spec.slug)
        multipliers = (
            {k: float(v) for k, v in factors.items() if k in CALIBRATED_FACTORS}
            if factors
            else None
        )
        for found in estimate(request, (spec,), multipliers):
            if factors:
                runs = factors.get("runs", 0)
                named = ", ".join(f"#{pk}" for pk in factors.get("run_ids") or [])
                note = (
                    f"CALIBRATED from {runs} benchmark run{'s' if runs != 1 else ''}"
                    + (f" ({named})" if named else "")
                    + ": "
                    + ", ".join(f"{k} x{float(factors[k]):.2f}" for k in sorted(multipliers or {}))
                )
                found = replace(found, basis=BASIS_CALIBRATED, notes=(*found.notes, note))
            answers.append(found)
    return answers


def estimate_json(
    found: Estimate, calibration: Mapping[str, Mapping[str, Any]] | None = None
) -> dict[str, Any]:
    """One estimate as JSON (the contract's shape), with the runs that calibrated it."""
    answer = estimate_to_dict(found)
    factors = (calibration or {}).get(found.gpu)
    if factors:
        answer["calibrated_from_runs"] = factors.get("runs", 0)
        answer["calibrated_from_run_ids"] = list(factors.get("run_ids") or [])
    return answer


def model_preset_list() -> list[dict[str, Any]]:
    rows = []
    for slug, spec in sorted(PRESETS.items()):
        rows.append(
            {
                "slug": slug,
                "name": spec.name,
                "kind": spec.kind.value,
                "params_billion": round(spec.params_billion, 3),
                "active_params_billion": round(spec.active_params / 1e9, 3),
                "layers": spec.layers,
                "hidden_size": spec.hidden_size,
                "attention_heads": spec.attention_heads,
                "kv_heads": spec.kv_heads,
                "head_dim": spec.head_dim,
                "vocab_size": spec.vocab_size,
                "intermediate_size": spec.intermediate_size,
                "experts": spec.experts,
                "active_experts": spec.active_experts,
                "max_context_tokens": spec.max_context_tokens,
            }
        )
    return rows
