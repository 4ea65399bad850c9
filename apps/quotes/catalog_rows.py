"""Published GPU catalogs -> one offer per GPU x region x term, without the database.

Two formats, read by header name (column order differs between clouds and versions):

- ``skypilot``: a SkyPilot catalog ``vms.csv`` (sky/catalog/data_fetchers/fetch_*.py write
  them; skypilot-org/skypilot-catalog publishes them): ``InstanceType, AcceleratorName,
  AcceleratorCount, vCPUs, MemoryGiB, GpuInfo, Price, SpotPrice, Region, AvailabilityZone``.
  ``Price`` and ``SpotPrice`` are the whole instance's hourly price in USD; a row per zone.
  GCP's file also holds accelerator-only rows (``InstanceType`` empty: the GPUs' own price)
  and host-VM rows (``a3-highgpu-8g`` with no accelerator: the VM's price); SkyPilot prices
  such a VM as the two added (sky/catalog/gcp_catalog.py), and so does this import, with the
  host VM types of ``GCP_HOST_VMS``.
- ``gpuhunt``: a gpuhunt catalog CSV (dstackai/gpuhunt ``_internal/storage.py``
  ``CATALOG_V2_FIELDS``: ``instance_name, location, price, cpu, memory, gpu_count, gpu_name,
  gpu_memory, spot, disk_size, gpu_vendor, flags, cpu_arch, provider_data``; a ``provider``
  column as ``CatalogItem`` has it is read when present). ``price`` is the instance's hourly
  USD price; ``spot`` says whether it is the spot price; ``location`` is the provider's region
  or zone and is kept as the quote's region.

Per-GPU price = instance price / accelerator count. One quote per instance type, region and
term: an instance is what a buyer rents (an 8-GPU instance is sold whole), so its GPU count is
the quote's GPUs per node and its own price the quote's, never the cheapest of another size.
A region's price is its cheapest zone's (SkyPilot prices a region so: aws_catalog.py
``get_hourly_cost``, "the cheapest cost among all zones for spot"; gcp_catalog.py
``get_accelerator_hourly_cost`` takes the minimum). A GCP accelerator-only row is its own
"instance" per accelerator and count (``A100 x 8`` on its cheapest host VM).

Rows without an accelerator (CPU VMs), with a fractional GPU (AWS g6f), without any price
(neither on-demand nor spot) or with an accelerator the GPU catalog lacks are not errors: they
are counted and listed (``Skipped``), and the rest imports. A value a row must have and does
not (a price that is not a number, a missing region) is a row error, and the caller saves
nothing. Every number a row holds is read in one place (``_Reader.number``).
"""

import contextlib
import csv
import io
import re
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation

from apps.core import bounds
from apps.engine.costing import PricingTerm

from .catalog_names import UNKNOWN_GPU, Resolution, memory_from_mib, resolve

SKYPILOT, GPUHUNT = "skypilot", "gpuhunt"
FORMATS = {SKYPILOT: "SkyPilot catalog (vms.csv)", GPUHUNT: "gpuhunt catalog (CSV)"}

SKYPILOT_REQUIRED = ("InstanceType", "AcceleratorName", "AcceleratorCount", "Price", "Region")
SKYPILOT_OPTIONAL = ("SpotPrice", "AvailabilityZone", "GpuInfo", "vCPUs", "MemoryGiB")
GPUHUNT_REQUIRED = ("instance_name", "location", "price", "gpu_count", "gpu_name", "spot")

