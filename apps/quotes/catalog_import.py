"""Quotes from a published GPU catalog (SkyPilot ``vms.csv``, gpuhunt CSV), as a whole.

The file is read by ``catalog_rows.read_catalog`` into one quote per instance type x region x
term (its GPUs per node the instance's GPU count, its price the instance's own). Then, as the
quote CSV import does (``services.quotes_import_csv``): any row error and nothing is saved; rows
are validated in Python without a query each; writes go in batches. Rows that are not GPU
quotes (no price, a GPU the catalog lacks, a fractional GPU) are skipped and listed with their
row counts; the rest imports. Unlike that import, a catalog import is keyed: each quote
carries ``import_key`` (format, instance type, GPU, region, term) and a re-import of the same
provider updates the live quote of that key in place (a new price bumps its version) instead
of adding another. Live quotes this import's keys supersede (the one-quote-per-GPU keys of
imports before instance sizes were kept apart: format, GPU, region, term) are retired. One
coalesced recompute is asked for after commit, and only when a price or a node size changed,
a quote was added or one retired.
"""

from dataclasses import dataclass, field
from datetime import date
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.core.files.uploadedfile import UploadedFile
from django.db import IntegrityError, connection, transaction
from django.db.models import F, Q
from django.utils import timezone

from apps.catalog.models import Gpu
from apps.core.models import Team
from apps.finance.services import candidate_tables_request_recompute

from .catalog_rows import FORMATS, CatalogFileError, CatalogQuote, read_catalog
from .models import Provider, Quote
from .services import IMPORT_BATCH_SIZE, QuoteImportError, RowError

#: The largest catalog file (settings.QUOTE_CATALOG_MAX_BYTES, 20 MiB): a larger file is a
#: field-level 400 on ``file``; apps/core/middleware.py refuses a request body declared longer
#: than this plus the multipart form around it with a 413, unread.
MAX_CATALOG_BYTES = settings.QUOTE_CATALOG_MAX_BYTES
#: Rows a file may hold (GPU and CPU rows together); this bounds the work per request (about
#: 3 s of parsing on the 2-core development machine). A SkyPilot row with its GpuInfo is about
#: 200 bytes, so a 20 MiB file of them is about 100,000 rows; a file of shorter rows reaches
#: this before the byte limit and is refused in words ("split the file").
MAX_CATALOG_ROWS = 100_000
#: Both sources publish USD prices (SkyPilot: sky/catalog/common.py; gpuhunt: "price: $ per
#: hour", _internal/models.py CatalogItem).
CATALOG_CURRENCY = "USD"
SOURCE_MAX = 300  # Quote.source's max_length
#: The fields a catalog row sets; the others are the same for every quote of an import (its
#: provider, the GPU the key names, USD, the importing user, the model's defaults) and valid by
#: construction, so each row validates only these (a 24,000-row import validates 8,000 quotes:
#: every field of each took a quarter of its time, bench/catalog_import.py).
ROW_FIELDS = (
    "hourly_price_per_gpu", "gpus_per_node", "source", "region", "pricing_term", "import_key",
    "quote_date", "fetched_date",
)  # fmt: skip
_NOT_ROW_FIELDS = [f.name for f in Quote._meta.fields if f.name not in ROW_FIELDS]
#: What a re-import changes on a quote it finds; the first two are prices (a new version).
PRICED_FIELDS = ("hourly_price_per_gpu", "gpus_per_node")
REFRESHED_FIELDS = ("source", "quote_date", "fetched_date")


@dataclass(kw_only=True)
class CatalogImportResult:
    fmt: str
    provider: Provider
    file_name: str
    fetched_date: date
    created: list[Quote] = field(default_factory=list)
    updated: list[Quote] = field(default_factory=list)  # a new price or node size
    refreshed: list[Quote] = field(default_factory=list)  # same price, new fetch date
    unchanged: list[Quote] = field(default_factory=list)
    retired: list[Quote] = field(default_factory=list)  # superseded keys (see the module doc)
    skipped: list[dict[str, object]] = field(default_factory=list)
    unknown_accelerators: list[str] = field(default_factory=list)
    rows: int = 0
    briefs_queued: list[int] = field(default_factory=list)


