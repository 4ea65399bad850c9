"""Bytes per parameter and the compute path a GPU offers for a precision."""

from __future__ import annotations

from dataclasses import dataclass

from apps.engine import constants as c
from apps.engine.types import GpuSpec, ModelKind, ModelSpec, Precision, fast_init

_RAW_BYTES = {
    Precision.FP32: c.BYTES_FP32,
    Precision.BF16: c.BYTES_16BIT,
    Precision.FP16: c.BYTES_16BIT,
    Precision.FP8: c.BYTES_8BIT,
    Precision.INT8: c.BYTES_8BIT,
    Precision.INT4: c.BYTES_4BIT,
    Precision.FP4: c.BYTES_4BIT,
}

# Ordering used by properties ("higher precision never shrinks the weights").
PRECISION_BITS = {p: b * 8 for p, b in _RAW_BYTES.items()}


def raw_bytes(p: Precision) -> float:
    return _RAW_BYTES[p]


def quantized_bytes_per_param(p: Precision) -> float:
    """Stored bytes per weight including quantization scales."""
    if p is Precision.INT4:
        return c.BYTES_4BIT + c.INT4_GROUP_OVERHEAD_BYTES / c.INT4_GROUP_SIZE
    if p is Precision.FP4:
        return c.BYTES_4BIT + c.FP4_BLOCK_SCALE_BYTES / c.FP4_BLOCK_SIZE
    if p is Precision.FP8:
        return c.BYTES_8BIT * (1.0 + c.FP8_SCALE_OVERHEAD_FRACTION)
    return _RAW_BYTES[p]


def embedding_params(model: ModelSpec) -> float:
    if model.kind is not ModelKind.DECODER:
        return 0.0
    return float(model.vocab_size * model.hidden_size) * (1 if model.tied_embeddings else 2)


def weight_bytes(model: ModelSpec, p: Precision) -> float:
    """All weights at precision `p`; embeddings/LM head stay 16-bit below 16-bit (as ModelOpt
    and vLLM FP8/INT4 checkpoints keep them). At a quantized checkpoint's own precision, the
    checkpoint's stored bytes (each tensor group at its own precision, see `checkpoint_bytes`)."""
    ck = model.checkpoint
    if ck is not None and p is ck.precision:
        return ck.weight_bytes
    per_param = quantized_bytes_per_param(p)
    if raw_bytes(p) >= c.BYTES_16BIT:
        return model.total_params * per_param
    emb = min(embedding_params(model), model.total_params)
    return (model.total_params - emb) * per_param + emb * c.BYTES_16BIT


@fast_init
@dataclass(frozen=True, kw_only=True, slots=True)
class ComputePath:
    tflops: float  # peak dense TFLOPs of the path actually used
    mfu: float  # prefill / compute-bound efficiency
    weight_only: bool
    note: str | None


_ARCHITECTURE_NAMES = {"VOLTA": "Volta", "TURING": "Turing"}


def unsupported_precision(gpu: GpuSpec, weights: Precision) -> str | None:
    """Why `gpu` cannot hold weights at `weights`, in words; None when it can. Volta and Turing
    have no BF16 (constants.NO_BF16_ARCHITECTURES): their 16-bit path is FP16."""
    arch = gpu.architecture
    if weights is Precision.BF16 and arch in c.NO_BF16_ARCHITECTURES:
        return (
            f"{gpu.name} ({_ARCHITECTURE_NAMES.get(arch, arch)}) has no BF16: its 16-bit tensor "
            "cores run FP16 only, and serving frameworks refuse a bfloat16 model there; choose "
            "FP16 weights (or a quantized checkpoint) for this GPU"
        )
    return None


def compute_path(gpu: GpuSpec, p: Precision) -> ComputePath:
    """Which tensor-core rate serves precision `p` on `gpu`, and at what efficiency."""
    arch = gpu.architecture

    def mfu(key: str) -> float:
        return c.PREFILL_MFU.get((arch, key), c.DEFAULT_PREFILL_MFU)

    bf16 = ComputePath(tflops=gpu.bf16_tflops, mfu=mfu("BF16"), weight_only=False, note=None)
    if p in (Precision.BF16, Precision.FP16):
        return bf16
    if p is Precision.FP32:
        # FP32 weights are served through TF32/BF16 tensor cores at half the BF16 rate.
        return ComputePath(
            tflops=gpu.bf16_tflops / 2,
            mfu=mfu("BF16"),
            weight_only=False,
            note="FP32: compute at TF32 rate (half of BF16)",
        )

    def weight_only(reason: str) -> ComputePath:
        return ComputePath(
            tflops=gpu.bf16_tflops,
            mfu=mfu("BF16") * c.WEIGHT_ONLY_COMPUTE_EFFICIENCY,
            weight_only=True,
            note=reason,
        )

    if p is Precision.FP8:
        if gpu.fp8_tflops and arch != "AMPERE":
            return ComputePath(tflops=gpu.fp8_tflops, mfu=mfu("FP8"), weight_only=False, note=None)
        return weight_only(
            f"FP8 on {arch}: served as weight-only quantization (W8A16); compute at BF16 rate"
        )
    if p is Precision.INT8:
        if gpu.int8_tops:
            return ComputePath(tflops=gpu.int8_tops, mfu=mfu("INT8"), weight_only=False, note=None)
        return weight_only("INT8: weight-only (W8A16); compute at BF16 rate")
    if p is Precision.FP4:
        if gpu.fp4_tflops and arch in c.FP4_ARCHITECTURES:
            return ComputePath(tflops=gpu.fp4_tflops, mfu=mfu("FP4"), weight_only=False, note=None)
        why = "no FP4 tensor cores" if arch != "CDNA3" else "CDNA3 has FP8 but no FP4"
        return weight_only(
            f"FP4 on {arch} ({why}): served as weight-only quantization (W4A16); "
            "compute at BF16 rate"
        )
    # INT4: activations stay 16-bit in every mainstream kernel (AWQ/GPTQ/Marlin W4A16).
    return weight_only("INT4: weight-only quantization (W4A16, AWQ/GPTQ); compute at BF16 rate")
