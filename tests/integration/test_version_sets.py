"""The quote and route versions a table costed are stored once a set, named by their digest,
and shared by every table that saw the same ones (apps.finance.version_sets): a price change
writes one new set a team, whatever the number of tables or quotes, and a table whose set is
gone is recomputed in full, never costed from nothing."""

from datetime import timedelta
from decimal import Decimal

import pytest
from django.utils import timezone

from apps.briefs.models import WorkloadBrief
from apps.finance.models import CandidateTable, VersionSet
from apps.finance.services import candidate_tables_recompute, candidate_tables_request_recompute
from apps.finance.state import Versions
from apps.finance.version_sets import (
    SET_UNNAMED_KEPT,
    SETS,
    table_versions,
    version_sets_store,
    version_sets_sweep,
)
from apps.quotes.models import Quote
from apps.quotes.services import quote_update
from tests.factories.briefs import BriefFactory
from tests.factories.quotes import QuoteFactory
from tests.integration.test_repricing import _gpu, assert_same_as_fresh

pytestmark = pytest.mark.django_db


@pytest.fixture
def tables(catalog, other_team):
    """Three briefs of one team, one of another team that also sees a confidential quote."""
    first = BriefFactory()
    team_briefs = [first, *(BriefFactory(team=first.team, concurrency=n) for n in (2, 8))]
    other = BriefFactory(team=other_team)
    quotes = {
        "h100": QuoteFactory(gpu=_gpu("h100-sxm5-80gb"), hourly_price_per_gpu=Decimal("2.50")),
        "l40s": QuoteFactory(gpu=_gpu("l40s-48gb"), hourly_price_per_gpu=Decimal("0.90")),
        "secret": QuoteFactory(gpu=_gpu("l40s-48gb"), confidential_to=other_team),
    }
    briefs = [*team_briefs, other]
    candidate_tables_request_recompute()
    candidate_tables_recompute(brief_ids=[b.pk for b in briefs])
    return {"team": team_briefs, "other": other, "briefs": briefs, "quotes": quotes}


def _sets_of(briefs):
    return [CandidateTable.objects.get(brief=b).quote_set for b in briefs]


def test_versions_tell_changed_new_and_gone_ids():
    before = Versions.of_map({"1": 1, "2": 3, "5": 1})
    now = Versions.of_map({"1": 1, "2": 4, "7": 1})
    assert before.changes_to(now) == ([2, 7], [5])
    assert before.changes_to(Versions.of_map({"5": 1, "2": 3, "1": 1})) == ([], [])
    assert before.digest != now.digest


class TestSharedSets:
    def test_a_teams_tables_name_one_set_and_another_team_its_own(self, tables):
        team_sets = set(_sets_of(tables["team"]))
        assert len(team_sets) == 1
        (other_set,) = _sets_of([tables["other"]])
        assert other_set not in team_sets  # it also sees the confidential quote
        secret = str(tables["quotes"]["secret"].pk)
        assert secret in table_versions(CandidateTable.objects.get(brief=tables["other"]))[0]
        team_table = CandidateTable.objects.get(brief=tables["team"][0])
        assert secret not in table_versions(team_table)[0]
        # The versions live in the sets, not in each table's inputs.
        assert "quotes" not in team_table.inputs and "api_routes" not in team_table.inputs
        assert VersionSet.objects.filter(digest__in=[*team_sets, other_set]).count() == 2

    def test_a_price_change_writes_one_new_set_a_team_and_the_sweeper_drops_the_old(self, tables):
        before = set(VersionSet.objects.values_list("digest", flat=True))
        old_team_set = _sets_of(tables["team"])[0]
        quote_update(quote=tables["quotes"]["h100"], hourly_price_per_gpu=Decimal("2.10"))
        candidate_tables_recompute(brief_ids=[b.pk for b in tables["briefs"]])
        new = set(VersionSet.objects.values_list("digest", flat=True)) - before
        assert len(new) == 2  # one for each team, however many tables it has
        team_sets = set(_sets_of(tables["team"]))
        assert len(team_sets) == 1 and team_sets <= new
        team_table = CandidateTable.objects.get(brief=tables["team"][0])
        assert table_versions(team_table)[0][str(tables["quotes"]["h100"].pk)] == 2
        assert_same_as_fresh(tables["briefs"])

        assert version_sets_sweep() == 0  # the old sets are new: kept
        VersionSet.objects.update(created_at=timezone.now() - SET_UNNAMED_KEPT - timedelta(1))
        named = {d for t in _all_tables() for d in (t.quote_set, t.route_set)}
        stored = set(VersionSet.objects.values_list("digest", flat=True))
        assert old_team_set in stored - named
        assert version_sets_sweep() == len(stored - named)
        assert set(VersionSet.objects.values_list("digest", flat=True)) == named

    def test_a_table_whose_set_is_gone_is_recomputed_in_full(self, tables):
        VersionSet.objects.all().delete()
        SETS.clear()  # nothing kept by this process either
        quote_update(quote=tables["quotes"]["l40s"], hourly_price_per_gpu=Decimal("0.80"))
        candidate_tables_recompute(brief_ids=[b.pk for b in tables["briefs"]])
        for table in _all_tables():
            assert table.computed_version == table.requested_version
            assert VersionSet.objects.filter(digest=table.quote_set).exists()
        assert_same_as_fresh(tables["briefs"])