def import_key(*, fmt: str, quote: CatalogQuote) -> str:
    """One live quote per format, instance type, GPU, region and term (Quote.import_key is 200
    characters: a longer instance name is cut, its key still unique in practice)."""
    return f"{fmt}:{quote.instance[:80]}:{quote.gpu_slug}:{quote.region}:{quote.term}"[:200]


def legacy_key(*, fmt: str, quote: CatalogQuote) -> str:
    """The key imports gave a quote before instance sizes were kept apart (one per GPU)."""
    return f"{fmt}:{quote.gpu_slug}:{quote.region}:{quote.term}"


def _source(*, fmt: str, filename: str, quote: CatalogQuote) -> str:
    offer = quote.offer
    where = f"{offer.region} ({offer.zone})" if offer.zone else offer.region
    text = (
        f"{FORMATS[fmt]} {filename!r}: {offer.instance}, {offer.count} x {offer.accelerator}, "
        f"in {where}, row {offer.row}"
    )
    return text[:SOURCE_MAX]


def _importers_quotes(provider: Provider, keys: list[str], team_ids: set[int]) -> dict[str, Quote]:
    """The live quotes of ``keys`` this import updates, by key: the public ones and those
    confidential to the importer's teams, the team's own winning when both hold a key. Another
    team's confidential quote is never read here: the import creates its own quote beside it,
    and its answer is the same whether or not such a quote exists."""
    mine = Q(confidential_to__isnull=True) | Q(confidential_to__in=team_ids)
    found = (
        Quote.objects.select_for_update(no_key=True)
        .filter(mine, provider=provider, retired=False, import_key__in=keys)
        .order_by(F("confidential_to").asc(nulls_first=True), "pk")
    )
    return {q.import_key: q for q in found}  # the later (confidential) one of a key wins


def _write_changes(updated: list[Quote], refreshed: list[Quote], *, day: date, now: Any) -> None:
    """One ``UPDATE ... FROM (VALUES ...)`` per batch (PostgreSQL, and SQLite since 3.33): the
    per-quote values (price, node size, source) from the VALUES list, the shared ones (dates,
    version + 1 where the price moved) as parameters. ``bulk_update`` builds a ``When`` per
    quote and field and took 5.5 s of a 10,000-row re-import's 8.7 (bench/catalog_import.py)."""
    quote_name = connection.ops.quote_name
    table = quote_name(Quote._meta.db_table)
    col = {f.name: quote_name(f.column or f.name) for f in Quote._meta.concrete_fields}
    for quotes, bump in ((updated, True), (refreshed, False)):
        version = f"{col['version']} + 1" if bump else col["version"]
        for start in range(0, len(quotes), IMPORT_BATCH_SIZE):
            batch = quotes[start : start + IMPORT_BATCH_SIZE]
            values = ", ".join(["(%s, %s, %s, %s)"] * len(batch))
            params: list[Any] = [day, day, now]
            for q in batch:
                params += [q.pk, str(q.hourly_price_per_gpu), q.gpus_per_node, q.source]
            # Names from the model's own metadata, quoted by the backend; values as parameters.
            sql = (
                f"UPDATE {table} SET "  # noqa: S608
                f"{col['quote_date']} = %s, {col['fetched_date']} = %s, {col['updated_at']} = %s, "
                f"{col['hourly_price_per_gpu']} = CAST(v.column2 AS NUMERIC(14, 4)), "
                f"{col['gpus_per_node']} = CAST(v.column3 AS INTEGER), "
                f"{col['source']} = v.column4, {col['version']} = {version} "
                f"FROM (VALUES {values}) AS v WHERE {table}.{col['id']} = v.column1"
            )
            with connection.cursor() as cursor:
                cursor.execute(sql, params)


