"""The plausible range of every money, rate, count, duration and date a person or a file enters.

One module, so that the model validators, the API serializers, the forms and the importers
(quote CSV, GPU catalogs) refuse the same values with a field-level 400, and docs/design.md
("Bounds") can list them. Each range is far wider than any real figure (the source of the real
figure is beside it) and narrow enough that the largest accepted input stays inside its stored
column. What a recompute multiplies together (a price x an FX cross rate x GPUs x hours) can
still pass what a candidate row stores: such a candidate is listed under ``not_costed`` with
its reason (apps.finance.candidates.row_overflow), never a failed table.

Money is in the figure's own currency. The weakest currency of apps.core.currency is the yen
(about 0.0067 USD, ECB reference rate 2025), so each ceiling is set to hold a real price written
in yen: about 150 times the dollar figure.
"""

from datetime import date, timedelta
from decimal import Decimal

from django.core.exceptions import ValidationError
from django.core.validators import BaseValidator, MaxValueValidator, MinValueValidator
from django.utils import timezone
from django.utils.deconstruct import deconstructible

# --- GPU capacity quotes (apps.quotes.models.Quote; column: decimal(14, 4)) ------------------
# A rented GPU-hour: from a thousandth of a unit (the cheapest marketplace GPU-hour is about
# USD 0.05, vast.ai 2025) to 100,000 (a GB200 GPU-hour lists at about USD 10, about JPY 1,500).
# A price that rounds to 0.0000 is refused: a free GPU-hour is a typo or a hostile file.
GPU_HOUR_PRICE_MIN = Decimal("0.001")
GPU_HOUR_PRICE_MAX = Decimal(100_000)
# Storage per TB-month: S3 Standard is USD 23, premium NVMe about USD 300 (JPY 45,000).
STORAGE_PER_TB_MONTH_MAX = Decimal(1_000_000)
# Egress per GB: AWS's first tier is USD 0.09 (JPY 14).
EGRESS_PER_GB_MAX = Decimal(10_000)
# A quote's monthly network or extras: a 10,000-GPU cluster's interconnect and support is a few
# million USD a month; 10^9 holds that in yen.
MONTHLY_FEE_MAX = Decimal(1_000_000_000)
# GPUs in one node or instance: an NVL576 rack (NVIDIA Rubin Ultra, GTC 2025) is the largest.
GPUS_PER_NODE_MAX = 576
MINIMUM_COMMITMENT_MONTHS_MAX = 120  # ten years: past any reserved term offered (3 years)

# --- Owned (bought) hardware (Quote, term OWNED) ---------------------------------------------
# Capex per GPU with its share of the server and network: a GB200 GPU is about USD 70,000
# (JPY 10.5 million); 10^8 holds it in yen with room.
CAPEX_PER_GPU_MIN = Decimal("0.01")
CAPEX_PER_GPU_MAX = Decimal(100_000_000)
DEPRECIATION_MONTHS_MAX = 180  # 15 years; servers are depreciated over 3-6
# kW per GPU with its host share: a B200 draws 1 kW, its server share under 2 kW.
KW_PER_GPU_MIN = Decimal("0.001")
KW_PER_GPU_MAX = Decimal(20)
# Power usage effectiveness: 1.0 (ideal) to 3.0 (the Uptime Institute survey's worst sites).
PUE_MIN = Decimal(1)
PUE_MAX = Decimal(3)
# Electricity per kWh: USD 0.05-0.40, JPY about 30.
ELECTRICITY_PER_KWH_MAX = Decimal(1_000)
# Colocation per kW of IT load a month: USD 150-300 (JPY about 45,000).
HOSTING_PER_KW_MONTH_MAX = Decimal(1_000_000)
# Hands-on hours a GPU takes a month cannot pass the 730 hours of the month.
OPS_HOURS_PER_GPU_MONTH_MAX = Decimal(730)

# --- Model-API routes (apps.quotes.models.ApiRoute, ApiRoutePrice; decimal(14, 4)) -----------
# Per million tokens: the dearest list price is USD 600 (OpenAI o1-pro output, 2025), JPY 90,000.
MTOK_PRICE_MAX = Decimal(1_000_000)
RATE_LIMIT_RPM_MAX = 100_000_000

