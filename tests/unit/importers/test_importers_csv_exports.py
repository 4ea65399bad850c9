"""CSV exports (AIPerf, GenAI-Perf, GuideLLM) and AIPerf's per-request log, read as the tools
write them: files the tools wrote (tests/data/benchmarks/tool_runs/, real/) and fixtures
written to their exporters' code (tests/data/benchmarks/, SOURCES.md)."""

import csv
import io
import json
from pathlib import Path

import pytest

from apps.benchmarks.importers import (
    AIPERF,
    GENAI_PERF,
    GUIDELLM,
    ImportFormatError,
    detect_format,
    parse_result_file,
)

DATA = Path(__file__).resolve().parents[2] / "data" / "benchmarks"
RUNS = DATA / "tool_runs"
REAL = DATA / "real"


def read(path: Path) -> bytes:
    return path.read_bytes()


def one(raw: bytes, **kwargs):
    runs = parse_result_file(raw, **kwargs)
    assert len(runs) == 1
    return runs[0]


class TestAiperfCsv:
    def test_the_two_sections_map_to_the_canonical_figures(self):
        run = one(read(DATA / "aiperf_v0_3_profile_export_aiperf.csv"))
        r = run.results
        assert run.tool == AIPERF
        assert r["ttft_ms"] == {
            "mean": 1588.80, "p50": 787.54, "p90": 3695.10, "p95": 4051.43, "p99": 4119.33,
        }  # fmt: skip
        # Inter Token Latency excludes the first token; Inter Chunk Latency is the chunk gaps.
        assert r["tpot_ms"]["mean"] == 51.76
        assert r["itl_ms"]["p99"] == 61.00
        assert r["e2e_latency_ms"]["p50"] == 5799.90
        assert (r["completed"], r["failed"]) == (200, 3)
        assert (r["request_throughput_rps"], r["goodput_rps"]) == (13.16, 11.20)
        assert (r["output_tokens_per_s"], r["duration_s"]) == (1274.60, 15.20)
        assert (r["input_tokens_mean"], r["output_tokens_mean"]) == (550.0, 96.85)
        assert (
            "Inter Token Latency (ms) avg (ms; first token excluded)"
            in (run.source_names["tpot_ms.mean"])
        )

    def test_aiperf_0_13s_csv_gives_its_json_exports_figures_to_two_decimals(self):
        csv_run = one(read(RUNS / "aiperf_0_13_c4_profile_export_aiperf.csv"))
        json_run = one(read(RUNS / "aiperf_0_13_c4_profile_export_aiperf.json"))
        for metric in ("ttft_ms", "tpot_ms", "itl_ms", "e2e_latency_ms"):
            for stat, value in json_run.results[metric].items():
                assert csv_run.results[metric][stat] == pytest.approx(value, abs=0.005), metric
        for scalar in ("request_throughput_rps", "output_tokens_per_s", "total_tokens_per_s"):
            assert csv_run.results[scalar] == pytest.approx(json_run.results[scalar], abs=0.005)
        assert csv_run.results["completed"] == json_run.results["completed"] == 40

    def test_a_bad_number_is_refused_naming_the_metric(self):
        raw = b"Metric,avg,min,max,p1,p50\nTime to First Token (ms),fast,1,2,1,1\n"
        with pytest.raises(ImportFormatError, match=r"Time to First Token \(ms\) avg"):
            parse_result_file(raw)

    def test_naming_another_tool_is_refused(self):
        with pytest.raises(ImportFormatError, match="AIPerf CSV export, not GenAI-Perf"):
            parse_result_file(
                read(DATA / "aiperf_v0_3_profile_export_aiperf.csv"), tool="genai-perf"
            )


class TestGenaiPerfCsv:
    def test_the_cloudai_file_reads_thousands_separators_and_per_sec_units(self):
        run = one(read(REAL / "genai_perf_cloudai_ai_dynamo_profile_genai_perf.csv"))
        r = run.results
        assert run.tool == GENAI_PERF
        assert r["ttft_ms"] == {
            "mean": 1146.31, "p50": 640.07, "p90": 3215.06, "p95": 3349.56, "p99": 3457.97,
        }  # fmt: skip
        assert r["e2e_latency_ms"]["mean"] == 6406.20
        assert r["tpot_ms"]["p50"] == 30.13
        assert "itl_ms" not in r  # GenAI-Perf has no chunk-gap metric
        assert r["input_tokens_mean"] == 3000.05
        assert (r["request_throughput_rps"], r["output_tokens_per_s"], r["completed"]) == (
            1.50, 261.25, 40,
        )  # fmt: skip

    def test_the_2024_exporters_minus_one_is_a_metric_not_measured(self):
        raw = (
            b"Metric,avg,min,max,p99,p95,p90,p75,p50,p25\n"
            b"Time To First Token (ms),12.00,10.00,15.00,14.90,14.00,13.00,12.50,12.00,11.00\n"
            b"Inter Token Latency (ms),-1.00,-1.00,-1.00,-1.00,-1.00,-1.00,-1.00,-1.00,-1.00\n"
            b"\nMetric,Value\nRequest Throughput (per sec),2.00\n"
        )
        run = one(raw)
        assert run.tool == GENAI_PERF
        assert "tpot_ms" not in run.results
        assert run.results["request_throughput_rps"] == 2.0


