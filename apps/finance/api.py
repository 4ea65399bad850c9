"""GET /api/v1/briefs/<id>/rankings (JSON or CSV); GET/POST /api/v1/fx-rates/."""

from decimal import Decimal

from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.briefs.selectors import brief_get_for_user
from apps.core import bounds
from apps.core.api import StrictJsonTypes
from apps.core.api_examples import RANKINGS_EXAMPLES
from apps.core.currency import BASE_CURRENCY, FX_CURRENCIES
from apps.core.pagination import StandardPagination, paginated
from apps.core.parsers import JSONParser
from apps.core.permissions import role_permission
from apps.core.query import ChoiceParam, IntParam, KnownQueryParams
from apps.core.roles import FINANCE_EDITORS
from apps.quotes.models import Quote

from .exports import ranking_csv
from .models import (
    FX_RATE_DECIMAL_PLACES,
    FX_RATE_MAX_DIGITS,
    FX_SOURCE_MAX_LENGTH,
    CandidateRow,
    FxRate,
)
from .selectors import ranking_for_brief, ranking_json_for_brief
from .services import fx_rate_create

#: The row filters ``selectors._matches`` applies, each spelled exactly as listed.
FILTER_PARAMS = (
    ChoiceParam("basis", CandidateRow.Basis.values, "Estimated, calibrated or measured rows only"),
    ChoiceParam("pricing_term", Quote.PricingTerm.values, "Rows of this pricing term only"),
    ChoiceParam("meets_constraints", ("true", "false"), "Rows that meet the brief, or not"),
)


class RankingRowSerializer(serializers.Serializer):  # type: ignore[type-arg]
    rank = serializers.IntegerField(allow_null=True)
    candidate_kind = serializers.ChoiceField(choices=CandidateRow.Kind.values)
    provider = serializers.CharField(allow_null=True)
    gpu = serializers.CharField(allow_null=True)
    system = serializers.CharField(allow_null=True)
    region = serializers.CharField(allow_null=True, help_text="The quote's region.")
    api_model = serializers.CharField(allow_null=True)
    gpu_count = serializers.IntegerField(allow_null=True)
    replicas = serializers.IntegerField(allow_null=True)
    pricing_term = serializers.CharField(allow_null=True)
    quote_id = serializers.IntegerField(allow_null=True)
    api_route_id = serializers.IntegerField(allow_null=True)
    cost_lines = serializers.DictField(child=serializers.CharField())
    monthly_cost = serializers.CharField()
    accepted_outputs_per_month = serializers.CharField()
    effective_unit_cost = serializers.CharField(
        allow_null=True, help_text="In the ranking's unit (see unit, unit_scale)"
    )
    meets_constraints = serializers.BooleanField()
    why_not = serializers.ListField(child=serializers.CharField())
    basis = serializers.ChoiceField(choices=CandidateRow.Basis.values)
    p95_latency_ms = serializers.CharField(allow_null=True)
    memory_headroom_gb = serializers.CharField(allow_null=True)
    layout = serializers.CharField(
        allow_null=True,
        required=False,
        help_text='The parallel layout of the configuration ("TP8", "DEP16 (2 nodes)"); '
        "null for an API route",
    )
    paid_gpu_hours_per_month = serializers.CharField(
        allow_null=True,
        help_text="GPU-hours a month the candidate pays for, busy or idle (null: an API route)",
    )
    energy_kwh_per_month = serializers.CharField(
        allow_null=True,
        help_text="kWh a month at the facility meter (GPUs and their host share, x PUE) at the "
        "modelled utilisation; null for an API route",
    )
    energy_j_per_output = serializers.CharField(
        allow_null=True,
        help_text="Joules per accepted output (per success unit, not scaled); null for an API "
        "route or when nothing is accepted",
    )
    co2e_kg_per_month = serializers.CharField(
        allow_null=True,
        help_text="kg CO2e a month at finance's carbon intensity; null without one, and for an "
        "API route",
    )
    mix = serializers.ListField(
        child=serializers.DictField(),
        allow_null=True,
        help_text="MIX rows: the GPU mix, one entry per GPU type: gpu, gpu_count (per "
        "replica), replicas, quote_id, pricing_term, request_share, monthly_cost, and the "
        "buckets it serves (input_tokens, output_tokens, share_served: the share of that "
        "bucket's requests); null for other rows",
    )
    pools = serializers.ListField(
        child=serializers.DictField(),
        allow_null=True,
        help_text="DISAGG rows: the prefill and decode pools (role, quote_id, gpu, "
        "gpus_per_instance, instances, layout, requests_per_s_per_instance); null otherwise",
    )
    plan = serializers.DictField(
        allow_null=True,
        help_text="MIX and DISAGG rows: the whole plan (MIX: rate_rps, buckets, parts, "
        "best_single, saving_monthly and saving_share against the best single quote under the "
        "same request sizes; DISAGG: pools, ttft_ms (p95 estimate), ttft_mean_ms, transfer_ms, "
        "itl_ms); null for GPU and API rows",
    )
    quote_age_days = serializers.IntegerField(allow_null=True)
    quote_stale = serializers.BooleanField(allow_null=True)
    notes = serializers.ListField(child=serializers.CharField())


