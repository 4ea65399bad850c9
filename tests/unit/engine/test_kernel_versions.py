"""Measured MoE kernel tables per vLLM version (issue 25, item 1): the estimate's
`framework_version` picks AIConfigurator's table nearest at or below it, and says which."""

from __future__ import annotations

from dataclasses import replace

import pytest
from engine_catalog import gpu

from apps.engine import PRESETS, Precision, WorkloadType, estimate_at
from apps.engine import kernel_tables_data as data
from apps.engine.kernel_tables import moe_version_for, moe_versions, tables_for, version_key
from apps.engine.types import EstimateRequest, Framework, Layout

H200 = "h200-sxm-141gb"
B200 = "b200-sxm-180gb"
H100 = "h100-sxm5-80gb"
# DeepSeek-R1's routed experts (hidden, expert intermediate, experts, top-k) sliced 8 ways
R1_TP8 = "7168,2048,256,8,8"


def test_version_order_follows_releases() -> None:
    ordered = ["0.5.6.post2", "0.5.10", "0.11.0", "0.19", "1.3.0rc10", "1.3.0rc20", "1.3.0"]
    assert sorted(ordered, key=version_key) == ordered
    assert version_key("0.19") == version_key("0.19.0")
    assert version_key("1.3.0.post1") > version_key("1.3.0")
    assert version_key("0.7.4.dev181+gf35f8e22") < version_key("0.7.4")


def test_the_package_ships_older_vllm_moe_tables_on_h200_and_b200_only() -> None:
    assert moe_versions(H200) == ("0.19.0", "0.24.0")
    assert moe_versions(B200) == ("0.19.0", "0.22.0", "0.24.0")
    assert moe_versions(H100) == ("0.24.0",)
    assert moe_versions("mi300x-192gb") == ()


@pytest.mark.parametrize(
    ("slug", "framework", "version", "chosen"),
    [
        (H200, Framework.VLLM, "0.11.0", "0.19.0"),  # older than all: the oldest measured
        (H200, None, "0.19.0", "0.19.0"),  # no framework: vLLM
        (H200, Framework.VLLM, "0.23.1", "0.19.0"),  # nearest at or below
        (H200, Framework.VLLM, "0.24.0", None),  # the newest: the top-level table
        (H200, Framework.VLLM, "0.30.0", None),
        (H200, Framework.VLLM, None, None),  # not given: the newest
        (H200, Framework.SGLANG, "0.4.3.post2", None),  # vLLM's tables only
        (B200, Framework.VLLM, "0.22.5", "0.22.0"),
        (B200, Framework.VLLM, "0.21.0", "0.19.0"),
        (H100, Framework.VLLM, "0.10.2", None),  # one version measured
    ],
)
def test_moe_version_for_picks_nearest_at_or_below(
    slug: str, framework: Framework | None, version: str | None, chosen: str | None
) -> None:
    assert moe_version_for(slug, framework, version) == chosen


def test_an_older_table_swaps_in_its_own_measurements() -> None:
    newest = tables_for(H200)
    older = tables_for(H200, "0.19.0")
    assert newest is not None and older is not None
    measured = data.SYSTEMS["h200_sxm"]["moe_older_versions"]["0.19.0"]["moe_shapes_us"]
    assert older.moe_shapes["fp8_block"][R1_TP8] == measured["fp8_block"][R1_TP8]
    assert older.moe_shapes["fp8_block"][R1_TP8] != newest.moe_shapes["fp8_block"][R1_TP8]
    assert "MoE vLLM 0.19.0" in older.note and "MoE vLLM 0.24.0" in newest.note
    # GEMM and all-reduce tables are one version: unchanged
    assert older.gemm_tflops == newest.gemm_tflops and older.allreduce == newest.allreduce


def test_a_dtype_the_older_version_did_not_measure_keeps_the_newest() -> None:
    newest = tables_for(B200)
    older = tables_for(B200, "0.22.0")
    assert newest is not None and older is not None
    assert "nvfp4" not in data.SYSTEMS["b200_sxm"]["moe_older_versions"]["0.22.0"]["moe_efficiency"]
    assert older.moe["nvfp4"] == newest.moe["nvfp4"]
    assert older.moe["fp8_block"] != newest.moe["fp8_block"]
    assert "nvfp4" in older.note and "not measured at 0.22.0" in older.note


def _r1(version: str | None, framework: Framework | None = Framework.VLLM) -> EstimateRequest:
    return EstimateRequest(
        workload_type=WorkloadType.BATCH_INFERENCE,
        model=PRESETS["deepseek-r1"],
        weight_precision=Precision.FP8,
        kv_cache_precision=Precision.BF16,
        input_tokens_p50=2000,
        input_tokens_p95=2000,
        output_tokens_p50=100,
        output_tokens_p95=100,
        framework=framework,
        framework_version=version,
    )


def _kernel_note(notes: list[str]) -> str:
    return next(n for n in notes if n.startswith("kernel efficiencies"))


def test_the_estimate_runs_on_the_chosen_table_and_says_so() -> None:
    g = gpu(H200)
    tp8 = Layout(tp=8)
    newest = estimate_at(_r1(None), g, 8, layout=tp8, data_parallel=False)
    same = estimate_at(_r1("0.24.0"), g, 8, layout=tp8, data_parallel=False)
    older = estimate_at(_r1("0.11.0"), g, 8, layout=tp8, data_parallel=False)
    assert same.performance.output_tokens_per_s == newest.performance.output_tokens_per_s
    assert older.performance.output_tokens_per_s != newest.performance.output_tokens_per_s
    assert "vLLM 0.19.0" not in _kernel_note(newest.notes)
    note = _kernel_note(older.notes)
    assert "MoE table of vLLM 0.19.0 for the estimate's vLLM 0.11.0" in note
    assert "older than every version measured" in note


def test_another_frameworks_version_keeps_the_newest_and_says_why() -> None:
    g = gpu(H200)
    tp8 = Layout(tp=8)
    sglang = estimate_at(_r1("0.4.3", Framework.SGLANG), g, 8, layout=tp8, data_parallel=False)
    plain = estimate_at(
        replace(_r1(None), framework=Framework.SGLANG), g, 8, layout=tp8, data_parallel=False
    )
    assert sglang.performance.output_tokens_per_s == plain.performance.output_tokens_per_s
    assert "tables per version are vLLM's only" in _kernel_note(sglang.notes)