#: Quote prices are stored to 4 decimal places (apps/quotes/models.py ``_money``).
PRICE_QUANTUM = Decimal("0.0001")
#: The most GPUs a quote's node may hold (Quote.gpus_per_node's validator).
MAX_GPUS_PER_NODE = bounds.GPUS_PER_NODE_MAX
#: A number's text in a catalog: a price, a count or a memory size needs under 20 characters;
#: a longer one (a 5,000-digit figure) is a hostile or broken file, refused before it is read.
MAX_NUMBER_CHARACTERS = 40
#: An instance's hourly price: at most a GPU-hour's ceiling (apps.core.bounds) for each GPU of
#: the largest node; a per-GPU price is then held to the GPU-hour range itself.
MAX_INSTANCE_PRICE = bounds.GPU_HOUR_PRICE_MAX * MAX_GPUS_PER_NODE
#: SkyPilot's GpuInfo ``SizeInMiB``: the largest GPU memory is 288 GB (B300, 274,658 MiB);
#: 10^8 MiB (about 100 TB) is past any part.
MAX_GPU_INFO_MIB = Decimal(100_000_000)
#: SkyPilot's GpuInfo memory: ``'SizeInMiB': 81920`` for an "80 GB" part (fetch_aws.py,
#: fetch_gcp.py ``_gpu_info_from_name``): the nominal GB is MiB / 1024.
GPU_INFO_MIB = re.compile(r"['\"]SizeInMiB['\"]\s*:\s*(\d+(?:\.\d+)?)")
#: The provider's own name for the GPU in SkyPilot's GpuInfo (RunPod: ``'Name': 'H100 PCIe'``).
GPU_INFO_NAME = re.compile(r"['\"]Name['\"]\s*:\s*['\"]([^'\"]{1,80})['\"]")
#: Why a row is skipped, as the import's summary lists it.
NO_PRICE = "no price: neither an on-demand nor a spot price"
FRACTIONAL_GPU = "a fractional GPU (a slice of one), not a GPU quote"

#: GCP host VM types per accelerator and count: sky/catalog/gcp_catalog.py
#: ``_ACC_INSTANCE_TYPE_DICTS`` (an A100 runs only on A2, an H100 only on A3, an L4 on G2). The
#: cheapest of them in the accelerator's zone is added to the accelerator's price.
GCP_HOST_VMS: dict[str, dict[int, tuple[str, ...]]] = {
    "A100": {1: ("a2-highgpu-1g",), 2: ("a2-highgpu-2g",), 4: ("a2-highgpu-4g",),
             8: ("a2-highgpu-8g",), 16: ("a2-megagpu-16g",)},
    "A100-80GB": {1: ("a2-ultragpu-1g",), 2: ("a2-ultragpu-2g",), 4: ("a2-ultragpu-4g",),
                  8: ("a2-ultragpu-8g",)},
    "L4": {1: ("g2-standard-4", "g2-standard-8", "g2-standard-12", "g2-standard-16",
               "g2-standard-32"), 2: ("g2-standard-24",), 4: ("g2-standard-48",),
           8: ("g2-standard-96",)},
    "H100": {1: ("a3-highgpu-1g",), 2: ("a3-highgpu-2g",), 4: ("a3-highgpu-4g",),
             8: ("a3-highgpu-8g",)},
    "H100-MEGA": {8: ("a3-megagpu-8g",)},
    "H200": {8: ("a3-ultragpu-8g",)},
    "B200": {8: ("a4-highgpu-8g",)},
}  # fmt: skip


@dataclass(frozen=True, kw_only=True)
class RowProblem:
    row: int
    field: str
    message: str


@dataclass(frozen=True, kw_only=True)
class Offer:
    """One row's offer for one term: ``price`` is the instance's (or, for a GCP accelerator
    row, the accelerators' plus their host VM's) hourly price."""

    row: int
    accelerator: str
    count: int
    memory_gb: tuple[Decimal, ...] | None  # the GB the source's figure may mean
    instance: str
    region: str
    zone: str
    term: str
    price: Decimal
    source_name: str = ""  # the source's own name for the GPU (GpuInfo Name)
    instance_key: str = ""  # what makes it one instance size: the instance type by default

    @property
    def size_key(self) -> str:
        return self.instance_key or self.instance

    @property
    def per_gpu(self) -> Decimal:
        return (self.price / self.count).quantize(PRICE_QUANTUM, rounding=ROUND_HALF_UP)


