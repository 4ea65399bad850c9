"""Writes of providers, quotes and API routes. Every price change asks for a recompute of the
candidate tables after the transaction commits. Quotes and routes are retired, never deleted."""

import csv
import io
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import F

from apps.core.models import Team
from apps.finance.services import candidate_rows_drop_invisible, candidate_tables_request_recompute

from .models import OWNED_FIELDS, ApiRoute, Provider, Quote

QUOTE_FIELDS = (
    "provider", "gpu", "system", "gpus_per_node", "region", "pricing_term",
    "hourly_price_per_gpu", "currency", "storage_price_per_tb_month", "egress_price_per_gb",
    "network_monthly", "monthly_extras", "minimum_commitment_months", "quote_date",
    "valid_until", "source", "confidential_to", *OWNED_FIELDS,
)  # fmt: skip
ROUTE_FIELDS = (
    "provider", "model", "model_preset", "input_price_per_mtok", "output_price_per_mtok",
    "currency", "batch_discount", "rate_limit_rpm", "quote_date", "source",
)  # fmt: skip


@transaction.atomic
def provider_create(*, name: str, website: str = "") -> Provider:
    provider = Provider(name=name, website=website)
    provider.full_clean()
    provider.save()
    return provider


@transaction.atomic
def provider_update(*, provider: Provider, **fields: Any) -> Provider:
    for name, value in fields.items():
        setattr(provider, name, value)
    provider.full_clean()
    provider.save(update_fields=[*fields, "updated_at"])
    return provider


def _is_member(user: User, team: Team) -> bool:
    return team.members.filter(pk=user.pk).exists()


def _check_confidential_to_own_team(user: User | None, team: Team | None) -> None:
    if team is None or user is None or getattr(user, "is_superuser", False):
        return
    if not _is_member(user, team):
        raise ValidationError(
            {"confidential_to": f"you are not a member of {team.name}; a quote can be made "
             "confidential only to a team you belong to"}
        )  # fmt: skip


def _check_may_change_confidentiality(
    quote: Quote, new_team: Team | None, user: User | None
) -> None:
    """Only a quote's owners change who may see it: for a confidential quote, the members of
    its team (or its creator); for a public one, its creator and the members of the
    creator's teams. Otherwise a buyer of team B could take a public quote away from team A
    (and out of team A's candidate tables) by making it confidential to B."""
    if user is None:
        raise ValidationError({"confidential_to": "say who changes the quote's confidentiality"})
    _check_confidential_to_own_team(user, new_team)
    if getattr(user, "is_superuser", False) or quote.created_by_id == user.pk:
        return
    owner = quote.confidential_to
    if owner is not None:
        if _is_member(user, owner):
            return
        raise ValidationError(
            {"confidential_to": f"Quote #{quote.pk} is confidential to {owner.name}; only its "
             "members can change who sees it."}
        )  # fmt: skip
    creator = quote.created_by
    if creator is None:
        raise ValidationError(
            {"confidential_to": f"Quote #{quote.pk} records no creator, so no team owns it and "
             "it cannot be made confidential. Enter your own confidential quote instead."}
        )  # fmt: skip
    creator_teams = Team.objects.filter(members=creator).order_by("name")
    if creator_teams.filter(members=user).exists():
        return
    names = ", ".join(t.name for t in creator_teams) or "no team"
    instead = f", confidential to {new_team.name}," if new_team is not None else ""
    raise ValidationError(
        {"confidential_to": f"Quote #{quote.pk} was entered by {creator.get_username()}; only "
         f"they or a member of their team ({names}) can make it confidential. Enter your own "
         f"quote{instead} instead."}
    )  # fmt: skip


@transaction.atomic
def quote_create(*, created_by: User | None = None, **fields: Any) -> Quote:
    """A new quote, owned by ``created_by`` (and their teams); confidential only to a team
    its creator belongs to."""
    _check_confidential_to_own_team(created_by, fields.get("confidential_to"))
    quote = Quote(created_by=created_by, **fields)
    quote.full_clean()
    quote.save()
    candidate_tables_request_recompute(quotes_only=True)
    return quote