# --- FX rates (apps.finance.models.FxRate; decimal(20, 10)): USD per one unit ----------------
# The currencies offered run from the yen (0.0067) to the pound (1.27); a rate 60 times below
# the weakest or 80 times above the strongest is a typo (an inverted rate, a missing point).
FX_RATE_MIN = Decimal("0.0001")
FX_RATE_MAX = Decimal(100)

# --- Finance assumptions (apps.finance.models.FinanceAssumptions) ----------------------------
# An hour of platform engineering, loaded: USD 100-250 (JPY 37,000): 100,000 of any currency.
LABOUR_RATE_PER_HOUR_MAX = Decimal(100_000)
# Hours a month one self-managed deployment takes: a month is 730 hours, so 10,000 is a team
# of more than 60 people on one deployment.
PLATFORM_HOURS_PER_DEPLOYMENT_MAX = Decimal(10_000)
# The platform team's hours a month for all deployments: 10^6 is over 6,000 people at 160 h.
PLATFORM_POOL_HOURS_MAX = Decimal(1_000_000)
# Self-managed GPU-hours a month: 10^9 is 1.4 million GPUs all month.
SELF_MANAGED_GPU_HOURS_MIN = Decimal("0.01")
SELF_MANAGED_GPU_HOURS_MAX = Decimal(1_000_000_000)
# Moderation per image or per minute of video: Amazon Rekognition lists USD 0.001 an image and
# USD 0.10 a minute of video.
MODERATION_COST_MAX = Decimal(10_000)

# --- Briefs (apps.briefs.models.WorkloadBrief) ----------------------------------------------
# Requests per second at the busiest time: Google Search answers about 100,000 a second; ten
# times that for one workload is a typo.
REQUESTS_PER_SECOND_MIN = Decimal("0.001")
REQUESTS_PER_SECOND_MAX = Decimal(1_000_000)
# A generated clip's length: the longest a video model makes is a minute (OpenAI Sora, 2024);
# an hour is past any.
CLIP_SECONDS_MIN = Decimal("0.01")
CLIP_SECONDS_MAX = Decimal(3_600)

# --- Dates ----------------------------------------------------------------------------------
# A price, a rate or a catalog fetch is dated from 2000 (before any GPU cloud) to tomorrow (a
# rate published in a time zone ahead of ours); a later date would never go stale and, on an
# FX rate, would beat every real rate as the newest.
EARLIEST_DATE = date(2000, 1, 1)
LATEST_DATE_AHEAD = timedelta(days=1)


def between(low: Decimal | int, high: Decimal | int) -> list[BaseValidator]:
    """The validators of a closed range (Django forms and DRF read their bounds from them)."""
    return [MinValueValidator(low), MaxValueValidator(high)]


def at_most(high: Decimal | int) -> list[BaseValidator]:
    """0 to ``high``."""
    return between(0, high)


def fx_rate_problem(rate: Decimal) -> str | None:
    """Why ``rate`` (USD per one unit of a currency) is not a plausible FX rate, or None."""
    if not rate > 0:
        return "A rate must be greater than 0."
    if not FX_RATE_MIN <= rate <= FX_RATE_MAX:
        return (
            f"A rate must be between {FX_RATE_MIN} and {FX_RATE_MAX} (units of USD per one "
            "unit of the currency: JPY 0.0067, GBP 1.27); is it inverted?"
        )
    return None


def latest_date() -> date:
    return timezone.localdate() + LATEST_DATE_AHEAD


def date_problem(value: date | None) -> str | None:
    """Why ``value`` is not a plausible date of a price, a rate or a fetch; None when it is."""
    if value is None:
        return None
    if value < EARLIEST_DATE:
        return f"must not be before {EARLIEST_DATE.isoformat()}"
    latest = latest_date()
    if value > latest:
        return f"must not be later than tomorrow ({latest.isoformat()})"
    return None


@deconstructible
class PlausibleDate:
    """A model and serializer validator: ``date_problem`` as a field error."""

    def __call__(self, value: date | None) -> None:
        problem = date_problem(value)
        if problem:
            raise ValidationError(problem, code="implausible_date")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, PlausibleDate)

    def __hash__(self) -> int:
        return hash(PlausibleDate)


plausible_date = PlausibleDate()