@dataclass(kw_only=True)
class Skipped:
    """Rows not imported: reason -> accelerator name -> the rows (lines of the file)."""

    by_reason: dict[str, dict[str, set[int]]] = field(default_factory=dict)

    def add(self, reason: str, name: str, row: int) -> None:
        self.by_reason.setdefault(reason, {}).setdefault(name, set()).add(row)

    def as_list(self) -> list[dict[str, object]]:
        return [
            {"name": name, "reason": reason, "rows": len(rows), "first_row": min(rows)}
            for reason, names in sorted(self.by_reason.items())
            for name, rows in sorted(names.items())
        ]

    def unknown_names(self) -> list[str]:
        return sorted(self.by_reason.get(UNKNOWN_GPU, {}))


@dataclass(frozen=True, kw_only=True)
class CatalogQuote:
    """One quote to import: one instance size of a GPU in a region on a term, at its cheapest
    zone."""

    gpu_slug: str
    instance: str  # the instance type (``gpu_8x_h100_sxm5``; GCP: ``A100 x 8``)
    region: str
    term: str
    hourly_price_per_gpu: Decimal
    gpus_per_node: int  # the instance's GPU count
    offer: Offer  # the offer the price came from (zone, row)


@dataclass(kw_only=True)
class CatalogRead:
    quotes: list[CatalogQuote]
    problems: list[RowProblem]
    skipped: Skipped
    rows: int
    providers: set[str] = field(default_factory=set)  # gpuhunt's provider column, if any


class CatalogFileError(Exception):
    def __init__(self, problems: list[RowProblem]) -> None:
        super().__init__(f"{len(problems)} problem(s)")
        self.problems = problems


def _decimal(text: str) -> Decimal:
    value = Decimal(text)
    if not value.is_finite():
        raise InvalidOperation
    return value


def _rows(text: str, required: Iterable[str]) -> Iterator[tuple[int, dict[str, str]]]:
    if "\x00" in text:
        raise CatalogFileError([RowProblem(row=1, field="", message="the file holds NUL bytes")])
    reader = csv.DictReader(io.StringIO(text))
    header = [name.strip() for name in reader.fieldnames or []]
    missing = [name for name in required if name not in header]
    if missing:
        raise CatalogFileError(
            [RowProblem(row=1, field=name, message="column missing from the header row")
             for name in missing]
        )  # fmt: skip
    reader.fieldnames = header
    try:
        for raw in reader:
            if None in raw:  # more cells than the header has names
                yield reader.line_num, {"": "extra cells"}
                continue
            yield reader.line_num, {k: (v or "").strip() for k, v in raw.items()}
    except csv.Error as exc:
        raise CatalogFileError(
            [RowProblem(row=reader.line_num + 1, field="", message=f"not valid CSV: {exc}")]
        ) from exc


def _count(text: str) -> Decimal:
    value = _decimal(text)
    if value <= 0:
        raise InvalidOperation
    return value


