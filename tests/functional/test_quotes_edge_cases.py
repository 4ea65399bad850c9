"""Edge cases found by review: each gets a field-level 400 and saves nothing."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from apps.core.roles import Role
from apps.quotes.models import ApiRoute, Provider, Quote
from tests.factories.briefs import BriefFactory
from tests.factories.quotes import ApiRouteFactory, ProviderFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def procurement(catalog, token_client):
    return token_client(Role.PROCUREMENT)


class TestEdgeCases:
    def test_provider_names_are_unique_ignoring_case(self, procurement):
        ProviderFactory(name="Lambda")
        response = procurement.post("/api/v1/providers/", {"name": "LAMBDA"}, format="json")
        assert response.status_code == 400
        assert Provider.objects.count() == 1

    def test_a_second_live_route_for_the_same_model_names_the_field(self, procurement):
        route = ApiRouteFactory(model="m")
        body = {
            "provider": route.provider_id,
            "model": "m",
            "input_price_per_mtok": "1",
            "output_price_per_mtok": "2",
        }
        response = procurement.post("/api/v1/api-routes/", body, format="json")
        assert response.status_code == 400
        assert response.json()["detail"].startswith("model:")
        assert ApiRoute.objects.count() == 1

    def test_an_api_route_for_an_unknown_preset_is_refused(self, procurement):
        body = {
            "provider": ProviderFactory().pk,
            "model": "x",
            "model_preset": "gpt-99",
            "input_price_per_mtok": "1",
            "output_price_per_mtok": "2",
        }
        response = procurement.post("/api/v1/api-routes/", body, format="json")
        assert response.status_code == 400
        assert response.json()["detail"].startswith("model_preset:")

    def test_a_csv_with_nul_bytes_is_refused(self, procurement):
        ProviderFactory(name="P")
        text = (
            "provider,gpu,pricing_term,hourly_price_per_gpu,quote_date,region\n"
            "P,l4-24gb,ON_DEMAND,1.0,2026-11-01,us\x00east\n"
        )
        upload = SimpleUploadedFile("q.csv", text.encode(), content_type="text/csv")
        response = procurement.post("/api/v1/quotes/import", {"file": upload})
        assert response.status_code == 400
        assert "NUL" in response.json()["detail"]
        assert Quote.objects.count() == 0

    def test_csv_row_numbers_are_file_lines(self, procurement):
        ProviderFactory(name="P")
        text = (
            "provider,gpu,pricing_term,hourly_price_per_gpu,quote_date,region,source\n"
            'P,l4-24gb,ON_DEMAND,1.0,2026-11-01,"us\neast",sales\n'
            "P,nope,ON_DEMAND,1.0,2026-11-01,us,sales\n"
        )
        upload = SimpleUploadedFile("q.csv", text.encode(), content_type="text/csv")
        errors = procurement.post("/api/v1/quotes/import", {"file": upload}).json()["errors"]
        assert [(e["row"], e["field"]) for e in errors] == [(4, "gpu")]

    @pytest.mark.parametrize(("name", "value"), [("basis", "GUESSED"), ("pricing_term", "X")])
    def test_unknown_ranking_filters_are_refused(self, procurement, team, name, value):
        brief = BriefFactory(team=team)
        client = procurement
        client.user.teams.add(team)
        response = client.get(f"/api/v1/briefs/{brief.pk}/rankings", {name: value})
        assert response.status_code == 400
        assert response.json()["detail"].startswith(f"{name}:")