def _all_tables():
    return list(CandidateTable.objects.all())


class TestLiveVersionsKeptAcrossBatches:
    """The versions each team sees among the live quotes are kept from one batch to the next
    while the live quotes read are the same (apps.finance.repricing.LIVE_QUOTES). Batches may
    overlap (the embedded server's eight threads run recomputes in-process; here a batch is
    started from inside another at the point where a second thread could run it), so a batch
    must never keep versions worked out from live quotes other than those it is kept for."""

    def test_a_batch_that_overlaps_another_leaves_no_team_on_older_versions(
        self, tables, monkeypatch
    ):
        from apps.finance import repricing

        quotes, briefs = tables["quotes"], tables["briefs"]
        real_stamp = repricing.engine_stamp
        overlapped = []

        def stamp_while_another_batch_runs():
            # Called once this batch has read the live quotes and before it works out any
            # team's versions: a price change lands and a second batch runs to the end.
            if not overlapped:
                overlapped.append(True)
                quote_update(quote=quotes["l40s"], hourly_price_per_gpu=Decimal("0.80"))
                candidate_tables_recompute(brief_ids=[tables["team"][0].pk])
            return real_stamp()

        quote_update(quote=quotes["h100"], hourly_price_per_gpu=Decimal("2.10"))
        monkeypatch.setattr(repricing, "engine_stamp", stamp_while_another_batch_runs)
        candidate_tables_recompute(brief_ids=[b.pk for b in briefs])
        assert overlapped
        # The second price change asked for every table again: the next batch finishes them.
        candidate_tables_recompute(brief_ids=[b.pk for b in briefs])
        other = CandidateTable.objects.get(brief=tables["other"])
        assert table_versions(other)[0][str(quotes["l40s"].pk)] == 2
        assert_same_as_fresh(briefs)

    def test_teams_that_see_the_same_quotes_share_one_map_and_few_maps_are_kept(self, monkeypatch):
        # A worker keeps the last live quotes' versions between batches, for every team it
        # met: at 20,000 quotes a map is about 1.5 MB (apps.finance.version_sets.SETS_KEPT), so
        # one a team would grow with the teams.
        from apps.finance import repricing

        monkeypatch.setattr(repricing, "LIVE_SETS_KEPT", 2, raising=False)
        seen = repricing.LiveSeen(((1, 1, None), (2, 1, 10), (3, 1, 11), (4, 1, 12)))

        def visible(team):
            return lambda: {str(pk): v for pk, v, conf in seen.live if conf in (None, team)}

        first, second = seen.versions(20, visible(20)), seen.versions(21, visible(21))
        assert first is second  # neither team has a confidential quote: one map
        assert first.of == {"1": 1}
        for team in (10, 11, 12):  # each sees a quote of its own: a map each
            assert seen.versions(team, visible(team)).of == {"1": 1, str(team - 8): 1}
        kept = {id(v) for v in seen.by_key.values()}
        assert len(kept) <= 2


class TestTheRentReserveBuyComparisonOfABatch:
    """A batch's re-costing reads each team's quotes of the compared GPU once
    (apps.finance.repricing, ``gpu_quotes``): the comparison must be the full recompute's,
    with a system quote of that GPU, another team's confidential quote and the team's own."""

    def test_it_compares_what_a_fresh_recompute_compares(self, catalog, other_team):
        from apps.catalog.models import GpuSystem

        first = BriefFactory()
        briefs = [
            first,
            BriefFactory(team=first.team, concurrency=8),
            BriefFactory(team=other_team),
        ]
        h100 = _gpu("h100-sxm5-80gb")
        quotes = {
            "rent": QuoteFactory(gpu=h100, hourly_price_per_gpu=Decimal("2.00")),
            "reserve": QuoteFactory(
                gpu=h100, pricing_term="RESERVED_1Y", hourly_price_per_gpu=Decimal("1.60")
            ),
            "system": QuoteFactory(
                gpu=None,
                system=GpuSystem.objects.get(slug="hgx-h100-8"),
                pricing_term="RESERVED_3Y",
                hourly_price_per_gpu=Decimal("1.40"),
            ),
            "ours": QuoteFactory(
                gpu=h100, confidential_to=first.team, hourly_price_per_gpu=Decimal("1.90")
            ),
            "theirs": QuoteFactory(
                gpu=h100, confidential_to=other_team, hourly_price_per_gpu=Decimal("1.80")
            ),
        }
        candidate_tables_request_recompute()
        candidate_tables_recompute(brief_ids=[b.pk for b in briefs])
        assert {t.capacity_model.get("gpu") for t in _all_tables()} == {"h100-sxm5-80gb"}
        for key, price in (("rent", "1.50"), ("ours", "1.45"), ("theirs", "1.35")):
            quote_update(quote=quotes[key], hourly_price_per_gpu=Decimal(price))
            candidate_tables_recompute(brief_ids=[b.pk for b in briefs])
            assert_same_as_fresh(briefs)


