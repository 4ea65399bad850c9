"""Object-level access, as a table: every API endpoint x method x role x own/other team.

- another team's brief, benchmark run (and its raw file), decision record or confidential
  quote (and its checklist evidence file): 404, the same answer as an id that does not exist
  (no existence leak);
- a role without the right to write: 403, before any object is looked up;
- a role with the right, on its own team's object: neither 403 nor 404 (the body may still
  be refused with a 400 or 409: that is validation, not access);
- list endpoints never contain another team's ids.
"""

from decimal import Decimal

import pytest
from django.core.files.base import ContentFile
from rest_framework.test import APIClient

from apps.benchmarks.models import BenchmarkRun
from apps.catalog.models import Gpu
from apps.core.roles import Role
from apps.core.services import api_token_create
from apps.decisions.models import ChecklistAnswer
from tests.factories.briefs import BriefFactory
from tests.factories.core import TeamFactory, UserFactory
from tests.factories.decisions import make_record
from tests.factories.quotes import ApiRouteFactory, QuoteFactory

pytestmark = pytest.mark.django_db

PLATFORM, FINANCE, PROCUREMENT, API_CLIENT = (
    Role.PLATFORM.value, Role.FINANCE.value, Role.PROCUREMENT.value, Role.API_CLIENT.value,
)  # fmt: skip
ROLES = (PLATFORM, FINANCE, PROCUREMENT, API_CLIENT)
AUTHORS = {PLATFORM, FINANCE, PROCUREMENT}
EVERYONE = set(ROLES)

# (method, url template, roles that may call it, scoped to a team's object?)
# {brief} {run} {record} {quote} are filled with the own or the other team's object.
MATRIX = [
    ("get", "/api/v1/briefs/{brief}/", EVERYONE, True),
    ("patch", "/api/v1/briefs/{brief}/", {PLATFORM}, True),
    ("get", "/api/v1/briefs/{brief}/estimate", EVERYONE, True),
    ("get", "/api/v1/briefs/{brief}/rankings", EVERYONE, True),
    ("get", "/api/v1/benchmark-runs/{run}/", EVERYONE, True),
    ("get", "/api/v1/benchmark-runs/{run}/raw", EVERYONE, True),
    ("get", "/api/v1/decision-records/{record}/", EVERYONE, True),
    ("patch", "/api/v1/decision-records/{record}/", AUTHORS, True),
    ("post", "/api/v1/decision-records/{record}/submit", AUTHORS, True),
    ("post", "/api/v1/decision-records/{record}/approve", AUTHORS, True),
    ("post", "/api/v1/decision-records/{record}/reject", AUTHORS, True),
    ("post", "/api/v1/decision-records/{record}/supersede", AUTHORS, True),
    ("post", "/api/v1/decision-records/{record}/refresh", AUTHORS, True),
    ("get", "/api/v1/decision-records/{record}/verify", EVERYONE, True),
    ("get", "/api/v1/decision-records/{record}/export.csv", EVERYONE, True),
    ("get", "/api/v1/decision-records/{record}/export.pdf", EVERYONE, True),
    ("get", "/api/v1/quotes/{quote}/", EVERYONE, True),
    ("patch", "/api/v1/quotes/{quote}/", {PROCUREMENT}, True),
    ("post", "/api/v1/quotes/{quote}/retire", {PROCUREMENT}, True),
    ("get", "/api/v1/checklist/quotes/{quote}/", EVERYONE, True),
    ("put", "/api/v1/checklist/quotes/{quote}/", {PROCUREMENT}, True),
    ("get", "/api/v1/checklist/quotes/{quote}/co_sla/evidence", EVERYONE, True),
    ("post", "/api/v1/briefs/", {PLATFORM}, False),
    ("post", "/api/v1/benchmark-runs/", {PLATFORM}, False),
    ("post", "/api/v1/benchmark-runs/import", {PLATFORM}, False),
    ("post", "/api/v1/decision-records/", AUTHORS, False),
    ("post", "/api/v1/providers/", {PROCUREMENT}, False),
    ("post", "/api/v1/quotes/", {PROCUREMENT}, False),
    ("post", "/api/v1/quotes/import", {PROCUREMENT}, False),
    ("post", "/api/v1/quotes/import-catalog", {PROCUREMENT}, False),
    ("post", "/api/v1/api-routes/", {PROCUREMENT}, False),
    ("post", "/api/v1/estimate", EVERYONE, False),
    ("get", "/api/v1/gpus/", EVERYONE, False),
    ("get", "/api/v1/fx-rates/", EVERYONE, False),
    ("post", "/api/v1/fx-rates/", {FINANCE}, False),
    ("get", "/api/v1/models/", EVERYONE, False),
]
LISTS = {
    "/api/v1/briefs/": "brief",
    "/api/v1/benchmark-runs/": "run",
    "/api/v1/decision-records/": "record",
    "/api/v1/quotes/": "quote",
}


