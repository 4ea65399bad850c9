"""A decision record names its candidates in words; rows alike are told apart in words."""

from apps.decisions.candidate_words import candidate_labels

H100 = {"gpu": "h100-sxm5-80gb", "gpu_name": "NVIDIA H100 SXM5"}


def quote_row(qid, **extra):
    return {"candidate_kind": "GPU", "quote_id": qid, "provider": "Acme", "gpu": H100["gpu"],
            "pricing_term": "ON_DEMAND", "gpu_count": 8, "replicas": 1, **extra}  # fmt: skip


def test_a_quote_reads_provider_gpu_and_term():
    quotes = {1: {"id": 1, **H100, "region": "us-east"}}

    assert candidate_labels([quote_row(1)], {}, quotes) == ["Acme · NVIDIA H100 SXM5 · On demand"]


def test_rows_alike_but_for_their_configuration_say_it():
    quotes = {1: {"id": 1, **H100, "region": "us-east"}, 2: {"id": 2, **H100, "region": "us-east"}}
    rows = [quote_row(1), quote_row(2, gpu_count=1, replicas=4)]

    labels = candidate_labels(rows, {}, quotes)

    assert labels == [
        "Acme · NVIDIA H100 SXM5 · On demand · us-east · 8 GPUs (1 replica \u00d7 8)",
        "Acme · NVIDIA H100 SXM5 · On demand · us-east · 4 GPUs (4 replicas \u00d7 1)",
    ]


def test_rows_alike_in_every_word_are_numbered_as_offers_not_by_id():
    quotes = {7: {"id": 7, **H100}, 9: {"id": 9, **H100}}

    labels = candidate_labels([quote_row(7), quote_row(9)], {}, quotes)

    assert labels[0] != labels[1]
    assert labels[1].endswith(" · offer 2") and "#" not in " ".join(labels)
    assert not any("7" in label or "9" in label for label in labels)


def test_an_api_route_reads_provider_model_and_per_token():
    row = {"candidate_kind": "API_ROUTE", "quote_id": None, "api_route_id": 3,
           "provider": "Tokens Inc", "api_model": "Llama 3.1 8B"}  # fmt: skip

    assert candidate_labels([row]) == ["Tokens Inc · Llama 3.1 8B · Per token (API)"]
