"""The versions of the quotes (or API routes) a candidate table was costed with, stored once.

A table records which version of every quote and route it costed (``TableInputs.quotes`` /
``api_routes``), so that a price change re-costs only what changed (apps.finance.repricing).
Every table of a team sees the same quotes, so those maps are alike across the team's tables:
each is stored once, as a ``VersionSet`` named by the digest of its content, and a table keeps
the digest (``CandidateTable.quote_set`` / ``route_set``). A price change then writes one new
set a team, not a copy of every version in each table it touches, and tells a table that saw
the team's current versions by comparing two digests; the work per table no longer grows with
the number of quotes (docs/benchmarks.md, "How both grow").

A set's content never changes (its name is its content), so a worker keeps the sets it read or
wrote (``SETS``) and never reads them again. Sets no table names are deleted by the sweeper
(``version_sets_sweep``) once older than ``SET_UNNAMED_KEPT``. Versions only grow, so a set
no table names is rarely named again (a new brief of a team whose only table went, before
any quote changed); if the sweeper deletes it just as a recompute names it, the next price
change finds no set and recomputes that table in full: slower, never wrong. A set is never
updated, and new ones are inserted in digest order, so two workers storing the same new sets
wait for one another at most, never deadlock.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import timedelta

from django.utils import timezone

from .models import CandidateTable, VersionSet
from .state import TableInputs, Versions, inputs_from_json

# A set named by no table is deleted by the sweeper once this old: far longer than a recompute
# takes from storing a set to committing the tables that name it (seconds).
SET_UNNAMED_KEPT = timedelta(hours=1)

# Sets a worker keeps decoded: a team's current set and the one before it for each team and
# model (routes) in play; cleared when full. About 1.5 MB each at 20,000 quotes.
SETS_KEPT = 64


class SetCache:
    """Decoded sets by digest (their content never changes, so a kept one is always right)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._by_digest: dict[str, Versions] = {}

    def get(self, digest: str) -> Versions | None:
        return self._by_digest.get(digest)

    def keep(self, sets: Iterable[Versions]) -> None:
        new = [s for s in sets if s.digest not in self._by_digest][-self.size :]
        if len(self._by_digest) + len(new) > self.size:
            self._by_digest.clear()
        for found in new:
            self._by_digest[found.digest] = found

    def clear(self) -> None:
        self._by_digest.clear()


SETS = SetCache(size=SETS_KEPT)


def version_sets_read(digests: Iterable[str]) -> dict[str, Versions]:
    """The sets named ``digests`` (one query for those not kept); a name with no set is absent
    (its table is then recomputed in full)."""
    wanted = {d for d in digests if d}
    found = {d: s for d in wanted if (s := SETS.get(d)) is not None}
    missing = wanted - found.keys()
    if missing:
        read = [
            Versions(digest=digest, of=versions)
            for digest, versions in VersionSet.objects.filter(digest__in=missing).values_list(
                "digest", "versions"
            )
            if isinstance(versions, dict)
        ]
        SETS.keep(read)
        found.update((s.digest, s) for s in read)
    return found


def version_sets_store(sets: Iterable[Versions]) -> None:
    """Make sure every set of ``sets`` is stored (in the caller's transaction). Those already
    there are not sent again (a team's tables mostly name its one current set); one stored
    meanwhile by another worker is skipped by the insert."""
    by_digest = {s.digest: s for s in sets}
    if not by_digest:
        return
    there = set(
        VersionSet.objects.filter(digest__in=list(by_digest)).values_list("digest", flat=True)
    )
    now = timezone.now()
    VersionSet.objects.bulk_create(
        [
            VersionSet(digest=d, versions=s.of, created_at=now)
            for d, s in sorted(by_digest.items())
            if d not in there
        ],
        ignore_conflicts=True,
    )
    SETS.keep(by_digest.values())


def version_sets_sweep() -> int:
    """Delete the sets no table names that are older than SET_UNNAMED_KEPT; returns how many."""
    cutoff = timezone.now() - SET_UNNAMED_KEPT
    named = CandidateTable.objects.values("quote_set")
    routes = CandidateTable.objects.values("route_set")
    deleted, _ = (
        VersionSet.objects.filter(created_at__lt=cutoff)
        .exclude(digest__in=named)
        .exclude(digest__in=routes)
        .delete()
    )
    return deleted


def stored_inputs(table: CandidateTable) -> TableInputs | None:
    """The inputs ``table`` stored, with its version sets; None when they cannot be read (the
    table is then recomputed in full)."""
    sets = version_sets_read([table.quote_set, table.route_set])
    return inputs_from_json(table.inputs, sets.get(table.quote_set), sets.get(table.route_set))


def table_versions(table: CandidateTable) -> tuple[dict[str, int], dict[str, int]]:
    """The quote and route versions ``table`` was costed with (empty where its set is gone)."""
    sets = version_sets_read([table.quote_set, table.route_set])
    quotes, routes = sets.get(table.quote_set), sets.get(table.route_set)
    return (
        dict(quotes.of) if quotes is not None else {},
        dict(routes.of) if routes is not None else {},
    )
