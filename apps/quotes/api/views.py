"""/api/v1/providers/, /api/v1/quotes/, /api/v1/api-routes/: create, list, update, retire."""

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiResponse, extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.exceptions import PermissionDenied
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.core.pagination import StandardPagination, paginated
from apps.core.parsers import JSONParser
from apps.core.permissions import role_permission
from apps.core.query import ChoiceParam, KnownQueryParams, TextParam
from apps.core.roles import QUOTE_EDITORS
from apps.core.users import signed_in
from apps.quotes import services
from apps.quotes.csv_rows import MAX_CSV_BYTES, QuoteRowParser
from apps.quotes.models import ApiRoute, Provider, Quote
from apps.quotes.selectors import (
    api_route_list,
    provider_by_id_or_name,
    provider_list,
    quote_change_refusal,
    quote_get_for_user,
    quote_list_for_user,
)

from .serializers import (
    ApiRouteInputSerializer,
    ApiRouteOutputSerializer,
    ProviderSerializer,
    QuoteInputSerializer,
    QuoteOutputSerializer,
)

ProcurementWrites = role_permission(*QUOTE_EDITORS)


def quote_for_change(request: Request, pk: int) -> Quote:
    """The quote ``pk`` if the user may edit or retire it: 404 when it is invisible to them
    (another team's confidential quote), 403 in words when another team owns it."""
    quote = quote_get_for_user(request.user, pk)
    refusal = quote_change_refusal(request.user, quote)
    if refusal is not None:
        raise PermissionDenied(refusal)
    return quote


#: ``?provider=`` by id or by name (any case): that provider's only.
PROVIDER = TextParam(
    "provider", "That provider's only: its id, or its name in any case; empty means any"
)


def _provider(request: Request) -> Provider | bool:
    """The provider ``?provider=`` names; True without the filter (or empty); False when it
    names no provider (the list is then empty, as a filter that matches nothing)."""
    text = PROVIDER.parse(request)
    if not text:
        return True
    return provider_by_id_or_name(text) or False


#: ``?retired=true`` lists retired ones too (decision records may cite them).
RETIRED = ChoiceParam(
    "retired", ("true", "false"), "true: retired ones too; false (default): current ones only"
)


class ProviderListCreateApi(KnownQueryParams, APIView):
    permission_classes = [ProcurementWrites]
    pagination_class = StandardPagination
    parser_classes = [JSONParser]

    @extend_schema(responses={200: ProviderSerializer(many=True)})
    def get(self, request: Request) -> Response:
        return paginated(self, request, provider_list(), ProviderSerializer)

    @extend_schema(request=ProviderSerializer, responses={201: ProviderSerializer})
    def post(self, request: Request) -> Response:
        payload = ProviderSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        provider = services.provider_create(**payload.validated_data)
        return Response(ProviderSerializer(provider).data, status=status.HTTP_201_CREATED)


class ProviderDetailApi(APIView):
    permission_classes = [ProcurementWrites]
    parser_classes = [JSONParser]

    @extend_schema(responses={200: ProviderSerializer})
    def get(self, request: Request, pk: int) -> Response:
        return Response(ProviderSerializer(get_object_or_404(Provider, pk=pk)).data)

    @extend_schema(request=ProviderSerializer, responses={200: ProviderSerializer})
    def patch(self, request: Request, pk: int) -> Response:
        provider = get_object_or_404(Provider, pk=pk)
        payload = ProviderSerializer(provider, data=request.data, partial=True)
        payload.is_valid(raise_exception=True)
        provider = services.provider_update(provider=provider, **payload.validated_data)
        return Response(ProviderSerializer(provider).data)


class QuoteListCreateApi(KnownQueryParams, APIView):
    permission_classes = [ProcurementWrites]
    pagination_class = StandardPagination
    parser_classes = [JSONParser]
    query_params = (RETIRED, PROVIDER)

    @extend_schema(
        parameters=[p.openapi() for p in query_params],
        responses={200: QuoteOutputSerializer(many=True)},
    )
    def get(self, request: Request) -> Response:
        include_retired = RETIRED.parse(request) == "true"
        provider = _provider(request)
        qs = quote_list_for_user(
            request.user,
            include_retired=include_retired,
            provider=provider if isinstance(provider, Provider) else None,
        )
        if provider is False:
            qs = qs.none()
        return paginated(self, request, qs, QuoteOutputSerializer)

    @extend_schema(request=QuoteInputSerializer, responses={201: QuoteOutputSerializer})
    def post(self, request: Request) -> Response:
        payload = QuoteInputSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        quote = services.quote_create(created_by=signed_in(request.user), **payload.validated_data)
        return Response(QuoteOutputSerializer(quote).data, status=status.HTTP_201_CREATED)


