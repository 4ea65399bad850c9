"""A platform engineer signs in, writes a brief with a mistake, fixes it, and sees it."""

import pytest

from apps.briefs.models import WorkloadBrief
from apps.core.roles import Role

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def sign_in(page, live_server, username):
    page.goto(f"{live_server.url}/briefs/")
    assert "/accounts/login/" in page.url
    page.fill("#id_username", username)
    page.fill("#id_password", "pw-for-tests")
    page.click("button[type=submit]")


class TestBriefsInTheBrowser:
    def test_sign_in_create_a_brief_fix_an_error_and_see_what_is_missing(
        self, page, live_server, catalog, make_user
    ):
        make_user(Role.PLATFORM, username="pat")
        sign_in(page, live_server, "pat")
        page.wait_for_url("**/briefs/")
        page.click("text=New brief")
        page.fill("#id_name", "Browser brief")
        page.select_option("#id_workload_type", "REALTIME_INFERENCE")
        page.select_option("#id_model_preset", "llama-3.1-8b")
        page.fill("#id_acceptance_rate", "170")  # a percentage: at most 100
        page.click("button:has-text('Save brief')")
        assert page.locator(".has-error #id_acceptance_rate").count() == 1
        assert WorkloadBrief.objects.count() == 0
        page.fill("#id_acceptance_rate", "90")
        page.click("button:has-text('Save brief')")
        page.wait_for_selector("#missing-fields")
        text = page.inner_text("#missing-fields")
        assert "Prompt tokens, median (p50)" in text
        assert "What counts as one output" in text
        # A blank weight precision means "as the checkpoint ships": not a missing field.
        assert "Weight precision" not in text
        assert WorkloadBrief.objects.get().name == "Browser brief"
        page.click("text=GPU catalog")
        page.wait_for_selector("#gpu-table")
        assert page.locator("#gpu-table tbody tr").count() == 31
        assert page.console_errors == []