def _team_objects(team, author):
    brief = BriefFactory(team=team, created_by=author)
    quote = QuoteFactory(confidential_to=team, hourly_price_per_gpu=Decimal("2"))
    run = BenchmarkRun.objects.create(
        brief=brief,
        team=team,
        gpu=Gpu.objects.get(slug="h100-sxm5-80gb"),
        gpu_count=1,
        phase=BenchmarkRun.Phase.MEMORY_FIT,
        results={"peak_memory_gb": 40},
        raw_file=ContentFile(b"{}", name="run.json"),  # for the raw-file download
        created_by=author,
    )
    ChecklistAnswer.objects.create(  # for the evidence-file download
        quote=quote,
        question="co_sla",
        answer=ChecklistAnswer.Answer.YES,
        evidence_file=ContentFile(b"SLA", name="sla.pdf"),
        answered_by=author,
        team=team,
    )
    record = make_record(brief=brief, user=author, quote=quote)
    return {"brief": brief.pk, "quote": quote.pk, "run": run.pk, "record": record.pk}


@pytest.fixture
def world(catalog):
    own, other = TeamFactory(slug="own"), TeamFactory(slug="other")
    clients = {}
    for role in ROLES:
        user = UserFactory(roles=[role], teams=[own])
        _, key = api_token_create(user=user, days=1)
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
        clients[role] = client
    outsider = UserFactory(roles=[PLATFORM, PROCUREMENT], teams=[other])
    ApiRouteFactory(model_preset="llama-3.1-8b")
    return {
        "clients": clients,
        "own": _team_objects(own, UserFactory(roles=[PROCUREMENT], teams=[own])),
        "other": _team_objects(other, outsider),
    }


def call(client, method, url):
    return getattr(client, method)(url, {}, format="json")


CASES = [
    (method, url, role, whose, allowed, scoped)
    for method, url, allowed, scoped in MATRIX
    for role in ROLES
    for whose in (("own", "other") if scoped else ("own",))
]


@pytest.mark.parametrize(
    ("method", "url", "role", "whose", "allowed", "scoped"),
    CASES,
    ids=[f"{m.upper()} {u} as {r} on {w}'s" for m, u, r, w, _, _ in CASES],
)
def test_access(world, method, url, role, whose, allowed, scoped):
    response = call(world["clients"][role], method, url.format(**world[whose]))
    if role not in allowed:
        assert response.status_code == 403, response.content[:200]
    elif scoped and whose == "other":
        assert response.status_code == 404, response.content[:200]
    else:
        assert response.status_code not in (401, 403, 404, 500), response.content[:300]


@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize("url", list(LISTS))
def test_lists_never_show_another_teams_objects(world, role, url):
    body = world["clients"][role].get(url, {"page_size": 500}).json()
    ids = {row["id"] for row in body["results"]}
    kind = LISTS[url]
    assert world["own"][kind] in ids
    assert world["other"][kind] not in ids


# The FX-rate page: every signed-in role reads it, only finance adds a rate (403 otherwise,
# as on the finance assumptions page).
PAGES = [("/finance/fx-rates/", {FINANCE})]