class NotCostedSerializer(serializers.Serializer):  # type: ignore[type-arg]
    quote_id = serializers.IntegerField(
        required=False, allow_null=True, help_text="The quote's id; null for an API route"
    )
    api_route_id = serializers.IntegerField(
        required=False, allow_null=True, help_text="The API route's id; null for a quote"
    )
    reason = serializers.CharField(
        help_text="Why, in words: a missing FX rate names the currency; a figure too large to "
        "cost or to store names it (issue 24: the rest of the table is computed all the same)"
    )


class SensitivityChangeSerializer(serializers.Serializer):  # type: ignore[type-arg]
    value = serializers.CharField(help_text="The assumption's value at which the winner changes")
    new_winner = serializers.CharField(
        allow_null=True, help_text="Who wins then (a leading key); null: none meets the brief"
    )
    winner_utilization = serializers.CharField(allow_null=True)


class SensitivityFindingSerializer(serializers.Serializer):  # type: ignore[type-arg]
    assumption = serializers.ChoiceField(
        choices=["UTILIZATION", "ACCEPTANCE_RATE", "RETRY_RATE", "LABOUR_HOURS", "PRICE", "FX_RATE"]
    )
    label = serializers.CharField()  # type: ignore[assignment]  # a field named label
    subject = serializers.CharField(
        allow_null=True, help_text="PRICE: the candidate's key; FX_RATE: the currency"
    )
    base = serializers.CharField(help_text="Today's value (1 for a multiplier)")
    range = serializers.ListField(child=serializers.CharField(), help_text="[low, high] searched")
    down = SensitivityChangeSerializer(allow_null=True)
    up = SensitivityChangeSerializer(allow_null=True)
    never = serializers.BooleanField()
    explanation = serializers.CharField()


class SensitivityTotalSerializer(serializers.Serializer):  # type: ignore[type-arg]
    months = serializers.IntegerField()
    running = serializers.CharField(help_text="Monthly all-in cost x months")
    committed_beyond = serializers.CharField(help_text="Still owed on a longer commitment")
    total = serializers.CharField()
    commitment_months = serializers.IntegerField()


class SensitivityLeadingSerializer(serializers.Serializer):  # type: ignore[type-arg]
    key = serializers.CharField(help_text='"quote:<id>" or "api_route:<id>"')
    quote_id = serializers.IntegerField(allow_null=True)
    api_route_id = serializers.IntegerField(allow_null=True)
    label = serializers.CharField()  # type: ignore[assignment]  # a field named label
    effective_unit_cost = serializers.CharField()
    monthly_cost = serializers.CharField()
    totals = SensitivityTotalSerializer(many=True)


class SensitivityBarSerializer(serializers.Serializer):  # type: ignore[type-arg]
    assumption = serializers.CharField()
    label = serializers.CharField()  # type: ignore[assignment]  # a field named label
    low_value = serializers.CharField()
    high_value = serializers.CharField()
    low_unit_cost = serializers.CharField(allow_null=True, help_text="null: fails the brief")
    high_unit_cost = serializers.CharField(allow_null=True)


class SensitivitySerializer(serializers.Serializer):  # type: ignore[type-arg]
    """What would change the winner among the leading rows ({} without a ranked row)."""

    currency = serializers.CharField(required=False)
    unit = serializers.CharField(required=False)
    unit_scale = serializers.IntegerField(required=False)
    unit_label = serializers.CharField(required=False)
    winner = serializers.CharField(required=False)
    leading = SensitivityLeadingSerializer(many=True, required=False)
    findings = SensitivityFindingSerializer(many=True, required=False)
    summary = serializers.ListField(child=serializers.CharField(), required=False)
    tornado = SensitivityBarSerializer(
        many=True, required=False, help_text="The winner's unit cost at each assumption -/+20 %"
    )
    left_out = serializers.ListField(child=serializers.DictField(), required=False)
    costings = serializers.IntegerField(required=False)


class RankingSerializer(serializers.Serializer):  # type: ignore[type-arg]
    brief = serializers.IntegerField()
    computed_at = serializers.DateTimeField(allow_null=True)
    stale = serializers.BooleanField()
    pending = serializers.BooleanField()
    currency = serializers.CharField(allow_null=True)
    unit = serializers.CharField(
        allow_null=True,
        help_text="The table's unit in words, e.g. 'per 1M accepted tokens': every "
        "effective_unit_cost of the rows (and of capacity_model) is in it",
    )
    success_unit = serializers.CharField(
        allow_null=True, help_text="The brief's success unit, e.g. TOKEN"
    )
    unit_scale = serializers.IntegerField(
        help_text="Outputs per unit: effective_unit_cost / unit_scale is the cost of one output"
    )
    no_ranking_reason = serializers.CharField(allow_null=True)
    capacity_model = serializers.DictField()
    sensitivity = SensitivitySerializer(
        help_text="What would change the winner among the leading rows: per assumption the "
        "value at which another candidate wins (findings), the winner's unit cost at each "
        "assumption -/+20 % (tornado), 12- and 36-month totals per leading candidate; {} "
        "without a ranked row"
    )
    total_rows = serializers.IntegerField(help_text="Rows that match the filters, before limit.")
    serving_plans_not_listed = serializers.ListField(
        child=serializers.DictField(),
        required=False,
        help_text="The serving plans (candidate_kind MIX or DISAGG) that have no row, each with "
        "why: not built (no latency target, nothing meets it) or no cheaper than a single "
        "quote's own row",
    )
    rows = RankingRowSerializer(many=True)
    not_costed = NotCostedSerializer(
        many=True, help_text="Quotes and API routes left out of the rows, each with why"
    )


