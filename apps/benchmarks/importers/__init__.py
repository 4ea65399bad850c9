"""Pure-Python parsers for load-generator result files -> one canonical set of figures.

Entry points: :func:`parse_result_file`, :func:`detect_format`, :func:`content_sha256`,
``MAX_FILE_BYTES``; records are :class:`CanonicalRun`; the only error raised is
:class:`ImportFormatError`. No Django imports (stdlib only). Field-by-field map:
the table in the README's "Benchmark results" section.

The traps (same-sounding names, different meanings):

======================  ===============================  ============  ======  ==============
tool                    field                            first token?  unit    canonical slot
======================  ===============================  ============  ======  ==============
vLLM                    ``*_tpot_ms``                    excluded      ms      ``tpot_ms``
vLLM                    ``*_itl_ms`` (chunk gaps)        n/a           ms      ``itl_ms``
GuideLLM                ``inter_token_latency_ms``       excluded      ms      ``tpot_ms``
GuideLLM                ``time_per_output_token_ms``     INCLUDED      ms      not used
GuideLLM                ``request_latency``              n/a           SECONDS ``e2e_latency_ms``
AIPerf                  ``inter_token_latency``          excluded      unit    ``tpot_ms``
AIPerf                  ``inter_chunk_latency``          n/a           unit    ``itl_ms``
GenAI-Perf              ``inter_token_latency``          excluded      unit    ``tpot_ms``
llmperf                 ``inter_token_latency_s``        INCLUDED      SECONDS not used; tpot
                                                                               mean derived
llmperf                 ``ttft_s``, ``end_to_end_...s``  n/a           SECONDS ``ttft_ms``,
                                                                               ``e2e_latency_ms``
llm-d Benchmark Report  ``time_per_output_token``        excluded      units   ``tpot_ms``
llm-d Benchmark Report  ``normalized_time_per_...``      INCLUDED      units   not used
llm-d Benchmark Report  ``inter_token_latency``          n/a           units   ``itl_ms``
MLPerf Endpoints        ``ttft``, ``tpot``, ``latency``  excluded      NANOSEC ``*_ms`` (/1e6)
MLPerf Endpoints        ``tps``                          output only   tok/s   output tok/s
trtllm-bench            ``tpot_percentiles``             excluded      ms      ``tpot_ms``
trtllm-bench            ``output_throughput_per_gpu...`` per GPU       tok/s   not used
SGLang bench_serving    ``*_tpot_ms``                    excluded      ms      ``tpot_ms``
SGLang bench_serving    ``concurrency``                  measured      req     not the setting
======================  ===============================  ============  ======  ==============

Where a tool only gives a first-token-inclusive per-token figure, ``tpot_ms.mean`` is
derived as (e2e_mean - ttft_mean) / (output_tokens_mean - 1) and ``source_names`` says
so; percentiles are then left absent rather than wrong.
"""

from .api import detect_format, normalise_tool, parse_result_file
from .common import (
    AIPERF,
    GENAI_PERF,
    GUIDELLM,
    INFERENCE_PERF,
    LLMPERF,
    MAX_FILE_BYTES,
    MLPERF_ENDPOINTS,
    SGLANG_BENCH,
    TOOLS,
    TRTLLM_BENCH,
    VLLM,
    CanonicalRun,
    ImportFormatError,
    content_sha256,
    results_fingerprint,
)

__all__ = [
    "AIPERF",
    "GENAI_PERF",
    "GUIDELLM",
    "INFERENCE_PERF",
    "LLMPERF",
    "MAX_FILE_BYTES",
    "MLPERF_ENDPOINTS",
    "SGLANG_BENCH",
    "TOOLS",
    "TRTLLM_BENCH",
    "VLLM",
    "CanonicalRun",
    "ImportFormatError",
    "content_sha256",
    "detect_format",
    "normalise_tool",
    "parse_result_file",
    "results_fingerprint",
]
