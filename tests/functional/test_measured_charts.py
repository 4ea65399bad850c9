"""The brief page and the GPU page show measured vs estimated for throughput runs."""

import pytest

from apps.core.roles import Role
from tests.factories.briefs import BriefFactory
from tests.integration.test_measured_and_calibrated import h100_estimate, slower_run

pytestmark = pytest.mark.django_db


@pytest.fixture
def measured(catalog, team):
    brief = BriefFactory(team=team)
    slower_run(brief, h100_estimate(brief), factor=0.7)
    return brief


class TestMeasuredVsEstimated:
    def test_the_gpu_page_charts_runs_and_shows_the_calibration(self, measured, client, make_user):
        client.force_login(make_user(Role.FINANCE))
        response = client.get("/catalog/h100-sxm5-80gb/")
        assert response.status_code == 200
        assert len(response.context["figures"]) >= 1
        (calibration,) = response.context["calibrations"]  # per team and model
        assert calibration["runs"] == 1 and calibration["model"] == "llama-3.1-8b"
        assert b"ML Platform \xc2\xb7 llama-3.1-8b: from 1 benchmark run" in response.content

    def test_the_brief_page_charts_its_runs(self, measured, client, make_user):
        client.force_login(make_user(Role.PLATFORM))
        response = client.get(f"/briefs/{measured.pk}/")
        figure = response.context["run_figures"][0][2]
        measured_trace, estimated_trace = figure["data"][:2]
        assert measured_trace["y"][0] == pytest.approx(0.7 * estimated_trace["y"][0], rel=0.01)

    def test_another_teams_runs_are_not_charted_on_the_gpu_page(
        self, measured, client, make_user, other_team
    ):
        client.force_login(make_user(Role.FINANCE, teams=[other_team]))
        response = client.get("/catalog/h100-sxm5-80gb/")
        assert response.context["figures"] == []
        assert response.context["calibrations"] == []
