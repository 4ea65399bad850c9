"""Imported files: a lone surrogate (not Unicode text) is a 400 naming where, and nothing is
saved (on SQLite the encode used to fail after the run was inserted, so a run was saved and
the answer was a 500); and an import's answer about a quote id is the same whether the id
belongs to another team's confidential quote or to no quote at all."""

import json

import pytest
from django.core.exceptions import ValidationError
from django.core.files.uploadedfile import SimpleUploadedFile

from apps.benchmarks.models import BenchmarkRun
from apps.core.roles import Role
from apps.quotes.csv_rows import QuoteRowParser
from apps.quotes.models import Quote
from apps.quotes.services import QuoteImportError, quotes_import_csv
from tests.factories.briefs import BriefFactory
from tests.factories.quotes import ProviderFactory, QuoteFactory
from tests.functional.test_benchmark_api import IMPORT_URL, VLLM_RAW, stored_files

pytestmark = pytest.mark.django_db

MODEL_ID = b'"model_id": "meta-llama/Llama-3.1-8B-Instruct"'
CSV_HEADER = "provider,gpu,pricing_term,hourly_price_per_gpu,quote_date,region,source\n"
#: An id no quote has (ids start at 1 and the tests make a handful).
MISSING_ID = 999_999


@pytest.fixture
def brief(catalog, team):
    return BriefFactory(team=team)


@pytest.fixture
def platform_api(token_client):
    client = token_client(Role.PLATFORM)
    client.raise_request_exception = False  # a 500 is an answer these tests look at
    return client


class TestLoneSurrogatesInResultFiles:
    @pytest.mark.parametrize(
        ("replacement", "where"),
        [
            (b'"model_id": "a\\ud800b"', "in model_id"),
            (b'"model_id": "\\udfff"', "in model_id"),
            (b'"\\ud800": "x", ' + MODEL_ID, "in the key \\ud800"),
        ],
    )
    def test_the_import_is_a_400_naming_where_and_saves_nothing(
        self, platform_api, brief, replacement, where
    ):
        raw = VLLM_RAW.replace(MODEL_ID, replacement)
        assert raw != VLLM_RAW
        before = stored_files()
        response = platform_api.post(IMPORT_URL, _upload(brief, raw))
        assert response.status_code == 400, response.content[:300]
        assert response.json()["detail"].startswith("file: not Unicode text: a lone surrogate")
        assert response.json()["detail"].endswith(where)
        assert BenchmarkRun.objects.count() == 0
        assert stored_files() == before

    def test_a_surrogate_pair_is_a_character_and_is_imported(self, platform_api, brief):
        raw = VLLM_RAW.replace(MODEL_ID, b'"model_id": "llama-\\ud83e\\udd99"')
        # "llama-🦙" is not the brief's model: imported as a proxy, its name kept as written.
        response = platform_api.post(IMPORT_URL, _upload(brief, raw, proxy="true"))
        assert response.status_code == 201, response.content[:300]
        run = BenchmarkRun.objects.get()
        assert run.conditions["model_id"] == "llama-\U0001f999"
        assert run.model_named == "llama-\U0001f999" and run.proxy is True


def _upload(brief, raw, **fields):
    data = {"brief": brief.pk, "gpu": "h100-sxm5-80gb", "gpu_count": 1, **fields}
    return {**data, "file": SimpleUploadedFile("r.json", raw, content_type="application/json")}