class _Reader:
    def __init__(self, *, max_rows: int) -> None:
        self.max_rows = max_rows
        self.offers: list[Offer] = []
        self.problems: list[RowProblem] = []
        self.skipped = Skipped()
        self.rows = 0
        self.providers: set[str] = set()

    def problem(self, row: int, name: str, message: str) -> None:
        self.problems.append(RowProblem(row=row, field=name, message=message))

    def number(self, row: int, name: str, text: str) -> Decimal | None:
        """The one place a row's numbers are read (prices, counts, memory): a finite decimal
        of at most MAX_NUMBER_CHARACTERS characters, or None with a row problem naming the
        column."""
        if len(text) > MAX_NUMBER_CHARACTERS:
            self.problem(row, name, f"not a plausible number: {len(text):,} characters long")
            return None
        try:
            return _decimal(text)
        except InvalidOperation:
            self.problem(row, name, f"not a number: {text!r}")
            return None

    def price(self, row: int, name: str, text: str, count: int | None) -> Decimal | None:
        """A price column: None when empty (the row may have the other term's price). The
        instance's price must be greater than 0 and at most MAX_INSTANCE_PRICE, and its price
        per GPU (over ``count``) in the GPU-hour range of apps.core.bounds."""
        if not text:
            return None
        value = self.number(row, name, text)
        if value is None:
            return None
        if value < 0 or (value == 0 and value.is_signed()):
            self.problem(row, name, f"negative: {text}")
            return None
        if not 0 < value <= MAX_INSTANCE_PRICE:
            self.problem(
                row, name, f"not a plausible hourly price: {text} (greater than 0 and at most "
                f"{MAX_INSTANCE_PRICE:,} an instance)",
            )  # fmt: skip
            return None
        if count is not None and self.per_gpu_problem(row, name, value, count):
            return None
        return value

    def per_gpu_problem(self, row: int, name: str, price: Decimal, count: int) -> bool:
        """A row problem (True) when ``price`` over ``count`` GPUs is outside the GPU-hour
        range: a price that rounds to 0.0000 is never imported as a free GPU."""
        per_gpu = price / count
        if bounds.GPU_HOUR_PRICE_MIN <= per_gpu <= bounds.GPU_HOUR_PRICE_MAX:
            return False
        self.problem(
            row, name, f"{per_gpu:.4g} a GPU-hour ({price} for {count} GPUs) is outside "
            f"{bounds.GPU_HOUR_PRICE_MIN} to {bounds.GPU_HOUR_PRICE_MAX:,}",
        )  # fmt: skip
        return True

    def gpu_info_memory(self, row: int, text: str) -> tuple[Decimal, ...] | None:
        """SkyPilot's GpuInfo memory (``SizeInMiB``) as the GB it may mean; a row problem for a
        figure past MAX_GPU_INFO_MIB."""
        match = GPU_INFO_MIB.search(text)
        if not match:
            return None
        mib = self.number(row, "GpuInfo", match.group(1))
        if mib is None:
            return None
        if mib > MAX_GPU_INFO_MIB:
            self.problem(row, "GpuInfo", f"SizeInMiB is not a plausible GPU memory: {mib:.4g}")
            return None
        return memory_from_mib(mib)

    def gpu_count(self, row: int, name: str, text: str, accelerator: str) -> int | None:
        try:
            value = _count(text)
        except InvalidOperation:
            self.problem(row, name, f"not a positive number: {text!r}")
            return None
        if value != value.to_integral_value():
            self.skipped.add(FRACTIONAL_GPU, accelerator, row)
            return None
        if value > MAX_GPUS_PER_NODE:
            self.problem(row, name, f"more than {MAX_GPUS_PER_NODE} GPUs in one instance: {text}")
            return None
        return int(value)

    def too_many(self, row: int) -> bool:
        self.rows += 1
        if self.rows > self.max_rows:
            self.problem(row, "", f"more than {self.max_rows:,} rows: split the file")
            return True
        return False


def _gpu_info_name(text: str) -> str:
    match = GPU_INFO_NAME.search(text)
    return match.group(1) if match else ""