def _priced_update[Priced: (Quote, ApiRoute)](
    obj: Priced, fields: dict[str, Any], *, check: Callable[[Priced], None] | None = None
) -> Priced:
    """Change a live quote or route: bump its version (candidate tables record which version
    they costed) and ask for the recompute. A retired one never changes: enter a new one."""
    obj = type(obj).objects.select_for_update(no_key=True).get(pk=obj.pk)
    if obj.retired:
        noun = type(obj)._meta.verbose_name
        raise ValidationError({"retired": f"A retired {noun} cannot change; enter a new {noun}."})
    changed: list[str] = [name for name, value in fields.items() if getattr(obj, name) != value]
    if not changed:
        return obj
    for name in changed:
        setattr(obj, name, fields[name])
    if check is not None:
        check(obj)
    obj.full_clean()
    obj.version = F("version") + 1
    obj.save(update_fields=[*changed, "version", "updated_at"])
    obj.refresh_from_db()
    candidate_tables_request_recompute(quotes_only=True)
    return obj


def _priced_retire[Priced: (Quote, ApiRoute)](obj: Priced) -> Priced:
    obj = type(obj).objects.select_for_update(no_key=True).get(pk=obj.pk)
    if not obj.retired:
        obj.retired = True
        obj.version = F("version") + 1
        obj.save(update_fields=["retired", "version", "updated_at"])
        obj.refresh_from_db()
        candidate_tables_request_recompute(quotes_only=True)
    return obj


@transaction.atomic
def quote_update(*, quote: Quote, user: User | None = None, **fields: Any) -> Quote:
    """Change a live quote. Changing ``confidential_to`` needs ``user``, one of the quote's
    owners (see ``_check_may_change_confidentiality``); the candidate rows of teams that may
    no longer see it go in this transaction, not at the next recompute."""
    current = Quote.objects.select_for_update(no_key=True).get(pk=quote.pk)
    new_team = fields.get("confidential_to", current.confidential_to)
    moved = current.confidential_to_id != getattr(new_team, "pk", None)
    if moved:
        _check_may_change_confidentiality(current, new_team, user)
    quote = _priced_update(current, fields)
    if moved and quote.confidential_to_id is not None:
        candidate_rows_drop_invisible(quote_ids=[quote.pk])
    return quote


@transaction.atomic
def quote_retire(*, quote: Quote) -> Quote:
    return _priced_retire(quote)


def _check_one_live_route(route: ApiRoute) -> None:
    clash = ApiRoute.objects.filter(
        provider=route.provider_id, model=route.model, retired=False
    ).exclude(pk=route.pk)
    if clash.exists():
        raise ValidationError({"model": "this provider already has a live route for this model"})


@transaction.atomic
def api_route_create(**fields: Any) -> ApiRoute:
    route = ApiRoute(**fields)
    _check_one_live_route(route)
    route.full_clean()
    route.save()
    candidate_tables_request_recompute(quotes_only=True)
    return route


@transaction.atomic
def api_route_update(*, route: ApiRoute, **fields: Any) -> ApiRoute:
    """Change a live route. A new input or output price entered by hand replaces the route's
    hour-of-day windows (imported from a price list): the price typed is then the route's
    price all day, as it reads."""
    priced = ("input_price_per_mtok", "output_price_per_mtok", "cached_input_price_per_mtok")
    if (
        route.price_windows
        and "price_windows" not in fields
        and any(name in fields and fields[name] != getattr(route, name) for name in priced)
    ):
        fields = {**fields, "price_windows": []}
    return _priced_update(route, fields, check=_check_one_live_route)


@transaction.atomic
def api_route_retire(*, route: ApiRoute) -> ApiRoute:
    return _priced_retire(route)


@dataclass(frozen=True, kw_only=True)
class RowError:
    row: int  # the line of the file where the row ends (the header is line 1)
    field: str
    message: str


class QuoteImportError(Exception):
    def __init__(self, errors: list[RowError]) -> None:
        super().__init__(f"{len(errors)} row error(s)")
        self.errors = errors