@transaction.atomic
def quotes_import_catalog(
    *,
    text: str,
    fmt: str,
    provider: Provider,
    filename: str,
    fetched_date: date | None = None,
    created_by: User | None = None,
) -> CatalogImportResult:
    """Import a catalog file for ``provider``; raises ``QuoteImportError`` (nothing saved) for
    any row error. ``fetched_date``: the day the catalog was fetched (default today): each
    quote's ``quote_date`` and ``fetched_date``."""
    try:
        read = read_catalog(text, fmt=fmt, max_rows=MAX_CATALOG_ROWS)
    except CatalogFileError as exc:
        raise QuoteImportError(
            [RowError(row=p.row, field=p.field, message=p.message) for p in exc.problems]
        ) from exc
    errors = [RowError(row=p.row, field=p.field, message=p.message) for p in read.problems]
    day = fetched_date or timezone.localdate()
    result = CatalogImportResult(
        fmt=fmt,
        provider=provider,
        file_name=filename,
        fetched_date=day,
        skipped=read.skipped.as_list(),
        unknown_accelerators=read.skipped.unknown_names(),
        rows=read.rows,
    )
    if not errors and not read.quotes:
        unknown = ", ".join(result.unknown_accelerators[:10]) or "none"
        errors.append(RowError(row=1, field="", message="no row of the file is a GPU of the "
                               f"catalog (accelerators the catalog lacks: {unknown})"))  # fmt: skip
    if errors:
        raise QuoteImportError(errors)
    gpus = {g.slug: g for g in Gpu.objects.filter(slug__in={q.gpu_slug for q in read.quotes})}
    keys = {import_key(fmt=fmt, quote=q): q for q in read.quotes if q.gpu_slug in gpus}
    for item in read.quotes:
        if item.gpu_slug not in gpus:  # a slug the names table knows, not loaded here
            result.skipped.append({
                "name": item.offer.accelerator, "reason": f"no GPU {item.gpu_slug!r} in the "
                "catalog (manage.py load_catalog loads it)", "rows": 1,
                "first_row": item.offer.row,
            })  # fmt: skip
    if not keys:
        message = "no row of the file is a GPU of the catalog (load it: manage.py load_catalog)"
        raise QuoteImportError([RowError(row=1, field="", message=message)])
    legacy = {legacy_key(fmt=fmt, quote=q) for q in keys.values()}
    team_ids = (
        set(Team.objects.filter(members=created_by).values_list("pk", flat=True))
        if created_by is not None
        else set()
    )
    existing = _importers_quotes(provider, [*keys, *legacy], team_ids)
    # Another team's public quote of a key stays as that team entered it (only the creating
    # team updates or retires a quote, apps.quotes.selectors.quote_change_refusal): its rows are
    # skipped and reported, and the importer's tables cost that quote as every team's do.
    if created_by is not None and not created_by.is_superuser:
        colleagues = {
            *Team.members.through.objects.filter(team_id__in=team_ids).values_list(
                "user_id", flat=True
            ),
            created_by.pk,
        }
        theirs = {
            k: q
            for k, q in existing.items()
            if q.confidential_to_id is None
            and q.created_by_id is not None
            and q.created_by_id not in colleagues
        }
    else:
        theirs = {}
    for key, held in theirs.items():
        del existing[key]
        offered = keys.get(key)
        if offered is not None:
            result.skipped.append({
                "name": offered.offer.accelerator, "reason": f"another team's public quote "
                f"(#{held.pk}) holds this instance; only that team updates it", "rows": 1,
                "first_row": offered.offer.row,
            })  # fmt: skip
            del keys[key]
    superseded = [q for k, q in existing.items() if k in legacy and k not in keys]
    to_create: list[Quote] = []
    to_update: list[Quote] = []
    to_refresh: list[Quote] = []
    now = timezone.now()
    for key, item in keys.items():
        row = item.offer.row
        gpu = gpus[item.gpu_slug]
        values: dict[str, Any] = {
            "hourly_price_per_gpu": item.hourly_price_per_gpu,
            "gpus_per_node": item.gpus_per_node,
            "source": _source(fmt=fmt, filename=filename, quote=item),
            "quote_date": day,
            "fetched_date": day,
        }
        quote = existing.get(key)
        if quote is None:
            quote = Quote(
                provider=provider, gpu=gpu, region=item.region, pricing_term=item.term,
                currency=CATALOG_CURRENCY, import_key=key, created_by=created_by, **values,
            )  # fmt: skip
            bucket = to_create
        else:
            quote.gpu = gpu  # the key names it: the same row, without a query to read it
            priced = any(getattr(quote, n) != values[n] for n in PRICED_FIELDS)
            refreshed = any(getattr(quote, n) != values[n] for n in REFRESHED_FIELDS)
            for name, value in values.items():
                setattr(quote, name, value)
            if priced:
                quote.version += 1
                bucket = to_update
            elif refreshed:
                bucket = to_refresh
            else:
                result.unchanged.append(quote)
                continue
            quote.updated_at = now
        try:
            # Field validators and choices of what the row set, and Quote.clean(); the database
            # enforces the constraints when the batch is written.
            quote.full_clean(
                exclude=_NOT_ROW_FIELDS, validate_unique=False, validate_constraints=False
            )
        except ValidationError as exc:
            for name, messages in exc.message_dict.items():
                errors.extend(RowError(row=row, field=name, message=m) for m in messages)
            continue
        bucket.append(quote)
    if errors:
        raise QuoteImportError(sorted(errors, key=lambda e: e.row))
    try:
        with transaction.atomic():
            if superseded:
                Quote.objects.filter(pk__in=[q.pk for q in superseded]).update(
                    retired=True, updated_at=now
                )
            Quote.objects.bulk_create(to_create, batch_size=IMPORT_BATCH_SIZE)
            _write_changes(to_update, to_refresh, day=day, now=now)
    except IntegrityError as exc:
        # A concurrent import of the same provider won the race for a key, or a database rule
        # the checks above let through: refused as a whole, in words, not a 500.
        message = f"a row breaks a database rule ({exc.__class__.__name__}: {exc})"
        raise QuoteImportError([RowError(row=1, field="", message=message[:300])]) from exc
    result.created, result.updated, result.refreshed = to_create, to_update, to_refresh
    result.retired = superseded
    if to_create or to_update or superseded:
        result.briefs_queued = candidate_tables_request_recompute(quotes_only=True)
    return result


