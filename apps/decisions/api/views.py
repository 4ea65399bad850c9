"""/api/v1/decision-records/ and /api/v1/checklist/quotes/<id>/: open, edit, review, approve,
reject, supersede, verify and export decision records; answer the procurement checklist.

The services are the only writers. A refused transition (the record is not in the state the
action needs) answers 409; a role the user does not hold, 403; bad input, 400 by field."""

from typing import Any

from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.http import FileResponse, HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import APIException, PermissionDenied
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.briefs.models import WorkloadBrief
from apps.briefs.selectors import brief_get_for_user
from apps.core.files import PRIVATE_FILE_CONTENT_TYPE, private_file_response
from apps.core.models import Team
from apps.core.pagination import StandardPagination, paginated
from apps.core.parsers import JSONParser
from apps.core.permissions import role_permission
from apps.core.query import MAX_ID, ChoiceParam, IntParam, KnownQueryParams, TextParam
from apps.core.roles import DECISION_AUTHORS, QUOTE_EDITORS
from apps.decisions import services
from apps.decisions.exports import decision_record_csv
from apps.decisions.frozen import snapshot_of
from apps.decisions.models import DecisionRecord
from apps.decisions.pdf_store import decision_record_pdf_response
from apps.decisions.selectors import (
    EVIDENCE_API_URL,
    checklist_answer_with_file,
    checklist_for_quote,
    checklist_team_for_user,
    decision_record_get_for_user,
    decision_record_list_for_user,
    record_verify,
)
from apps.quotes.models import ApiRoute, Quote
from apps.quotes.selectors import quote_get_for_user, quote_list_for_user

from .serializers import (
    ApproveSerializer,
    ChecklistAnswerInputSerializer,
    ChecklistSerializer,
    DecisionRecordCreateSerializer,
    DecisionRecordDetailSerializer,
    DecisionRecordEditSerializer,
    DecisionRecordOutputSerializer,
    RejectSerializer,
    SubmitSerializer,
    VerifySerializer,
)

AuthorsWrite = role_permission(*DECISION_AUTHORS)
ProcurementWrites = role_permission(*QUOTE_EDITORS)


class Conflict(APIException):
    status_code = status.HTTP_409_CONFLICT
    default_detail = "The record is not in a state that allows this."
    default_code = "conflict"


def _saved(call: Any, **kwargs: Any) -> Any:
    """Run a service: TransitionRefused → 409. Other validation errors become a 400 by field
    in apps.core.api.exception_handler; PermissionDenied and Http404 pass through (403, 404)."""
    try:
        return call(**kwargs)
    except services.TransitionRefused as exc:
        raise Conflict(" ".join(exc.messages)) from exc


def _visible_quote(user: Any, pk: int, *, brief: WorkloadBrief, field: str) -> Quote:
    """A quote the user may see and the brief's team may be costed against (one message
    whether it does not exist or is confidential to someone else)."""
    quote = quote_list_for_user(user, include_retired=True).filter(pk=pk).first()
    if quote is None or quote.confidential_to_id not in (None, brief.team_id):
        raise serializers.ValidationError({field: [f"no such quote #{pk}"]})
    return quote


def _route(pk: int, *, field: str) -> ApiRoute:
    route = ApiRoute.objects.select_related("provider").filter(pk=pk).first()
    if route is None:
        raise serializers.ValidationError({field: [f"no such API route #{pk}"]})
    return route


def _alternatives(
    user: Any, items: list[dict[str, Any]], *, brief: WorkloadBrief
) -> list[dict[str, Any]]:
    for item in items:
        if item["quote_id"] is not None:
            _visible_quote(user, item["quote_id"], brief=brief, field="alternatives")
        else:
            _route(item["api_route_id"], field="alternatives")
    unique = {(a["quote_id"], a["api_route_id"]): a for a in items}
    return list(unique.values())


def _detail(record: Any) -> dict[str, Any]:
    return DecisionRecordDetailSerializer(record).data


#: Filters of the record list.
STATUS = ChoiceParam("status", DecisionRecord.Status.values, "Records in this status")
BRIEF = IntParam("brief", 1, MAX_ID, "Records of this brief")


