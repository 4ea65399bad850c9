"""Work per request is bounded (issue 24, point 4): free-form JSON fields have a size and a
key count (a field-level 400 past them), a JSON body is refused while it is read once it
passes its size or element count, and a decision record's PDF is drawn once per state and
kept (a later download reads the stored file)."""

import io
import json
from decimal import Decimal

import pytest
from django import forms
from django.conf import settings
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from rest_framework import serializers

from apps.briefs.forms import HfConfigField
from apps.core import json_guard
from apps.core.api import FreeFormJson
from apps.core.roles import Role
from apps.decisions.pdf_store import PDF_FOLDER
from apps.finance.services import candidate_tables_request_recompute
from tests.factories.briefs import BriefFactory
from tests.factories.quotes import QuoteFactory

pytestmark = pytest.mark.django_db

RECORDS = "/api/v1/decision-records/"
BRIEFS = "/api/v1/briefs/"
EIGHTEEN_MB = 18 * 1000 * 1000


@pytest.fixture
def setup(catalog, team, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        brief = BriefFactory(team=team)
        quote = QuoteFactory(hourly_price_per_gpu=Decimal("2.50"))
        candidate_tables_request_recompute(brief_ids=[brief.pk])
    return {"brief": brief, "quote": quote}


@pytest.fixture
def author(token_client):
    return token_client(Role.PROCUREMENT)


def record_body(setup, **overrides):
    return {
        "brief": setup["brief"].pk,
        "chosen_quote": setup["quote"].pk,
        "capacity_model": "RENT_ON_DEMAND",
        **overrides,
    }


def post_json(client, url, raw: bytes):
    return client.post(url, data=raw, content_type="application/json")


class TestFreeFormLimits:
    def test_the_reviewers_48_mb_criteria_are_a_field_level_400(self, setup, author):
        # 4,800 keys x 1 kB: under the 5 MiB body limit and the body's element count, so the
        # field's own limit is what refuses it.
        criteria = {f"gate_{i:04d}": "x" * 1000 for i in range(4800)}
        raw = json.dumps(record_body(setup, acceptance_criteria=criteria)).encode()
        assert 4_800_000 < len(raw) < settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        response = post_json(author, RECORDS, raw)
        assert response.status_code == 400, response.content[:300]
        errors = response.json()["errors"]
        assert list(errors) == ["acceptance_criteria"]
        assert "at most 200" in errors["acceptance_criteria"][0]
        assert not setup["brief"].decisions.exists()

    def test_criteria_over_the_byte_limit_with_few_keys_are_refused(self, setup, author):
        limit = json_guard.ACCEPTANCE_CRITERIA_LIMIT
        criteria = {"notes": "y" * limit.max_bytes}
        response = author.post(RECORDS, record_body(setup, acceptance_criteria=criteria), "json")
        assert response.status_code == 400
        assert f"at most {limit.max_bytes:,}" in response.json()["errors"]["acceptance_criteria"][0]

    def test_criteria_within_the_limits_are_kept(self, setup, author):
        criteria = {f"gate_{i}": "p95 under 2 s" for i in range(50)}
        response = author.post(RECORDS, record_body(setup, acceptance_criteria=criteria), "json")
        assert response.status_code == 201, response.json()
        assert response.json()["acceptance_criteria"] == criteria

    def test_editing_a_draft_is_held_to_the_same_limit(self, setup, author):
        record = author.post(RECORDS, record_body(setup), "json").json()
        criteria = {f"k{i}": i for i in range(201)}
        response = author.patch(
            f"{RECORDS}{record['id']}/", {"acceptance_criteria": criteria}, "json"
        )
        assert response.status_code == 400
        assert list(response.json()["errors"]) == ["acceptance_criteria"]

    def test_a_pasted_config_over_its_key_count_is_a_field_level_400(self, catalog, token_client):
        client = token_client(Role.PLATFORM)
        config = {"model_type": "llama", "layer_types": ["full"] * 10_001}
        body = {"name": "huge config", "workload_type": "REALTIME_INFERENCE"}
        response = client.post(BRIEFS, {**body, "model": {"hf_config": config}}, "json")
        assert response.status_code == 400, response.json()
        assert "hf_config" in json.dumps(response.json())
        assert "at most 10,000" in json.dumps(response.json())


class CountingStream(io.RawIOBase):
    """``total`` bytes of ``pattern`` made as they are read, counting how many were read."""

    def __init__(self, pattern: bytes, total: int, head: bytes = b"") -> None:
        self.head, self.pattern, self.left, self.given = head, pattern, total, 0

    def read(self, size=-1):
        if self.left <= 0:
            return b""
        size = self.left if size is None or size < 0 else min(size, self.left)
        data = (self.head + self.pattern * (size // len(self.pattern) + 1))[:size]
        self.head = b""
        self.left -= size
        self.given += size
        return data


class TestTheBodyIsCheckedWhileItIsRead:
    def test_18_mb_of_braces_stops_at_the_byte_limit(self):
        stream = CountingStream(b"{}", EIGHTEEN_MB)
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        with pytest.raises(json_guard.BodyTooLarge):
            json_guard.read_bounded(stream, max_bytes=limit, max_elements=10**9)
        assert stream.given <= limit + json_guard.READ_CHUNK_BYTES

    def test_18_mb_of_empty_objects_stops_at_the_element_count(self):
        stream = CountingStream(b"{},", EIGHTEEN_MB, head=b"[")
        with pytest.raises(json_guard.JsonRefused, match="more than 50,000 keys and items"):
            json_guard.read_bounded(stream, max_bytes=settings.DATA_UPLOAD_MAX_MEMORY_SIZE)
        # 50,000 elements of 3 bytes: three 64 KiB chunks, not 18 MB.
        assert stream.given <= 3 * json_guard.READ_CHUNK_BYTES

    @pytest.mark.parametrize("chunk", [1, 2, 3, 7, 64])
    def test_strings_and_escapes_across_chunks_are_not_counted(self, chunk):
        text = json.dumps({"a,{[": 'x"y,\\', "b": [1, 2, {"c": "]]]\\\\"}], "d": "é,"}).encode()
        check = json_guard.StreamingCheck(max_elements=100, max_depth=10)
        for i in range(0, len(text), chunk):
            check.feed(text[i : i + chunk])
        # { and the 2 commas between its keys; [ and its 2 commas; the inner {.
        assert (check.elements, check.depth) == (7, 0)

    def test_deep_nesting_is_refused_at_the_depth_limit_before_parsing(self):
        stream = CountingStream(b"[", EIGHTEEN_MB)
        with pytest.raises(json_guard.JsonRefused, match="nested more than 40 levels"):
            json_guard.read_bounded(stream, max_bytes=settings.DATA_UPLOAD_MAX_MEMORY_SIZE)
        assert stream.given == json_guard.READ_CHUNK_BYTES

    def test_an_18_mb_body_of_braces_is_a_413_on_the_api(self, author):
        response = post_json(author, BRIEFS, b"{}" * (EIGHTEEN_MB // 2))
        assert response.status_code == 413
        assert "Request body too large" in response.json()["detail"]

    def test_json_to_an_upload_address_is_held_to_the_json_limit(self, token_client):
        # The catalog import takes 20 MiB files, but never as JSON.
        client = token_client(Role.PROCUREMENT)
        raw = b"[" + b"{}," * (EIGHTEEN_MB // 3) + b"{}]"
        response = post_json(client, "/api/v1/quotes/import-catalog", raw)
        assert response.status_code == 413

    def test_too_many_elements_under_the_byte_limit_is_a_400_in_words(self, token_client):
        raw = b"[" + b"{}," * 1_000_000 + b"{}]"  # 3 MB
        assert len(raw) < settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        response = post_json(token_client(Role.PLATFORM), BRIEFS, raw)
        assert response.status_code == 400
        assert "more than 50,000 keys and items" in response.json()["detail"]


class TestThePdfIsDrawnOnce:
    @pytest.fixture(autouse=True)
    def no_pdf_kept_from_other_tests(self):
        # The suite's in-memory storage lives as long as the process, and record ids repeat
        # from one test database to the next.
        if default_storage.exists(PDF_FOLDER):
            for folder in default_storage.listdir(PDF_FOLDER)[0]:
                for name in default_storage.listdir(f"{PDF_FOLDER}/{folder}")[1]:
                    default_storage.delete(f"{PDF_FOLDER}/{folder}/{name}")

    def stored(self, record_id):
        folder = f"{PDF_FOLDER}/{record_id}"
        if not default_storage.exists(folder):
            return []
        return [f"{folder}/{name}" for name in default_storage.listdir(folder)[1]]

    def test_a_second_download_reads_the_stored_file(self, setup, author, token_client, client):
        record = author.post(RECORDS, record_body(setup), "json").json()
        url = f"{RECORDS}{record['id']}/export.pdf"
        assert self.stored(record["id"]) == []

        first = author.get(url)
        assert first.status_code == 200 and first.content.startswith(b"%PDF")
        assert first["Content-Disposition"].startswith("attachment;")
        (name,) = self.stored(record["id"])
        with default_storage.open(name, "rb") as f:
            assert f.read() == first.content

        # Mark the stored file: a download that drew the PDF again would not answer the mark.
        default_storage.delete(name)
        default_storage.save(name, ContentFile(b"%PDF-stored-copy"))
        assert token_client(Role.API_CLIENT).get(url).content == b"%PDF-stored-copy"
        client.force_login(author.user)  # the page's download reads it too
        assert client.get(f"/decisions/{record['id']}/export.pdf").content == b"%PDF-stored-copy"
        assert self.stored(record["id"]) == [name]

    def test_a_record_that_changed_gets_a_new_pdf_and_the_old_one_goes(self, setup, author):
        record = author.post(RECORDS, record_body(setup), "json").json()
        url = f"{RECORDS}{record['id']}/export.pdf"
        author.get(url)
        (before,) = self.stored(record["id"])
        response = author.post(f"{RECORDS}{record['id']}/submit", {"role": "procurement"}, "json")
        assert response.status_code == 200, response.json()
        after = author.get(url)
        assert after.status_code == 200 and after.content.startswith(b"%PDF")
        (now,) = self.stored(record["id"])
        assert now != before


class TestEveryFreeFormFieldHasItsLimit:
    def test_a_pasted_config_on_the_brief_page_is_held_to_the_config_limit(self):
        field = HfConfigField(required=False)
        real = {"model_type": "llama", "num_hidden_layers": 32, "layer_types": ["full"] * 100}
        assert field.clean(json.dumps(real)) == real
        with pytest.raises(forms.ValidationError, match="at most 262,144"):
            field.clean(json.dumps({"model_type": "llama", "notes": "z" * 300_000}))

    @pytest.mark.parametrize(
        "limit",
        [
            json_guard.HF_CONFIG_LIMIT,
            json_guard.ACCEPTANCE_CRITERIA_LIMIT,
            json_guard.BENCHMARK_CONDITIONS_LIMIT,
            json_guard.BENCHMARK_RESULTS_LIMIT,
        ],
    )
    def test_each_limit_takes_its_largest_count_and_refuses_one_more(self, limit):
        validator = FreeFormJson(limit)
        validator({f"k{i}": 0 for i in range(limit.max_elements)})
        with pytest.raises(serializers.ValidationError, match=f"at most {limit.max_elements:,}"):
            validator({"nested": [0] * limit.max_elements})  # 1 key + the items
