"""NVIDIA AIConfigurator beside the engine on the published points (bench environment only:
`pip install -e '.[bench]'` installs aiconfigurator-core; without it every point is "n/a").

For each speed row it supports, AIConfigurator's SDK (`backend.run_static`) is run on the row's
GPU system, framework (vLLM / SGLang / TensorRT-LLM, else vLLM), model (its shipped copy of the
Hugging Face config), precision and layout (TP over the row's GPUs; DEP as attention DP x
expert parallel), at the row's batch; an offline row (no concurrency) at the batch the engine
chose for it (AIConfigurator's static mode needs one). Its static-batch figures are mapped to the
row's metric: tokens/s (per GPU), TTFT, TPOT for ITL. A row it cannot answer says why.
"""

from __future__ import annotations

import contextlib
import io
import logging
from functools import cache
from typing import Any

# Preset slug -> the Hugging Face id whose config AIConfigurator ships (model_configs/).
HF_IDS = {
    "deepseek-r1": "deepseek-ai/DeepSeek-R1",
    "deepseek-v3": "deepseek-ai/DeepSeek-V3",
    "gpt-oss-120b": "openai/gpt-oss-120b",
    "gpt-oss-20b": "openai/gpt-oss-20b",
    "qwen3-235b-a22b": "Qwen/Qwen3-235B-A22B",
    "qwen3-30b-a3b": "Qwen/Qwen3-30B-A3B",
    "qwen3-32b": "Qwen/Qwen3-32B",
    "qwen3-8b": "Qwen/Qwen3-8B",
    "llama-4-maverick": "meta-llama/Llama-4-Maverick-17B-128E-Instruct",
    "llama-4-scout": "meta-llama/Llama-4-Scout-17B-16E-Instruct",
    "llama-3.1-405b": "meta-llama/Meta-Llama-3.1-405B",
    "llama-3.1-70b": "meta-llama/Meta-Llama-3.1-70B",
    "llama-3.1-8b": "meta-llama/Meta-Llama-3.1-8B",
    "mixtral-8x7b": "mistralai/Mixtral-8x7B-v0.1",
    "mixtral-8x22b": "mistralai/Mixtral-8x22B-v0.1",
}
SPEED_METRICS = {"output_tokens_per_s", "output_tokens_per_s_per_gpu", "ttft_ms", "itl_ms"}


def available() -> str | None:
    """The installed version, or None."""
    try:
        from importlib.metadata import version

        return version("aiconfigurator-core")
    except Exception:
        return None


def _backend(framework: str) -> str:
    text = framework.lower()
    if "sglang" in text:
        return "sglang"
    if "tensorrt" in text or "trt" in text:
        return "trtllm"
    return "vllm"


@cache
def _database(system: str, backend: str) -> Any:
    from aiconfigurator_core.sdk.perf_database import get_database, get_latest_database_version

    version = get_latest_database_version(system, backend)
    if version is None:
        return None
    return get_database(system, backend, version)


def _quant(row: dict[str, str], model: Any) -> dict[str, Any]:
    from aiconfigurator_core.sdk import common

    out: dict[str, Any] = {}
    p, kv = row["precision"], row["kv_precision"] or row["precision"]
    if kv == "FP8":
        out["kvcache_quant_mode"] = common.KVCacheQuantMode.fp8
    elif kv in ("BF16", "FP16"):
        out["kvcache_quant_mode"] = common.KVCacheQuantMode.bfloat16
    ck = model.checkpoint
    if ck is not None and ck.precision.value == p:
        return out  # as published: AIConfigurator reads the checkpoint's own quantization
    if p in ("BF16", "FP16"):
        out["gemm_quant_mode"] = common.GEMMQuantMode.bfloat16
        out["moe_quant_mode"] = common.MoEQuantMode.bfloat16
    elif p == "FP8":
        out["gemm_quant_mode"] = common.GEMMQuantMode.fp8
        out["moe_quant_mode"] = common.MoEQuantMode.fp8
    return out


def aic_value(
    row: dict[str, str], engine_batch: int | None, layout_label: str | None
) -> tuple[float | None, str]:
    """(AIConfigurator's figure for the row's metric, or None; how it was run or why not)."""
    if row["metric"] not in SPEED_METRICS:
        return None, "not a speed figure"
    if row.get("speculative"):
        return None, "speculative decoding not run"
    hf = HF_IDS.get(row["model"])
    if hf is None:
        return None, "model not in AIConfigurator's shipped configs"
    from apps.engine import PRESETS
    from apps.engine.kernel_tables_data import SYSTEM_FOR_SLUG

    system = SYSTEM_FOR_SLUG.get(row["gpu"])
    if system is None:
        return None, f"no AIConfigurator system for {row['gpu']}"
    backend = _backend(row["framework"])
    try:
        from aiconfigurator_core.sdk import config
        from aiconfigurator_core.sdk.backends.factory import get_backend
        from aiconfigurator_core.sdk.models import get_model

        db = _database(system, backend)
        if db is None:
            return None, f"no {backend} database for {system}"
        n = int(row["gpu_count"])
        model = PRESETS[row["model"]]
        moe = model.experts > 1
        label = layout_label or f"TP{n}"
        if label.startswith("DEP"):
            mc = config.ModelConfig(
                tp_size=1, attention_dp_size=n, moe_tp_size=1, moe_ep_size=n, **_quant(row, model)
            )
        else:
            mc = config.ModelConfig(
                tp_size=n,
                moe_tp_size=n if moe else None,
                moe_ep_size=1 if moe else None,
                **_quant(row, model),
            )
        conc = int(row["concurrency"]) if row["concurrency"] else engine_batch or 1
        if label.startswith("DEP"):
            conc = max(1, conc // n)  # per attention-DP rank
        rc = config.RuntimeConfig(
            batch_size=conc,
            isl=max(int(row["input_tokens"] or 1), 1),
            osl=max(int(row["output_tokens"] or 1), 2),
        )
        sink = io.StringIO()
        logging.disable(logging.WARNING)
        with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
            m = get_model(hf, mc, backend)
            summary = get_backend(backend).run_static(m, db, rc, "static")
            df = summary.get_summary_df()
        logging.disable(logging.NOTSET)
        r = df.iloc[0]
    except Exception as exc:  # AIConfigurator refuses some combinations; say which
        logging.disable(logging.NOTSET)
        return None, f"AIConfigurator: {type(exc).__name__}: {str(exc)[:80]}"
    metric = row["metric"]
    value = {
        "output_tokens_per_s": float(r["tokens/s"]),
        "output_tokens_per_s_per_gpu": float(r["tokens/s/gpu"]),
        "ttft_ms": float(r["ttft"]),
        "itl_ms": float(r["tpot"]),
    }[metric]
    if label.startswith("DEP") and metric == "output_tokens_per_s":
        value = float(r["tokens/s/gpu"]) * n
    return value, f"{backend} {r['version']} on {system}, {r['parallel']}, batch {conc}"