class TestGuidellmCsv:
    def test_each_benchmark_row_is_a_run_with_its_json_exports_figures(self):
        csv_runs = parse_result_file(read(RUNS / "guidellm_0_8_1_concurrent_2_4_benchmarks.csv"))
        json_runs = parse_result_file(read(RUNS / "guidellm_0_8_1_concurrent_2_4_benchmarks.json"))
        assert [r.tool for r in csv_runs] == [GUIDELLM, GUIDELLM]
        assert [r.conditions["concurrency"] for r in csv_runs] == [2, 4]
        assert [r.label for r in csv_runs] == ["concurrent@2", "concurrent@4"]
        assert csv_runs[0].tool_version == "0.8.1"
        # The CSV holds the same distributions as the JSON, so the figures are identical.
        assert [r.results for r in csv_runs] == [r.results for r in json_runs]

    def test_a_constant_rate_benchmark_records_its_rate(self):
        run = one(read(RUNS / "guidellm_0_8_1_constant_8_benchmarks.csv"))
        assert run.conditions["request_rate"] == 8.0
        assert run.conditions["strategy"] == "constant"

    def test_the_0_3_single_header_layout(self):
        pcts = "[10.0, 10.1, 10.5, 11.0, 11.5, 12.0, 20.0, 30.0, 35.0, 39.0, 40.0]"
        header = [
            "Type", "Run Id", "Id", "Name", "Start Time", "End Time", "Duration",
            "Successful Requests", "Successful Time to first token ms mean",
            "Successful Time to first token ms median",
            "Successful Time to first token ms [min, 0.1, 1, 5, 10, 25, 75, 90, 95, 99, max]",
            "Successful Request latency mean", "Successful Requests per second mean",
            "Errored Requests", "Args", "Worker",
        ]  # fmt: skip
        args = {"strategy": {"type_": "concurrent", "streams": 8}}
        row = [
            "generative_benchmark", "r", "i", "concurrent@8", "", "", "30.0", "120", "15.5",
            "12.0", pcts, "1.25", "4.0", "2", json.dumps(args),
            json.dumps({"backend_model": "meta-llama/Llama-3.1-8B-Instruct"}),
        ]  # fmt: skip
        buf = io.StringIO()
        csv.writer(buf).writerows([header, row])
        run = one(buf.getvalue().encode())
        assert run.tool == GUIDELLM
        assert run.results["ttft_ms"] == {
            "mean": 15.5, "p50": 12.0, "p90": 30.0, "p95": 35.0, "p99": 39.0,
        }  # fmt: skip
        assert run.results["e2e_latency_ms"]["mean"] == 1250.0  # seconds in the file
        assert (run.results["completed"], run.results["failed"]) == (120, 2)
        assert run.conditions["concurrency"] == 8
        assert run.conditions["model"] == "meta-llama/Llama-3.1-8B-Instruct"

    def test_a_percentile_cell_that_is_not_the_eleven_numbers_is_refused(self):
        rows = list(
            csv.reader(
                io.StringIO(read(RUNS / "guidellm_0_8_1_constant_8_benchmarks.csv").decode())
            )
        )
        column = next(
            i
            for i, cells in enumerate(zip(*rows[:3], strict=True))
            if cells == ("Time to First Token", "Successful ms", "Percentiles")
        )
        rows[3][column] = "[1.0, 2.0]"
        buf = io.StringIO()
        csv.writer(buf).writerows(rows)
        with pytest.raises(ImportFormatError, match="must be the 11 numbers"):
            parse_result_file(buf.getvalue().encode())


class TestAiperfRequestLog:
    def test_the_log_gives_aiperfs_own_summary(self):
        log = one(read(RUNS / "aiperf_0_13_c4_profile_export.jsonl"))
        summary = one(read(RUNS / "aiperf_0_13_c4_profile_export_aiperf.json"))
        assert log.tool == AIPERF and log.label == "per-request log"
        assert log.conditions["warmup_records_skipped"] == 2
        for metric in ("ttft_ms", "tpot_ms", "itl_ms", "e2e_latency_ms"):
            for stat, value in summary.results[metric].items():
                assert log.results[metric][stat] == pytest.approx(value, rel=1e-9), metric
        assert log.results["completed"] == summary.results["completed"] == 40
        # AIPerf's own output_token_throughput (792.79) is over a span a little longer than the
        # log's first start to last end (1,992 tokens / 2.5094 s = 793.83): 0.13 % apart.
        assert log.results["output_tokens_per_s"] == pytest.approx(
            summary.results["output_tokens_per_s"], rel=2e-3
        )
        assert log.results["request_log_requests"] == 40
        assert sum(b["share"] for b in log.results["request_size_buckets"]) == pytest.approx(1.0)

    def test_failed_and_warm_up_records_are_not_figures(self):
        run = one(read(DATA / "aiperf_profile_export.jsonl"))
        r = run.results
        assert (r["completed"], r["failed"]) == (4, 1)
        assert run.conditions["warmup_records_skipped"] == 1
        # Linear-interpolated median of TTFT 255.5, 300, 400, 500 (numpy's default).
        assert r["ttft_ms"]["p50"] == pytest.approx(350.0)
        assert r["ttft_ms"]["mean"] == pytest.approx((255.5 + 300 + 400 + 500) / 4)
        # Chunk gaps of all requests together: 8 + 10 + 40 + 200 of them.
        assert r["itl_ms"]["mean"] == pytest.approx((42.0 + 100 + 400 + 1000) / 258)
        # From the first request's start to the last one's end (the failed one included).
        assert r["duration_s"] == pytest.approx(1.53)
        assert r["input_tokens_mean"] == pytest.approx((550 + 520 + 2100 + 600) / 4)

    def test_a_one_line_log_is_read(self):
        line = read(DATA / "aiperf_profile_export.jsonl").splitlines()[1]
        assert one(line).results["completed"] == 1

    def test_a_log_of_only_failures_is_refused(self):
        line = read(DATA / "aiperf_profile_export.jsonl").splitlines()[-1]
        with pytest.raises(ImportFormatError, match="no successful profiling request"):
            parse_result_file(line)


