"""GET /api/v1/briefs/<id>/rankings (JSON or CSV)."""

from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.briefs.selectors import brief_get_for_user
from apps.quotes.models import Quote

from .exports import ranking_csv
from .selectors import ROW_FILTERS, ranking_for_brief, ranking_json_for_brief

FILTER_VALUES = {
    "basis": {"ESTIMATED", "MEASURED"},
    "pricing_term": set(Quote.PricingTerm.values),
    "meets_constraints": {"TRUE", "FALSE"},
}


class RankingRowSerializer(serializers.Serializer):  # type: ignore[type-arg]
    rank = serializers.IntegerField(allow_null=True)
    candidate_kind = serializers.ChoiceField(choices=["GPU", "API_ROUTE"])
    provider = serializers.CharField(allow_null=True)
    gpu = serializers.CharField(allow_null=True)
    system = serializers.CharField(allow_null=True)
    api_model = serializers.CharField(allow_null=True)
    gpu_count = serializers.IntegerField(allow_null=True)
    replicas = serializers.IntegerField(allow_null=True)
    pricing_term = serializers.CharField(allow_null=True)
    quote_id = serializers.IntegerField(allow_null=True)
    api_route_id = serializers.IntegerField(allow_null=True)
    cost_lines = serializers.DictField(child=serializers.CharField())
    monthly_cost = serializers.CharField()
    accepted_outputs_per_month = serializers.CharField()
    effective_unit_cost = serializers.CharField(allow_null=True)
    meets_constraints = serializers.BooleanField()
    why_not = serializers.ListField(child=serializers.CharField())
    basis = serializers.ChoiceField(choices=["ESTIMATED", "MEASURED"])
    p95_latency_ms = serializers.CharField(allow_null=True)
    memory_headroom_gb = serializers.CharField(allow_null=True)
    quote_age_days = serializers.IntegerField(allow_null=True)
    quote_stale = serializers.BooleanField(allow_null=True)
    notes = serializers.ListField(child=serializers.CharField())


class RankingSerializer(serializers.Serializer):  # type: ignore[type-arg]
    brief = serializers.IntegerField()
    computed_at = serializers.DateTimeField(allow_null=True)
    stale = serializers.BooleanField()
    pending = serializers.BooleanField()
    currency = serializers.CharField(allow_null=True)
    unit = serializers.CharField(allow_null=True)
    no_ranking_reason = serializers.CharField(allow_null=True)
    capacity_model = serializers.DictField()
    total_rows = serializers.IntegerField(help_text="Rows that match the filters, before limit.")
    rows = RankingRowSerializer(many=True)


# A table can hold a row per quote (thousands); the JSON sends the best rows unless asked.
DEFAULT_LIMIT = 100
MAX_LIMIT = 10_000


def _limit(request: Request) -> int:
    text = request.query_params.get("limit")
    if text is None:
        return DEFAULT_LIMIT
    if not text.isdigit() or not 1 <= int(text) <= MAX_LIMIT:
        raise serializers.ValidationError({"limit": f"a whole number from 1 to {MAX_LIMIT}"})
    return int(text)


class BriefRankingsApi(APIView):
    """The brief's candidate table, ranked by effective unit cost. ``?format=csv`` for CSV."""

    @extend_schema(
        parameters=[
            OpenApiParameter("basis", str, enum=["ESTIMATED", "MEASURED"]),
            OpenApiParameter("pricing_term", str, enum=sorted(Quote.PricingTerm.values)),
            OpenApiParameter("meets_constraints", str, enum=["true", "false"]),
            OpenApiParameter("format", str, enum=["json", "csv"]),
            OpenApiParameter(
                "limit",
                {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT},
                description=f"Rows to send, best first (default {DEFAULT_LIMIT}; the CSV "
                "always holds every row).",
            ),
        ],
        responses={
            (200, "application/json"): RankingSerializer,
            (200, "text/csv"): OpenApiResponse(OpenApiTypes.STR, description="?format=csv"),
        },
    )
    def get(self, request: Request, pk: int) -> Response | HttpResponse:
        brief = brief_get_for_user(request.user, pk)
        filters = {k: request.query_params[k] for k in ROW_FILTERS if k in request.query_params}
        for name, value in filters.items():
            if value.upper() not in FILTER_VALUES[name]:
                allowed = ", ".join(
                    sorted(
                        v.lower() if name == "meets_constraints" else v for v in FILTER_VALUES[name]
                    )
                )
                raise serializers.ValidationError({name: f"must be one of {allowed}"})
        limit = _limit(request)  # validated for both formats; the CSV holds every row
        wanted = request.query_params.get("format", "json")
        if wanted not in ("json", "csv"):
            raise serializers.ValidationError({"format": "must be json or csv"})
        if wanted == "csv":
            ranking = ranking_for_brief(brief, **filters)
            response = HttpResponse(ranking_csv(ranking), content_type="text/csv; charset=utf-8")
            response["Content-Disposition"] = (
                f'attachment; filename="brief-{brief.pk}-rankings.csv"'
            )
            return response
        # Rendered once per table version (RankingSerializer documents the shape; tests pin it).
        body = ranking_json_for_brief(brief, limit=limit, **filters)
        return HttpResponse(body, content_type="application/json")