class DecisionRecordListCreateApi(KnownQueryParams, APIView):
    permission_classes = [AuthorsWrite]
    pagination_class = StandardPagination
    parser_classes = [JSONParser]
    query_params = (STATUS, BRIEF)

    @extend_schema(
        parameters=[STATUS.openapi(), BRIEF.openapi()],
        responses={200: DecisionRecordOutputSerializer(many=True)},
    )
    def get(self, request: Request) -> Response:
        qs = decision_record_list_for_user(request.user)
        if (wanted := STATUS.parse(request)) is not None:
            qs = qs.filter(status=wanted)
        if (brief_id := BRIEF.parse(request)) is not None:
            qs = qs.filter(brief_id=brief_id)
        return paginated(self, request, qs, DecisionRecordOutputSerializer)

    @extend_schema(
        request=DecisionRecordCreateSerializer, responses={201: DecisionRecordDetailSerializer}
    )
    def post(self, request: Request) -> Response:
        payload = DecisionRecordCreateSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        data = dict(payload.validated_data)
        brief = brief_get_for_user(request.user, data.pop("brief"))
        quote_id, route_id = data.pop("chosen_quote", None), data.pop("chosen_api_route", None)
        if quote_id is not None:
            data["chosen_quote"] = _visible_quote(
                request.user, quote_id, brief=brief, field="chosen_quote"
            )
        elif route_id is not None:
            data["chosen_api_route"] = _route(route_id, field="chosen_api_route")
        if "alternatives" in data:
            data["alternatives"] = _alternatives(request.user, data["alternatives"], brief=brief)
        record = _saved(
            services.decision_record_create, brief=brief, created_by=request.user, **data
        )
        return Response(_detail(record), status=status.HTTP_201_CREATED)


class DecisionRecordDetailApi(APIView):
    permission_classes = [AuthorsWrite]
    parser_classes = [JSONParser]

    @extend_schema(responses={200: DecisionRecordDetailSerializer})
    def get(self, request: Request, pk: int) -> Response:
        return Response(_detail(decision_record_get_for_user(request.user, pk)))

    @extend_schema(
        request=DecisionRecordEditSerializer,
        responses={
            200: DecisionRecordDetailSerializer,
            409: OpenApiResponse(description="Only a DRAFT can be edited"),
        },
    )
    def patch(self, request: Request, pk: int) -> Response:
        record = decision_record_get_for_user(request.user, pk)
        payload = DecisionRecordEditSerializer(data=request.data, partial=True)
        payload.is_valid(raise_exception=True)
        fields = dict(payload.validated_data)
        if "alternatives" in fields:
            fields["alternatives"] = _alternatives(
                request.user, fields["alternatives"], brief=record.brief
            )
        record = _saved(services.decision_record_update, record=record, user=request.user, **fields)
        return Response(_detail(record))


class DecisionRecordSubmitApi(APIView):
    permission_classes = [AuthorsWrite]
    parser_classes = [JSONParser]

    @extend_schema(request=SubmitSerializer, responses={200: DecisionRecordDetailSerializer})
    def post(self, request: Request, pk: int) -> Response:
        record = decision_record_get_for_user(request.user, pk)
        payload = SubmitSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        record = _saved(
            services.decision_record_submit,
            record=record,
            user=request.user,
            role=payload.validated_data.get("role"),
        )
        return Response(_detail(record))


class DecisionRecordApproveApi(APIView):
    permission_classes = [AuthorsWrite]
    parser_classes = [JSONParser]

    @extend_schema(request=ApproveSerializer, responses={200: DecisionRecordDetailSerializer})
    def post(self, request: Request, pk: int) -> Response:
        record = decision_record_get_for_user(request.user, pk)
        payload = ApproveSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        record = _saved(
            services.decision_record_approve,
            record=record,
            user=request.user,
            role=payload.validated_data["role"],
            comment=payload.validated_data["comment"],
            acknowledge_warnings=payload.validated_data["acknowledge_warnings"],
        )
        return Response(_detail(record))


class DecisionRecordRejectApi(APIView):
    permission_classes = [AuthorsWrite]
    parser_classes = [JSONParser]

    @extend_schema(request=RejectSerializer, responses={200: DecisionRecordDetailSerializer})
    def post(self, request: Request, pk: int) -> Response:
        record = decision_record_get_for_user(request.user, pk)
        payload = RejectSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        record = _saved(
            services.decision_record_reject,
            record=record,
            user=request.user,
            role=payload.validated_data["role"],
            reason=payload.validated_data["reason"],
        )
        return Response(_detail(record))


class DecisionRecordSupersedeApi(APIView):
    permission_classes = [AuthorsWrite]
    parser_classes = [JSONParser]

    @extend_schema(request=None, responses={201: DecisionRecordDetailSerializer})
    def post(self, request: Request, pk: int) -> Response:
        record = decision_record_get_for_user(request.user, pk)
        new = _saved(services.decision_record_supersede, record=record, user=request.user)
        return Response(_detail(new), status=status.HTTP_201_CREATED)