def _read_skypilot(text: str, reader: _Reader) -> None:
    host_prices: dict[tuple[str, str, str], Decimal] = {}  # (type, zone, term) -> price
    # GCP accelerator-only rows, with their prices as read (None: empty or refused).
    attached: list[tuple[dict[str, str], int, int, dict[str, Decimal | None]]] = []
    for line, row in _rows(text, SKYPILOT_REQUIRED):
        if reader.too_many(line):
            break
        if "" in row:
            reader.problem(line, "", "more cells than the header row names")
            continue
        name, instance = row["AcceleratorName"], row["InstanceType"]
        zone = row.get("AvailabilityZone", "")
        if not name:
            # A VM without an accelerator: not a GPU quote, but maybe a GCP host VM.
            for term, column in ((PricingTerm.ON_DEMAND, "Price"), (PricingTerm.SPOT, "SpotPrice")):
                price_text = row.get(column, "")
                # A CPU VM's unreadable or implausible price decides no GPU quote: not an
                # error (a GPU row that needs the host VM says it is missing).
                if instance and price_text and len(price_text) <= MAX_NUMBER_CHARACTERS:
                    with contextlib.suppress(InvalidOperation):
                        host = _decimal(price_text)
                        if 0 < host <= MAX_INSTANCE_PRICE:
                            host_prices[(instance, zone, term)] = host
            continue
        if not row["Region"]:
            reader.problem(line, "Region", "empty: every offer needs its region")
            continue
        count = reader.gpu_count(line, "AcceleratorCount", row["AcceleratorCount"], name)
        price = reader.price(line, "Price", row["Price"], count)
        spot = reader.price(line, "SpotPrice", row.get("SpotPrice", ""), count)
        if count is None:
            continue
        if not row["Price"] and not row.get("SpotPrice"):
            reader.skipped.add(NO_PRICE, name, line)
            continue
        if price is None and spot is None:
            continue  # a price that is not a number: a row problem already
        if not instance:
            attached.append((row, line, count, {"Price": price, "SpotPrice": spot}))
            continue
        info = row.get("GpuInfo", "")
        memory, source_name = reader.gpu_info_memory(line, info), _gpu_info_name(info)
        for term, value in ((PricingTerm.ON_DEMAND, price), (PricingTerm.SPOT, spot)):
            if value is not None:
                reader.offers.append(
                    Offer(row=line, accelerator=name, count=count, memory_gb=memory,
                          instance=instance, region=row["Region"], zone=zone, term=term,
                          price=value, source_name=source_name)
                )  # fmt: skip
    for row, line, count, prices in attached:
        _attach_host(row, line, count, prices, host_prices, reader)


def _attach_host(
    row: dict[str, str],
    line: int,
    count: int,
    prices: dict[str, Decimal | None],
    host_prices: dict[tuple[str, str, str], Decimal],
    reader: _Reader,
) -> None:
    """A GCP accelerator-only row: its price plus the cheapest host VM of its zone."""
    name, zone = row["AcceleratorName"], row.get("AvailabilityZone", "")
    hosts = GCP_HOST_VMS.get(name.upper(), {}).get(count)
    if not hosts:
        if not resolve(name).known_family:
            reader.skipped.add(UNKNOWN_GPU, name, line)
        else:
            reader.skipped.add(
                "an accelerator-only row whose host VM type is not known (gcp_catalog.py)",
                name, line,
            )  # fmt: skip
        return
    info = row.get("GpuInfo", "")
    memory, source_name = reader.gpu_info_memory(line, info), _gpu_info_name(info)
    for term, column in ((PricingTerm.ON_DEMAND, "Price"), (PricingTerm.SPOT, "SpotPrice")):
        own = prices[column]
        if own is None:
            continue  # empty, or refused as a row problem already
        options = [
            (host_prices[(h, zone, term)], h) for h in hosts if (h, zone, term) in host_prices
        ]
        if not options:
            reader.skipped.add(
                f"an accelerator-only row without its host VM's {column} in the file",
                name, line,
            )  # fmt: skip
            continue
        host_price, host = min(options)
        price = own + host_price
        if reader.per_gpu_problem(line, column, price, count):
            continue
        reader.offers.append(
            Offer(row=line, accelerator=name, count=count, memory_gb=memory, instance=host,
                  region=row["Region"], zone=zone, term=term,
                  price=price, source_name=source_name,
                  instance_key=f"{name} x {count}")
        )  # fmt: skip


