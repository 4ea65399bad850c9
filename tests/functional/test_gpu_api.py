import pytest

pytestmark = pytest.mark.django_db


class TestGpuApi:
    def test_lists_the_catalog_paginated(self, catalog, token_client):
        body = token_client().get("/api/v1/gpus/", {"page_size": 5}).json()
        assert body["count"] == 31
        assert len(body["results"]) == 5
        assert body["next"]

    def test_filters_by_vendor(self, catalog, token_client):
        body = token_client().get("/api/v1/gpus/", {"vendor": "amd"}).json()
        assert sorted(g["slug"] for g in body["results"]) == [
            "mi300x-192gb", "mi325x-256gb", "mi355x-288gb",
        ]  # fmt: skip

    def test_filters_by_memory(self, catalog, token_client):
        body = token_client().get("/api/v1/gpus/", {"min_memory_gb": 141}).json()
        slugs = {g["slug"] for g in body["results"]}
        assert slugs == {
            "h200-sxm-141gb", "h200-nvl-141gb", "b200-sxm-180gb", "gb200-nvl72-186gb",
            "mi300x-192gb", "mi325x-256gb", "b300-sxm-288gb", "gb300-nvl72-288gb", "mi355x-288gb",
        }  # fmt: skip

    def test_filters_combine_and_take_any_json_number(self, catalog, token_client):
        body = (
            token_client()
            .get(
                "/api/v1/gpus/",
                {"architecture": "HOPPER", "min_memory_gb": "80", "max_memory_gb": "1.4e2"},
            )
            .json()
        )
        slugs = {g["slug"] for g in body["results"]}
        assert slugs == {"h100-sxm5-80gb", "h100-pcie-80gb", "h100-nvl-94gb", "gh200-96gb"}

    def test_a_fractional_bound_compares_exactly(self, catalog, token_client):
        over = token_client().get("/api/v1/gpus/", {"min_memory_gb": "80.5", "page_size": 500})
        under = token_client().get("/api/v1/gpus/", {"max_memory_gb": "79.999", "page_size": 500})
        assert all(float(g["memory_gb"]) > 80 for g in over.json()["results"])
        assert all(float(g["memory_gb"]) < 80 for g in under.json()["results"])
        assert over.json()["count"] + under.json()["count"] + 4 == 31  # four GPUs of 80 GB

    def test_detail_by_slug_keeps_source_and_checked_date(self, catalog, token_client):
        body = token_client().get("/api/v1/gpus/h100-sxm5-80gb/").json()
        assert body["memory_gb"] == "80.00"
        assert body["memory_bandwidth_tbps"] == "3.350"
        assert body["bf16_dense_tflops"] == "989.00"
        assert body["source"] == "NVIDIA H100 datasheet"
        assert body["checked_date"] == "2026-11-30"

    def test_detail_has_the_driver_reported_memory_where_known(self, catalog, token_client):
        client = token_client()
        assert client.get("/api/v1/gpus/h100-sxm5-80gb/").json()["device_memory_mib"] == 81559
        assert client.get("/api/v1/gpus/gb200-nvl72-186gb/").json()["device_memory_mib"] is None

    def test_filters_by_the_new_architectures(self, catalog, token_client):
        client = token_client()
        ultra = client.get("/api/v1/gpus/", {"architecture": "BLACKWELL_ULTRA"}).json()
        assert {g["slug"] for g in ultra["results"]} == {"b300-sxm-288gb", "gb300-nvl72-288gb"}
        cdna4 = client.get("/api/v1/gpus/", {"architecture": "CDNA4"}).json()
        assert [g["slug"] for g in cdna4["results"]] == ["mi355x-288gb"]

    def test_unknown_slug_is_404(self, catalog, token_client):
        assert token_client().get("/api/v1/gpus/nope/").status_code == 404

    def test_the_catalog_is_read_only(self, catalog, token_client):
        client = token_client()
        assert client.post("/api/v1/gpus/", {"slug": "x"}).status_code == 405
        assert client.delete("/api/v1/gpus/l4-24gb/").status_code == 405

    def test_schema_and_docs_need_login(self, client, token_client):
        assert client.get("/api/schema/").status_code in (401, 403)
        assert token_client().get("/api/schema/").status_code == 200


class TestTuringAndVolta:
    def test_filters_by_turing_and_volta(self, catalog, token_client):
        client = token_client()
        turing = client.get("/api/v1/gpus/", {"architecture": "TURING"}).json()
        assert [g["slug"] for g in turing["results"]] == ["t4-16gb"]
        volta = client.get("/api/v1/gpus/", {"architecture": "VOLTA"}).json()
        assert {g["slug"] for g in volta["results"]} == {"v100-sxm2-16gb", "v100-sxm2-32gb"}