class DecisionRecordRefreshApi(APIView):
    permission_classes = [AuthorsWrite]
    parser_classes = [JSONParser]

    @extend_schema(request=None, responses={200: DecisionRecordDetailSerializer})
    def post(self, request: Request, pk: int) -> Response:
        record = decision_record_get_for_user(request.user, pk)
        record = _saved(services.decision_record_refresh, record=record, user=request.user)
        return Response(_detail(record))


class DecisionRecordVerifyApi(APIView):
    """Recompute the content hash of the stored snapshot and compare it with the stored hash."""

    @extend_schema(responses={200: VerifySerializer})
    def get(self, request: Request, pk: int) -> Response:
        record = decision_record_get_for_user(request.user, pk)
        return Response(VerifySerializer(record_verify(record)).data)


class DecisionRecordCsvApi(APIView):
    @extend_schema(responses={(200, "text/csv"): OpenApiResponse(description="CSV")})
    def get(self, request: Request, pk: int) -> HttpResponse:
        record = decision_record_get_for_user(request.user, pk)
        response = HttpResponse(
            decision_record_csv(snapshot_of(record)), content_type="text/csv; charset=utf-8"
        )
        response["Content-Disposition"] = f'attachment; filename="decision-{record.pk}.csv"'
        return response


class DecisionRecordPdfApi(APIView):
    @extend_schema(responses={(200, "application/pdf"): OpenApiResponse(description="PDF")})
    def get(self, request: Request, pk: int) -> HttpResponse:
        record = decision_record_get_for_user(request.user, pk)
        return decision_record_pdf_response(record)


def _checklist_team(request: Request) -> Team:
    """The team whose answers the request reads and writes (``?team=<slug>``, else the
    user's first team): checklist answers and evidence are per team."""
    try:
        return checklist_team_for_user(request.user, TEAM_QUERY.parse(request) or "")
    except DjangoPermissionDenied as exc:  # DRF would answer its own words, not these
        raise PermissionDenied(str(exc)) from exc


def _checklist(quote: Quote, team: Team) -> dict[str, Any]:
    return checklist_for_quote(quote, team=team, evidence_url_name=EVIDENCE_API_URL)


TEAM_QUERY = TextParam(
    "team",
    "The slug of the team whose answers to read or write (one you belong to); default: your "
    "first team by name. Each team answers a quote for itself.",
)
TEAM_PARAM = TEAM_QUERY.openapi()


class QuoteChecklistApi(APIView):
    """Every checklist question for a quote, with the team's answer; PUT or POST answers one
    (the team's own answer: another team's answers are neither shown nor changed)."""

    permission_classes = [ProcurementWrites]
    parser_classes = [JSONParser]

    @extend_schema(parameters=[TEAM_PARAM], responses={200: ChecklistSerializer})
    def get(self, request: Request, quote_id: int) -> Response:
        quote = quote_get_for_user(request.user, quote_id)
        return Response(ChecklistSerializer(_checklist(quote, _checklist_team(request))).data)

    @extend_schema(
        parameters=[TEAM_PARAM],
        request=ChecklistAnswerInputSerializer,
        responses={200: ChecklistSerializer},
    )
    def put(self, request: Request, quote_id: int) -> Response:
        quote = quote_get_for_user(request.user, quote_id)
        team = _checklist_team(request)
        payload = ChecklistAnswerInputSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        _saved(
            services.checklist_answer_set,
            quote=quote,
            user=request.user,
            team=team,
            **payload.validated_data,
        )
        return Response(ChecklistSerializer(_checklist(quote, team)).data)

    @extend_schema(
        parameters=[TEAM_PARAM],
        request=ChecklistAnswerInputSerializer,
        responses={200: ChecklistSerializer},
    )
    def post(self, request: Request, quote_id: int) -> Response:
        return self.put(request, quote_id)


class QuoteChecklistEvidenceApi(APIView):
    """A team's answer's evidence file (an attachment, application/octet-stream), to its
    members who may see the quote; 404 when the answer has no file or is another team's."""

    @extend_schema(
        parameters=[TEAM_PARAM],
        responses={
            (200, PRIVATE_FILE_CONTENT_TYPE): OpenApiResponse(
                response=OpenApiTypes.BINARY, description="The file as uploaded"
            )
        },
    )
    def get(self, request: Request, quote_id: int, question: str) -> FileResponse:
        quote = quote_get_for_user(request.user, quote_id)
        answer = checklist_answer_with_file(quote, question, team=_checklist_team(request))
        return private_file_response(answer.evidence_file, filename=answer.evidence_download_name)