class TestAiperf013Json:
    def test_the_profiling_phases_concurrency_and_the_model(self):
        run = one(read(RUNS / "aiperf_0_13_c4_profile_export_aiperf.json"))
        assert (run.conditions["concurrency"], run.conditions["model"]) == (4, "stub-model")
        assert run.label == "concurrency=4"
        assert run.tool_version == "0.13.0"

    def test_a_poisson_phases_rate(self):
        run = one(read(RUNS / "aiperf_0_13_rate10_profile_export_aiperf.json"))
        assert run.conditions["request_rate"] == 10.0
        assert run.conditions["request_rate_mode"] == "poisson"
        assert "concurrency" not in run.conditions


def test_json_detection_is_unchanged_by_the_csv_readers():
    assert detect_format(json.loads(read(RUNS / "aiperf_0_13_c4_profile_export_aiperf.json"))) == (
        AIPERF
    )


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (b"Metric,avg,min,max,p1\n", "missing required figure: ttft"),
        (b"Run Info,Run Info\nRun ID,Run Index\n,\n", "holds no benchmarks"),
        (b"Metric,avg,min,max,p1\nTime to First Token (ms),1\x00,1,1,1\n", "NUL bytes"),
        (b"Metric,avg,min,max,p1\nTime to First Token (ms),\xff,1,1,1\n", "not UTF-8"),
        (
            b"Metric,avg,min,max,p1\nTime to First Token (ms),1,1,1,1\n"
            b"Time to First Token (ms),2,2,2,2\n",
            "names Time to First Token twice",
        ),
        (b"Metric,avg,min,max,p1\nTime to First Token (fortnights),1,1,1,1\n", "unknown time unit"),
        (b"Metric,avg,min,max,p1\nTime to First Token (ms),-3,1,1,1\n", "negative value"),
        (b"Metric,avg,min,max,p1\nTime to First Token (ms),inf,1,1,1\n", "not a finite number"),
    ],
)
def test_a_broken_csv_is_refused_in_words(raw, message):
    with pytest.raises(ImportFormatError, match=message):
        parse_result_file(raw)


def test_naming_the_tool_of_a_guidellm_csv():
    raw = read(RUNS / "guidellm_0_8_1_constant_8_benchmarks.csv")
    assert parse_result_file(raw, tool="guidellm")[0].tool == GUIDELLM
    with pytest.raises(ImportFormatError, match="GuideLLM CSV export, not AIPerf"):
        parse_result_file(raw, tool="aiperf")


def test_a_repeated_row_of_a_metric_not_read_is_no_error():
    raw = (
        b"Metric,avg,min,max,p1,p50\nTime to First Token (ms),5,1,9,1,4\n"
        b"GPU Utilization (%),80,70,90,70,80\nGPU Utilization (%),60,50,70,50,60\n"
    )
    assert parse_result_file(raw)[0].results["ttft_ms"]["p50"] == 4.0


def test_a_strategy_without_its_setting_takes_the_profiles_at_the_run_index():
    """GuideLLM 0.4-0.7 wrote the strategy's kind alone; the setting is then the profile's
    ``streams`` (or ``rate``) at the run's ``Run Index``."""
    rows = list(
        csv.reader(
            io.StringIO(read(RUNS / "guidellm_0_8_1_concurrent_2_4_benchmarks.csv").decode())
        )
    )
    column = list(zip(*rows[:3], strict=True)).index(("Benchmark", "Strategy", ""))
    for row in rows[3:]:
        row[column] = "concurrent"
    buf = io.StringIO()
    csv.writer(buf).writerows(rows)
    runs = parse_result_file(buf.getvalue().encode())
    assert [run.conditions["concurrency"] for run in runs] == [2, 4]
    assert [run.label for run in runs] == ["concurrent@2", "concurrent@4"]
    assert runs[0].conditions["backend"] == "openai_http"