# A table can hold a row per quote (thousands); the JSON sends the best rows unless asked.
DEFAULT_LIMIT = 100
MAX_LIMIT = 10_000
LIMIT = IntParam(
    "limit",
    1,
    MAX_LIMIT,
    f"Rows to send, best first (default {DEFAULT_LIMIT}; the CSV always holds every row).",
)
FORMAT = ChoiceParam("format", ("json", "csv"), "json (default) or csv")


class BriefRankingsApi(KnownQueryParams, APIView):
    """The brief's candidate table, ranked by effective unit cost. ``?format=csv`` for CSV."""

    query_params = (*FILTER_PARAMS, FORMAT, LIMIT)

    @extend_schema(
        parameters=[p.openapi() for p in (*FILTER_PARAMS, FORMAT, LIMIT)],
        responses={
            (200, "application/json"): RankingSerializer,
            (200, "text/csv"): OpenApiResponse(OpenApiTypes.STR, description="?format=csv"),
        },
        examples=RANKINGS_EXAMPLES,
    )
    def get(self, request: Request, pk: int) -> Response | HttpResponse:
        brief = brief_get_for_user(request.user, pk)
        filters: dict[str, str] = {
            p.name: value for p in FILTER_PARAMS if (value := p.parse(request)) is not None
        }
        limit = LIMIT.parse(request) or DEFAULT_LIMIT  # checked for both formats
        if FORMAT.parse(request) == "csv":
            # Every row, as the brief's team sees them.
            ranking = ranking_for_brief(brief, limit=None, team_id=None, **filters)
            response = HttpResponse(ranking_csv(ranking), content_type="text/csv; charset=utf-8")
            response["Content-Disposition"] = (
                f'attachment; filename="brief-{brief.pk}-rankings.csv"'
            )
            return response
        # Rendered once per table version (RankingSerializer documents the shape; tests pin it).
        body = ranking_json_for_brief(brief, limit=limit, **filters)
        return HttpResponse(body, content_type="application/json")


FinanceWrites = role_permission(*FINANCE_EDITORS)


class FxRateInputSerializer(StrictJsonTypes, serializers.Serializer):  # type: ignore[type-arg]
    currency = serializers.ChoiceField(
        choices=FX_CURRENCIES,
        help_text=f"A currency of the product's list other than the base {BASE_CURRENCY}",
    )
    rate = serializers.DecimalField(
        max_digits=FX_RATE_MAX_DIGITS,
        decimal_places=FX_RATE_DECIMAL_PLACES,
        help_text=f"Units of {BASE_CURRENCY} per one unit of the currency, from "
        f"{bounds.FX_RATE_MIN} to {bounds.FX_RATE_MAX} (400 outside)",
    )
    as_of = serializers.DateField(
        validators=[bounds.plausible_date],
        help_text="The day the rate is valid from: 2000-01-01 to tomorrow (400 outside)",
    )
    source = serializers.CharField(  # type: ignore[assignment]  # a field named like Field.source
        max_length=FX_SOURCE_MAX_LENGTH
    )

    def validate_rate(self, value: Decimal) -> Decimal:
        problem = bounds.fx_rate_problem(value)
        if problem:
            raise serializers.ValidationError(problem)
        return value


class FxRateOutputSerializer(serializers.ModelSerializer):  # type: ignore[type-arg]
    class Meta:
        model = FxRate
        fields = ["id", "currency", "rate", "as_of", "source", "created_at"]


class FxRateListCreateApi(KnownQueryParams, APIView):
    """Finance's FX-rate table, newest first per currency (the first of each applies).
    A new rate recomputes every brief's candidate table."""

    permission_classes = [FinanceWrites]
    pagination_class = StandardPagination
    parser_classes = [JSONParser]

    @extend_schema(responses={200: FxRateOutputSerializer(many=True)})
    def get(self, request: Request) -> Response:
        return paginated(self, request, FxRate.objects.all(), FxRateOutputSerializer)

    @extend_schema(
        request=FxRateInputSerializer,
        responses={
            201: FxRateOutputSerializer,
            400: OpenApiResponse(description="What is wrong, per field; nothing saved"),
        },
    )
    def post(self, request: Request) -> Response:
        payload = FxRateInputSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        row = fx_rate_create(created_by=request.user, **payload.validated_data)
        return Response(FxRateOutputSerializer(row).data, status=status.HTTP_201_CREATED)
