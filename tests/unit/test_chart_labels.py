"""Charts name candidates in words (apps.finance.charts.candidate_chart_label): provider · GPU
· term, no ids or slugs, every label on a chart distinct."""

from apps.finance.charts import candidate_chart_label, candidate_chart_labels

NAMES = {"h100-sxm5-80gb": "NVIDIA H100 SXM5", "rtx-4090-24gb": "NVIDIA GeForce RTX 4090"}


def gpu_row(**changes):
    row = {
        "candidate_kind": "GPU", "provider": "Neocloud B", "gpu": "h100-sxm5-80gb",
        "gpu_count": 1, "pricing_term": "RESERVED_1Y", "quote_id": 8, "region": "us-east",
    }  # fmt: skip
    return {**row, **changes}


def test_a_gpu_row_reads_provider_gpu_and_term_without_ids_or_slugs():
    assert (
        candidate_chart_label(gpu_row(), NAMES) == "Neocloud B · NVIDIA H100 SXM5 · Reserved 1 year"
    )
    label = candidate_chart_label(gpu_row(gpu="rtx-4090-24gb", gpu_count=2), NAMES)
    assert label == "Neocloud B · 2 \u00d7 NVIDIA GeForce RTX 4090 · Reserved 1 year"
    assert "#" not in label and "rtx-4090" not in label


def test_an_api_route_reads_its_provider_and_model():
    row = {"candidate_kind": "API_ROUTE", "provider": "Model API D", "api_model": "llama-3.1-8b"}
    assert candidate_chart_label(row, NAMES) == "Model API D · llama-3.1-8b · model API"


def test_two_offers_alike_are_told_apart_by_region_then_by_number():
    rows = [
        gpu_row(quote_id=1, region="us-east"),
        gpu_row(quote_id=2, region="eu-west"),
        gpu_row(quote_id=3, region="eu-west"),
        gpu_row(quote_id=4, pricing_term="ON_DEMAND"),
    ]
    labels = candidate_chart_labels(rows, NAMES)
    assert labels == [
        "Neocloud B · NVIDIA H100 SXM5 · Reserved 1 year · us-east",
        "Neocloud B · NVIDIA H100 SXM5 · Reserved 1 year · eu-west · offer 1",
        "Neocloud B · NVIDIA H100 SXM5 · Reserved 1 year · eu-west · offer 2",
        "Neocloud B · NVIDIA H100 SXM5 · On demand",
    ]
    assert len(set(labels)) == len(labels)