def catalog_upload_text(upload: UploadedFile) -> str:
    """An uploaded catalog file as text, or a ``ValueError`` in words (page and API)."""
    limit = MAX_CATALOG_BYTES
    if upload.size is not None and upload.size > limit:
        raise ValueError(f"larger than {limit / 2**20:g} MB: split the file by region")
    try:
        return upload.read().decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ValueError("not UTF-8 text") from exc


def catalog_import_summary(result: CatalogImportResult) -> dict[str, Any]:
    """What an import did, as plain data: the API's 201 body and the page's summary."""
    groups = (
        ("created", result.created), ("updated", result.updated),
        ("refreshed", result.refreshed), ("unchanged", result.unchanged),
        ("retired", result.retired),
    )  # fmt: skip
    return {
        "format": result.fmt,
        "provider": result.provider.pk,
        "file_name": result.file_name,
        "fetched_date": result.fetched_date.isoformat(),
        "rows": result.rows,
        **{name: len(quotes) for name, quotes in groups},
        "quotes": [
            {
                "id": q.pk,
                "gpu": q.gpu.slug if q.gpu else "",
                "instance": _instance_of(q.import_key),
                "region": q.region,
                "pricing_term": q.pricing_term,
                "hourly_price_per_gpu": f"{q.hourly_price_per_gpu:.4f}",
                "gpus_per_node": q.gpus_per_node,
                "outcome": name,
            }
            for name, quotes in groups
            for q in quotes
        ],
        "skipped": result.skipped,
        "skipped_rows": sum(int(str(s["rows"])) for s in result.skipped),
        "unknown_accelerators": result.unknown_accelerators,
        "briefs_queued": len(result.briefs_queued),
    }


def _instance_of(key: str) -> str:
    """The instance type a catalog quote's key names ("" for a key of the one-per-GPU era)."""
    parts = key.split(":")
    return parts[1] if len(parts) == 5 else ""