MAX_IMPORT_ROWS = 5000
# The foreign keys a parsed row points at. The row parser looked each one up in this request
# (one query per table for the whole file), so validating a row does not ask the database again
# whether they exist (Django's ForeignKey.validate costs a query per key per row).
IMPORT_LOOKED_UP_KEYS = ("provider", "gpu", "system", "confidential_to", "created_by")
# Rows are written in batches of this many (one INSERT each; SQLite allows 32,766 bound
# parameters a statement, and a quote row binds ~20).
IMPORT_BATCH_SIZE = 500


def _import_row_clean(quote: Quote) -> None:
    """Validate one parsed row without a query: field validators (prices >= 0, 1..576 GPUs per
    node, lengths, choices) and ``clean()``. The model's CheckConstraints repeat rules that the
    field validators and the row parser already check (gpu xor system, valid_until after
    quote_date), and ``validate_constraints`` would cost one query per constraint per row; the
    database still enforces them when the batch is written (see ``quotes_import_csv``)."""
    looked_up = [name for name in IMPORT_LOOKED_UP_KEYS if getattr(quote, f"{name}_id")]
    # A quote has no unique field or constraint besides its id: nothing for validate_unique.
    # created_by is the signed-in user who imports (set by the view, not read from the file).
    quote.full_clean(exclude=looked_up, validate_unique=False, validate_constraints=False)


def _model_errors_of_parsed(exc: ValidationError) -> dict[str, list[str]]:
    """The model's own errors on the columns of a refused row that did parse (the parser's
    ``RowRefused.fields``): so that a row is refused once with every problem it has. The
    columns that did not parse are left out of the check."""
    fields = getattr(exc, "fields", None)
    if not fields:
        return {}
    quote = Quote(**fields)
    refused = set(exc.message_dict)
    exclude = [f.name for f in Quote._meta.fields if f.name not in fields or f.name in refused]
    exclude += [name for name in IMPORT_LOOKED_UP_KEYS if getattr(quote, f"{name}_id", None)]
    try:
        quote.full_clean(exclude=exclude, validate_unique=False, validate_constraints=False)
    except ValidationError as more:
        return {k: v for k, v in more.message_dict.items() if k not in refused}
    return {}


@transaction.atomic
def quotes_import_csv(*, text: str, parse_row: Any, created_by: User | None = None) -> list[Quote]:
    """Import a CSV of quotes as a whole: any bad row rejects the file and nothing is saved.

    ``parse_row(dict) -> dict`` turns one CSV row into Quote field values or raises
    ``ValidationError`` (the API and the page share one row parser).
    """
    errors: list[RowError] = []
    quotes: list[Quote] = []
    if "\x00" in text:
        raise QuoteImportError([RowError(row=1, field="", message="the file holds NUL bytes")])
    reader = csv.DictReader(io.StringIO(text))
    line = 1
    try:
        for count, raw in enumerate(reader, start=1):
            line = reader.line_num
            if count > MAX_IMPORT_ROWS:
                errors.append(RowError(row=line, field="", message="too many rows"))
                break
            try:
                quote = Quote(created_by=created_by, **parse_row(raw))
                _import_row_clean(quote)
            except ValidationError as exc:
                found = dict(exc.message_dict)
                found.update(
                    {k: v for k, v in _model_errors_of_parsed(exc).items() if k not in found}
                )
                for field, messages in found.items():
                    errors.extend(RowError(row=line, field=field, message=m) for m in messages)
                continue
            quotes.append(quote)
    except csv.Error as exc:
        errors.append(RowError(row=line + 1, field="", message=f"not valid CSV: {exc}"))
    if not quotes and not errors:
        errors.append(RowError(row=1, field="", message="the file holds no quote rows"))
    if errors:
        raise QuoteImportError(errors)
    try:
        with transaction.atomic():
            Quote.objects.bulk_create(quotes, batch_size=IMPORT_BATCH_SIZE)
    except IntegrityError as exc:
        # A row the checks above let through but a database rule refuses (or a provider or GPU
        # deleted meanwhile): the file is refused as a whole, in words, not a 500.
        message = f"a row breaks a database rule ({exc.__class__.__name__}: {exc})"
        raise QuoteImportError([RowError(row=1, field="", message=message[:300])]) from exc
    candidate_tables_request_recompute()
    return quotes