@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize(("url", "writers"), PAGES)
def test_pages_read_by_everyone_written_by_their_role(catalog, client, role, url, writers):
    client.force_login(UserFactory(roles=[role]))
    assert client.get(url).status_code == 200
    posted = client.post(url, {})  # an empty form: a writer gets the form back with errors
    assert posted.status_code == (200 if role in writers else 403)


# Pages of one role only: GET and POST 403 for every other role, a sign-in redirect for
# nobody signed in. "Update API prices" writes routes every team's tables are costed with.
ROLE_ONLY_PAGES = [("/quotes/api-prices/", {PROCUREMENT})]


@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize(("url", "writers"), ROLE_ONLY_PAGES)
def test_pages_of_one_role(catalog, client, role, url, writers):
    client.force_login(UserFactory(roles=[role]))
    expected = 200 if role in writers else 403  # a writer's empty form comes back with errors
    assert client.get(url).status_code == expected
    assert client.post(url, {}).status_code == expected


@pytest.mark.parametrize(("url", "writers"), ROLE_ONLY_PAGES)
def test_pages_of_one_role_send_nobody_to_sign_in(db, client, url, writers):
    for response in (client.get(url), client.post(url, {})):
        assert response.status_code == 302
        assert (
            response["Location"].startswith("/accounts/login/") or "next=" in response["Location"]
        )


# Pages every signed-in role reads and none posts to (the what-if calculator saves through
# POST /api/v1/briefs/, above); anonymous visitors are sent to sign in.
READ_ONLY_PAGES = ["/briefs/what-if/"]


@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize("url", READ_ONLY_PAGES)
def test_read_only_pages_are_read_by_every_role(catalog, client, role, url):
    assert client.get(url).status_code == 302  # anonymous: to the sign-in page
    client.force_login(UserFactory(roles=[role]))
    assert client.get(url).status_code == 200
    assert client.post(url, {}).status_code == 405


def test_an_unknown_id_answers_like_another_teams(world):
    client = world["clients"][PLATFORM]
    other = client.get(f"/api/v1/briefs/{world['other']['brief']}/")
    missing = client.get("/api/v1/briefs/999999/")
    assert other.status_code == missing.status_code == 404
    assert other.json() == missing.json()


class TestNoMassAssignment:
    def test_server_owned_brief_fields_are_refused_and_nothing_is_saved(self, world):
        client = world["clients"][PLATFORM]
        owned = {
            "id": 424242,
            "inputs_version": 99,
            "created_by": 1,
            "created_at": "2001-01-01T00:00:00Z",
            "missing_fields": [],
            "complete": True,
        }
        body = {"name": "sneaky", "workload_type": "REALTIME_INFERENCE", **owned}
        before = BriefFactory._meta.model.objects.count()
        response = client.post("/api/v1/briefs/", body, format="json")
        assert response.status_code == 400
        assert set(response.json()["errors"]) == set(owned)
        assert BriefFactory._meta.model.objects.count() == before
        honest = client.post("/api/v1/briefs/", {"name": "honest", "workload_type": "TRAINING"},
                             format="json")  # fmt: skip
        assert honest.status_code == 201
        assert honest.json()["inputs_version"] == 1

    def test_a_brief_cannot_be_created_in_or_moved_to_another_team(self, world):
        client = world["clients"][PLATFORM]
        other_team = BriefFactory._meta.model.objects.get(pk=world["other"]["brief"]).team_id
        body = {"name": "x", "workload_type": "TRAINING", "team": other_team}
        assert client.post("/api/v1/briefs/", body, format="json").status_code == 400
        patch = client.patch(
            f"/api/v1/briefs/{world['own']['brief']}/", {"team": other_team}, format="json"
        )
        assert patch.status_code == 400

    def test_quote_version_and_retired_cannot_be_set_by_a_client(self, world):
        client = world["clients"][PROCUREMENT]
        url = f"/api/v1/quotes/{world['own']['quote']}/"
        refused = client.patch(url, {"version": 99, "retired": True, "region": "eu"}, format="json")
        assert refused.status_code == 400
        assert set(refused.json()["errors"]) == {"version", "retired"}
        response = client.patch(url, {"region": "eu"}, format="json")
        assert response.status_code == 200
        assert response.json()["version"] == 2  # bumped once, by the change that was made
        assert response.json()["retired"] is False

    def test_decision_status_and_hash_cannot_be_set_by_a_client(self, world):
        client = world["clients"][PROCUREMENT]
        url = f"/api/v1/decision-records/{world['own']['record']}/"
        before = client.get(url).json()
        client.patch(
            url,
            {"status": "APPROVED", "content_hash": "0" * 64, "team": 1, "rationale": "r"},
            format="json",
        )
        after = client.get(url).json()
        assert after["status"] == "DRAFT"
        assert after["content_hash"] == before["content_hash"]