def _read_gpuhunt(text: str, reader: _Reader) -> None:
    for line, row in _rows(text, GPUHUNT_REQUIRED):
        if reader.too_many(line):
            break
        if "" in row:
            reader.problem(line, "", "more cells than the header row names")
            continue
        if row.get("provider"):
            reader.providers.add(row["provider"])
        name, count_text = row["gpu_name"], row["gpu_count"]
        if not name or count_text in ("", "0"):
            continue  # a CPU-only instance
        spot_text = row["spot"].lower()
        if spot_text not in ("true", "false"):
            reader.problem(line, "spot", f"not True or False: {row['spot']!r}")
        if not row["location"]:
            reader.problem(line, "location", "empty: every offer needs its location")
        if not row["instance_name"]:
            reader.problem(line, "instance_name", "empty")
        count = reader.gpu_count(line, "gpu_count", count_text, name)
        price = reader.price(line, "price", row["price"], count)
        memory: tuple[Decimal, ...] | None = None
        if row.get("gpu_memory"):
            found = reader.number(line, "gpu_memory", row["gpu_memory"])
            memory = (found,) if found is not None else None  # gpuhunt: GB per GPU
        if count is None or spot_text not in ("true", "false") or not row["location"]:
            continue
        if not row["price"]:
            reader.skipped.add(NO_PRICE, name, line)
            continue
        if price is None:
            continue
        term = PricingTerm.SPOT if spot_text == "true" else PricingTerm.ON_DEMAND
        reader.offers.append(
            Offer(row=line, accelerator=name, count=count, memory_gb=memory,
                  instance=row["instance_name"], region=row["location"], zone="", term=term,
                  price=price)
        )  # fmt: skip
    if len(reader.providers) > 1:
        names = ", ".join(sorted(reader.providers))
        reader.problem(1, "provider", f"the file mixes gpuhunt providers ({names}): import "
                       "one provider's rows at a time")  # fmt: skip


def read_catalog(text: str, *, fmt: str, max_rows: int) -> CatalogRead:
    """Read a whole catalog file. Raises ``CatalogFileError`` for a file that cannot be read
    (header, CSV syntax); row problems are returned for the caller to refuse the file."""
    reader = _Reader(max_rows=max_rows)
    if fmt == SKYPILOT:
        _read_skypilot(text, reader)
    else:
        _read_gpuhunt(text, reader)
    return CatalogRead(
        quotes=_cheapest(reader.offers, reader.skipped), problems=reader.problems,
        skipped=reader.skipped, rows=reader.rows, providers=reader.providers,
    )  # fmt: skip


def _cheapest(offers: list[Offer], skipped: Skipped) -> list[CatalogQuote]:
    """One quote per (GPU, instance type, region, term): the instance's cheapest zone (ties:
    the earliest row), its GPU count as the quote's GPUs per node."""
    resolved: dict[tuple[str, tuple[Decimal, ...] | None, str, str], Resolution] = {}
    groups: dict[tuple[str, str, str, str], list[Offer]] = defaultdict(list)
    for offer in offers:
        key = (offer.accelerator, offer.memory_gb, offer.instance, offer.source_name)
        found = resolved.get(key)
        if found is None:
            found = resolve(
                offer.accelerator, memory_gb=offer.memory_gb, instance=offer.instance,
                source_name=offer.source_name,
            )  # fmt: skip
            resolved[key] = found
        if found.slug is None:
            skipped.add(found.reason, offer.accelerator, offer.row)
            continue
        groups[(found.slug, offer.size_key, offer.region, offer.term)].append(offer)
    quotes = []
    for (slug, size, region, term), group in sorted(groups.items()):
        best = min(group, key=lambda o: (o.per_gpu, o.row))
        quotes.append(
            CatalogQuote(gpu_slug=slug, instance=size, region=region, term=term,
                         hourly_price_per_gpu=best.per_gpu, gpus_per_node=best.count,
                         offer=best)
        )  # fmt: skip
    return quotes
