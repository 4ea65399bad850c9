import pytest
from django.test import override_settings

pytestmark = pytest.mark.django_db


class TestHealthz:
    def test_reports_database_and_in_process_queue(self, client):
        response = client.get("/healthz")
        assert response.status_code == 200
        body = response.json()
        assert body["status"] == "ok"
        assert body["database"]["ok"] is True
        assert body["queue"] == {"ok": True, "mode": "in-process"}

    @override_settings(CELERY_TASK_ALWAYS_EAGER=False, CELERY_BROKER_URL="redis://127.0.0.1:9/0")
    def test_reports_a_stopped_broker_with_503(self, client):
        response = client.get("/healthz")
        assert response.status_code == 503
        body = response.json()
        assert body["status"] == "degraded"
        assert body["queue"]["ok"] is False
        assert body["queue"]["mode"] == "broker"
        assert body["database"]["ok"] is True

    def test_changes_nothing_on_post(self, client):
        assert client.post("/healthz").status_code == 405