# The procurement pages, as a table: (method, url template, roles that may, scoped?). A role
# without the right gets 403 (with the reason in words); another team's confidential quote or
# record is 404 (as on the API). {quote} {record} {provider} are filled per team.
PROCUREMENT_PAGES = [
    ("get", "/quotes/providers/", EVERYONE, False),
    ("get", "/quotes/providers/new/", {PROCUREMENT}, False),
    ("post", "/quotes/providers/new/", {PROCUREMENT}, False),
    ("get", "/quotes/providers/{provider}/edit/", {PROCUREMENT}, False),
    ("post", "/quotes/providers/{provider}/edit/", {PROCUREMENT}, False),
    ("get", "/quotes/compare/h100-sxm5-80gb/", EVERYONE, False),
    ("get", "/quotes/import/template.csv", EVERYONE, False),
    ("get", "/quotes/import/", {PROCUREMENT}, False),
    ("get", "/quotes/import-catalog/", {PROCUREMENT}, False),
    ("post", "/quotes/import-catalog/", {PROCUREMENT}, False),
    ("get", "/decisions/checklist/quotes/{quote}/", EVERYONE, True),
    ("post", "/decisions/checklist/quotes/{quote}/", {PROCUREMENT}, True),
    ("get", "/decisions/{record}/", EVERYONE, True),
]
PAGE_CASES = [
    (method, url, role, whose, allowed, scoped)
    for method, url, allowed, scoped in PROCUREMENT_PAGES
    for role in ROLES
    for whose in (("own", "other") if scoped else ("own",))
]


@pytest.fixture
def page_world(catalog):
    own, other = TeamFactory(slug="own"), TeamFactory(slug="other")
    users = {role: UserFactory(roles=[role], teams=[own]) for role in ROLES}
    author = UserFactory(roles=[PROCUREMENT], teams=[own])
    outsider = UserFactory(roles=[PLATFORM, PROCUREMENT], teams=[other])

    def objects(team, user):
        brief = BriefFactory(team=team, created_by=user)
        quote = QuoteFactory(confidential_to=team, hourly_price_per_gpu=Decimal("2"))
        record = make_record(brief=brief, user=user, quote=quote)
        return {"quote": quote.pk, "record": record.pk, "provider": quote.provider_id}

    return {"users": users, "own": objects(own, author), "other": objects(other, outsider)}


@pytest.mark.parametrize(
    ("method", "url", "role", "whose", "allowed", "scoped"),
    PAGE_CASES,
    ids=[f"{m.upper()} {u} as {r} on {w}'s" for m, u, r, w, _, _ in PAGE_CASES],
)
def test_procurement_page_access(client, page_world, method, url, role, whose, allowed, scoped):
    client.force_login(page_world["users"][role])
    response = getattr(client, method)(url.format(**page_world[whose]), {})
    if scoped and whose == "other":
        assert response.status_code == 404, response.content[:200]
    elif role not in allowed:
        assert response.status_code == 403, response.content[:200]
        assert "You may not do this" in response.content.decode()
    else:
        assert response.status_code in (200, 302), response.content[:300]
