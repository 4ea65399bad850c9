"""Reads of providers, quotes and API routes, with the visibility and staleness rules."""

from datetime import date, timedelta

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import Q, QuerySet
from django.http import Http404

from apps.core.models import Team

from .models import ApiRoute, Provider, Quote


def dates_are_stale(quote_date: date, valid_until: date | None, *, today: date) -> bool:
    """Past its valid_until, or older than QUOTE_MAX_AGE_DAYS."""
    if valid_until is not None and valid_until < today:
        return True
    return quote_date < today - timedelta(days=settings.QUOTE_MAX_AGE_DAYS)


def quote_is_stale(quote: Quote, *, today: date) -> bool:
    return dates_are_stale(quote.quote_date, quote.valid_until, today=today)


def quote_age_days(quote: Quote, *, today: date) -> int:
    return (today - quote.quote_date).days


def _visible(user: AbstractBaseUser | AnonymousUser) -> Q:
    """Quotes under NDA are visible only to their team."""
    if getattr(user, "is_superuser", False):
        return Q()
    return Q(confidential_to__isnull=True) | Q(confidential_to__members=user)


def provider_list() -> QuerySet[Provider]:
    return Provider.objects.order_by("name")


def provider_by_id_or_name(text: str) -> Provider | None:
    """The provider a client names by id (digits) or by name, any case; None when none is."""
    if text.isascii() and text.isdigit():
        return Provider.objects.filter(pk=int(text)).first() if len(text) < 19 else None
    return Provider.objects.filter(name__iexact=text.strip()).first()


def quote_list_for_user(
    user: AbstractBaseUser | AnonymousUser,
    *,
    include_retired: bool = False,
    provider: Provider | None = None,
) -> QuerySet[Quote]:
    qs = Quote.objects.filter(provider=provider) if provider is not None else Quote.objects.all()
    qs = (
        qs.filter(_visible(user))
        .select_related("provider", "gpu", "system", "system__gpu", "confidential_to")
        .order_by("provider__name", "id")
        .distinct()
    )
    if not include_retired:
        qs = qs.filter(retired=False)
    return qs


def quote_get_for_user(user: AbstractBaseUser | AnonymousUser, pk: int) -> Quote:
    try:
        return quote_list_for_user(user, include_retired=True).get(pk=pk)
    except Quote.DoesNotExist:
        raise Http404("No such quote.") from None


def api_route_list(
    *, include_retired: bool = False, provider: Provider | None = None
) -> QuerySet[ApiRoute]:
    qs = ApiRoute.objects.select_related("provider").order_by("provider__name", "model", "id")
    if provider is not None:
        qs = qs.filter(provider=provider)
    return qs if include_retired else qs.filter(retired=False)


def quotes_for_team(team_id: int) -> QuerySet[Quote]:
    """Live quotes a brief of this team may be costed against."""
    return (
        Quote.objects.filter(retired=False)
        .filter(Q(confidential_to__isnull=True) | Q(confidential_to_id=team_id))
        .select_related("provider", "gpu", "system", "system__gpu")
        .order_by("id")
    )


def quote_change_refusal(user: AbstractBaseUser | AnonymousUser, quote: Quote) -> str | None:
    """Why ``user`` may not edit or retire ``quote``, or None when they may. A quote belongs to
    the team that entered it: a confidential quote to its team, a public one to its creator
    and the members of the creator's teams; a superuser may change any. A public quote that
    records no creator (entered before creators were recorded, or by the demo loader) belongs
    to no team and stays shared: any procurement user maintains it."""
    if getattr(user, "is_superuser", False) or quote.created_by_id == user.pk:
        return None
    owner = quote.confidential_to
    if owner is not None:
        if owner.members.filter(pk=user.pk).exists():  # type: ignore[misc]
            return None
        return (
            f"Quote #{quote.pk} is confidential to {owner.name}; only its members edit or "
            "retire it."
        )
    creator = quote.created_by
    if creator is None:
        return None
    creator_teams = Team.objects.filter(members=creator).order_by("name")
    if creator_teams.filter(members=user).exists():  # type: ignore[misc]
        return None
    names = ", ".join(t.name for t in creator_teams) or "no team"
    return (
        f"Quote #{quote.pk} was entered by {creator.get_username()} ({names}); only that team "
        "edits or retires it. Enter your own quote instead."
    )


def quote_ids_user_may_change(
    user: AbstractBaseUser | AnonymousUser, quotes: list[Quote]
) -> set[int]:
    """The ids among ``quotes`` that ``user`` may edit or retire (the rule of
    ``quote_change_refusal``), in two queries for the whole list, not two per quote."""
    if getattr(user, "is_superuser", False):
        return {q.pk for q in quotes}
    if not quotes:
        return set()
    memberships = Team.members.through.objects.filter(  # type: ignore[attr-defined]
        user_id__in={q.created_by_id for q in quotes if q.created_by_id} | {user.pk}
    ).values_list("user_id", "team_id")
    teams_of: dict[int, set[int]] = {}
    for user_id, team_id in memberships:
        teams_of.setdefault(user_id, set()).add(team_id)
    mine = teams_of.get(user.pk, set())  # type: ignore[arg-type]
    may = set()
    for q in quotes:
        if q.created_by_id == user.pk:
            may.add(q.pk)
        elif q.confidential_to_id is not None:
            if q.confidential_to_id in mine:
                may.add(q.pk)
        elif q.created_by_id is None or teams_of.get(q.created_by_id, set()) & mine:
            may.add(q.pk)
    return may