class QuoteDetailApi(APIView):
    permission_classes = [ProcurementWrites]
    parser_classes = [JSONParser]

    @extend_schema(responses={200: QuoteOutputSerializer})
    def get(self, request: Request, pk: int) -> Response:
        return Response(QuoteOutputSerializer(quote_get_for_user(request.user, pk)).data)

    @extend_schema(request=QuoteInputSerializer, responses={200: QuoteOutputSerializer})
    def patch(self, request: Request, pk: int) -> Response:
        quote = quote_for_change(request, pk)
        payload = QuoteInputSerializer(quote, data=request.data, partial=True)
        payload.is_valid(raise_exception=True)
        quote = services.quote_update(
            quote=quote, user=signed_in(request.user), **payload.validated_data
        )
        return Response(QuoteOutputSerializer(quote).data)


class QuoteRetireApi(APIView):
    permission_classes = [ProcurementWrites]
    parser_classes = [JSONParser]

    @extend_schema(request=None, responses={200: QuoteOutputSerializer})
    def post(self, request: Request, pk: int) -> Response:
        quote = services.quote_retire(quote=quote_for_change(request, pk))
        return Response(QuoteOutputSerializer(quote).data)


class QuoteImportApi(APIView):
    """CSV of quotes, one per row, validated as a whole: any bad row and nothing is saved."""

    permission_classes = [ProcurementWrites]
    parser_classes = [MultiPartParser, FormParser, JSONParser]

    @extend_schema(
        request={
            "multipart/form-data": inline_serializer(
                "QuoteImport", {"file": serializers.FileField()}
            )
        },
        responses={
            201: QuoteOutputSerializer(many=True),
            400: OpenApiResponse(description="Row numbers and reasons; nothing saved"),
        },
    )
    def post(self, request: Request) -> Response:
        upload = request.FILES.get("file")
        if upload is None:
            raise serializers.ValidationError({"file": "attach the CSV as 'file'"})
        if upload.size > MAX_CSV_BYTES:
            raise serializers.ValidationError({"file": "larger than 2 MB"})
        try:
            text = upload.read().decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise serializers.ValidationError({"file": "not UTF-8 text"}) from exc
        try:
            quotes = services.quotes_import_csv(
                text=text, parse_row=QuoteRowParser(), created_by=signed_in(request.user)
            )
        except services.QuoteImportError as exc:
            first = exc.errors[0]
            return Response(
                {
                    "detail": f"row {first.row}: {first.field}: {first.message}"
                    f" ({len(exc.errors)} error(s); nothing was saved)",
                    "errors": [
                        {"row": e.row, "field": e.field, "message": e.message} for e in exc.errors
                    ],
                },
                status=status.HTTP_400_BAD_REQUEST,
            )
        return Response(QuoteOutputSerializer(quotes, many=True).data, status=201)


class ApiRouteListCreateApi(KnownQueryParams, APIView):
    permission_classes = [ProcurementWrites]
    pagination_class = StandardPagination
    parser_classes = [JSONParser]
    query_params = (RETIRED, PROVIDER)

    @extend_schema(
        parameters=[p.openapi() for p in query_params],
        responses={200: ApiRouteOutputSerializer(many=True)},
    )
    def get(self, request: Request) -> Response:
        include_retired = RETIRED.parse(request) == "true"
        provider = _provider(request)
        qs = api_route_list(
            include_retired=include_retired,
            provider=provider if isinstance(provider, Provider) else None,
        )
        if provider is False:
            qs = qs.none()
        return paginated(self, request, qs, ApiRouteOutputSerializer)

    @extend_schema(request=ApiRouteInputSerializer, responses={201: ApiRouteOutputSerializer})
    def post(self, request: Request) -> Response:
        payload = ApiRouteInputSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        route = services.api_route_create(**payload.validated_data)
        return Response(ApiRouteOutputSerializer(route).data, status=status.HTTP_201_CREATED)


class ApiRouteDetailApi(APIView):
    permission_classes = [ProcurementWrites]
    parser_classes = [JSONParser]

    @extend_schema(responses={200: ApiRouteOutputSerializer})
    def get(self, request: Request, pk: int) -> Response:
        return Response(ApiRouteOutputSerializer(get_object_or_404(ApiRoute, pk=pk)).data)

    @extend_schema(request=ApiRouteInputSerializer, responses={200: ApiRouteOutputSerializer})
    def patch(self, request: Request, pk: int) -> Response:
        route = get_object_or_404(ApiRoute, pk=pk)
        payload = ApiRouteInputSerializer(route, data=request.data, partial=True)
        payload.is_valid(raise_exception=True)
        route = services.api_route_update(route=route, **payload.validated_data)
        return Response(ApiRouteOutputSerializer(route).data)


class ApiRouteRetireApi(APIView):
    permission_classes = [ProcurementWrites]
    parser_classes = [JSONParser]

    @extend_schema(request=None, responses={200: ApiRouteOutputSerializer})
    def post(self, request: Request, pk: int) -> Response:
        route = services.api_route_retire(route=get_object_or_404(ApiRoute, pk=pk))
        return Response(ApiRouteOutputSerializer(route).data)