class TestLoneSurrogatesInQuoteCsv:
    """A CSV upload decoded as UTF-8 cannot hold one (its bytes are not UTF-8, a 400); the
    row parser refuses one in text handed to the import from anywhere else."""

    @pytest.mark.parametrize(
        ("text", "field"),
        [
            ("P,l4-24gb,ON_DEMAND,1.0,2026-11-01,us\ud800east,sales\n", "region"),
            ("P\udfff,l4-24gb,ON_DEMAND,1.0,2026-11-01,us,sales\n", "provider"),
        ],
    )
    def test_the_row_is_refused_naming_the_column_and_nothing_is_saved(self, catalog, text, field):
        ProviderFactory(name="P")
        good = "P,l4-24gb,ON_DEMAND,1.0,2026-11-01,us,sales\n"
        with pytest.raises(QuoteImportError) as caught:
            quotes_import_csv(text=CSV_HEADER + good + text, parse_row=QuoteRowParser())
        (error,) = caught.value.errors
        assert (error.row, error.field) == (3, field)
        assert error.message.startswith("not Unicode text: a lone surrogate (U+D")
        assert Quote.objects.count() == 0

    def test_a_surrogate_in_a_column_name_is_refused(self, catalog):
        ProviderFactory(name="P")
        header = CSV_HEADER.replace("source", "sou\ud800rce")
        with pytest.raises(ValidationError) as caught:
            QuoteRowParser()(dict(zip(header.strip().split(","), ["P"] * 7, strict=True)))
        assert caught.value.message_dict == {
            "sou?rce": ["not Unicode text: a lone surrogate (U+D800)"]
        }

    def test_an_upload_with_the_utf8_bytes_of_a_surrogate_is_a_400(self, catalog, token_client):
        ProviderFactory(name="P")
        raw = (CSV_HEADER + "P,l4-24gb,ON_DEMAND,1.0,2026-11-01,us").encode() + b"\xed\xa0\x80\n"
        upload = SimpleUploadedFile("q.csv", raw, content_type="text/csv")
        response = token_client(Role.PROCUREMENT).post("/api/v1/quotes/import", {"file": upload})
        assert response.status_code == 400
        assert response.json()["detail"] == "file: not UTF-8 text"
        assert Quote.objects.count() == 0


class TestAnotherTeamsConfidentialQuoteIsNotDisclosed:
    """The answer for another team's confidential quote id is the answer for an id of no quote:
    the same words, at the same step (so what else is wrong in the request does not tell)."""

    @pytest.fixture
    def secret(self, catalog, other_team):
        return QuoteFactory(confidential_to=other_team)

    @pytest.mark.parametrize("file", [VLLM_RAW, b"not json"], ids=["good-file", "bad-file"])
    def test_an_import_answers_the_same_as_for_a_missing_id(
        self, platform_api, brief, secret, file
    ):
        theirs = platform_api.post(IMPORT_URL, _upload(brief, file, quote=secret.pk))
        missing = platform_api.post(IMPORT_URL, _upload(brief, file, quote=MISSING_ID))
        assert theirs.status_code == missing.status_code == 400
        assert theirs.json() == _with_id(missing.json(), MISSING_ID, secret.pk)
        assert theirs.json()["detail"] == f"quote: no quote #{secret.pk}"
        assert BenchmarkRun.objects.count() == 0

    def test_a_run_entered_by_hand_answers_the_same_as_for_a_missing_id(
        self, platform_api, brief, secret
    ):
        def post(quote_id):
            body = {"brief": brief.pk, "gpu": "h100-sxm5-80gb", "gpu_count": 1,
                    "phase": "MEMORY_FIT", "results": {"fits": True}}  # fmt: skip
            body["quote"] = quote_id
            return platform_api.post("/api/v1/benchmark-runs/", body, format="json")

        theirs, missing = post(secret.pk), post(MISSING_ID)
        assert theirs.status_code == missing.status_code == 400
        assert theirs.json() == _with_id(missing.json(), MISSING_ID, secret.pk)
        assert BenchmarkRun.objects.count() == 0

    def test_a_quote_of_the_users_team_is_still_taken(self, platform_api, brief, team):
        ours = QuoteFactory(confidential_to=team)
        response = platform_api.post(IMPORT_URL, _upload(brief, VLLM_RAW, quote=ours.pk))
        assert response.status_code == 201, response.content[:300]
        assert response.json()["quote"] == ours.pk

    def test_a_quote_csv_naming_their_quote_answers_as_for_a_missing_id(self, token_client, secret):
        """The CSV has no column that refers to an existing quote; an extra ``id`` column is
        not read, so the answer cannot depend on what it names."""
        ProviderFactory(name="P")
        client = token_client(Role.PROCUREMENT)

        def post(quote_id):
            text = "id," + CSV_HEADER + f"{quote_id},P,nope,ON_DEMAND,1.0,2026-11-01,us,s\n"
            upload = SimpleUploadedFile("q.csv", text.encode(), content_type="text/csv")
            return client.post("/api/v1/quotes/import", {"file": upload})

        theirs, missing = post(secret.pk), post(MISSING_ID)
        assert theirs.status_code == missing.status_code == 400
        assert theirs.json() == missing.json()
        assert Quote.objects.count() == 1  # the secret one


def _with_id(body, old: int, new: int):
    """``body`` with the quote id ``old`` written as ``new`` (the ids differ, nothing else)."""
    return json.loads(json.dumps(body).replace(f"#{old}", f"#{new}"))