class TestRescopedQuotes:
    def test_a_quote_made_confidential_and_one_moved_between_teams_are_recosted(
        self, tables, other_team
    ):
        from apps.core.roles import Role
        from tests.factories.core import UserFactory

        quotes, team = tables["quotes"], tables["team"][0].team
        both = UserFactory(roles=[Role.PROCUREMENT], teams=[team, other_team])
        Quote.objects.filter(pk=quotes["h100"].pk).update(created_by=both)  # a team owns it
        quote_update(quote=quotes["h100"], confidential_to=other_team, user=both)
        quote_update(quote=quotes["secret"], confidential_to=team, user=both)
        candidate_tables_recompute(brief_ids=[b.pk for b in tables["briefs"]])
        mine = table_versions(CandidateTable.objects.get(brief=tables["team"][0]))[0]
        theirs = table_versions(CandidateTable.objects.get(brief=tables["other"]))[0]
        assert str(quotes["h100"].pk) in theirs and str(quotes["h100"].pk) not in mine
        assert str(quotes["secret"].pk) in mine and str(quotes["secret"].pk) not in theirs
        assert_same_as_fresh(tables["briefs"])


# How many times the second writer's lock wait is looked for (pg_locks) before the first
# commits anyway: the outcome asserted holds either way; the wait only makes the race certain.
LOCK_LOOKS = 200


@pytest.mark.django_db(transaction=True)
class TestTwoWorkersStoreTheSameSet:
    """PostgreSQL, READ COMMITTED: two recomputes that store the same new set at once (two
    teams that see the same quotes, in two workers) both commit, and the set is stored once."""

    def test_the_second_waits_for_the_first_and_skips_the_set(self):
        import threading

        from django.db import connection, connections, transaction

        if connection.vendor != "postgresql":
            pytest.skip("two writers at once need PostgreSQL (SQLite serialises them)")
        new = Versions.of_map({"1": 5, "2": 7})
        errors: list[Exception] = []

        def second():
            try:
                with transaction.atomic():
                    version_sets_store([new])
            except Exception as exc:  # reported below, in the test's thread
                errors.append(exc)
            finally:
                connections.close_all()

        with transaction.atomic():
            version_sets_store([new])
            worker = threading.Thread(target=second)
            worker.start()
            with connection.cursor() as cursor:
                for _ in range(LOCK_LOOKS):
                    cursor.execute("SELECT count(*) FROM pg_locks WHERE NOT granted")
                    if cursor.fetchone()[0]:
                        break
                    threading.Event().wait(0.01)
        worker.join()
        assert errors == []
        assert list(
            VersionSet.objects.filter(digest=new.digest).values_list("versions", flat=True)
        ) == [{"1": 5, "2": 7}]


class TestTheSweeper:
    def test_a_locked_database_in_the_set_sweep_does_not_keep_stale_tables_from_being_sent(
        self, tables, monkeypatch
    ):
        # The sweeper's own job is to send the stale tables whose recompute was lost; deleting
        # unnamed sets is housekeeping. On the embedded default (SQLite, eight threads writing)
        # either write may meet a locked database (apps.finance.tasks._sweep_once tries again
        # next time): the sets' delete must not stop the tables being sent.
        from django.db import OperationalError

        from apps.finance import services

        def locked():
            raise OperationalError("database is locked")

        quote_update(quote=tables["quotes"]["h100"], hourly_price_per_gpu=Decimal("2.10"))
        CandidateTable.objects.update(queued_at=None)  # the recompute's task was lost
        monkeypatch.setattr(services, "version_sets_sweep", locked)
        with pytest.raises(OperationalError):
            services.candidate_tables_sweep()
        assert not CandidateTable.objects.filter(queued_at__isnull=True).exists()


def test_a_table_without_a_ranking_names_no_set_and_its_old_one_is_swept(tables):
    brief = tables["team"][0]
    WorkloadBrief.objects.filter(pk=brief.pk).update(concurrency=None)  # no longer costable
    candidate_tables_request_recompute(brief_ids=[brief.pk])
    candidate_tables_recompute(brief_ids=[brief.pk])
    table = CandidateTable.objects.get(brief=brief)
    assert table.no_ranking_reason and (table.quote_set, table.route_set) == ("", "")
    VersionSet.objects.update(created_at=timezone.now() - SET_UNNAMED_KEPT - timedelta(1))
    version_sets_sweep()
    named = {d for t in _all_tables() for d in (t.quote_set, t.route_set) if d}
    assert set(VersionSet.objects.values_list("digest", flat=True)) == named
