"""/api/v1/briefs/: create, list, read and update workload briefs; estimate a stored brief."""

from typing import Any

from django.core.exceptions import ValidationError as DjangoValidationError
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.benchmarks.selectors import brief_estimates
from apps.briefs.contract import body_to_fields, request_for_brief
from apps.briefs.selectors import (
    brief_get_for_user,
    brief_list_for_user,
    teams_for_user,
)
from apps.briefs.services import brief_create, brief_update
from apps.core.models import Team
from apps.core.pagination import StandardPagination, paginated
from apps.core.parsers import JSONParser
from apps.core.permissions import role_permission
from apps.core.query import KnownQueryParams
from apps.core.roles import BRIEF_EDITORS
from apps.core.users import signed_in
from apps.engine import EngineInputError, request_model_to_dict

from .estimate import EngineErrorSerializer, EstimateOutputSerializer, engine_error_response
from .serializers import (
    VIDEO_WORKLOAD,
    BriefInputSerializer,
    BriefOutputSerializer,
    body_errors,
)

BriefPermission = role_permission(*BRIEF_EDITORS)


def _team_for(request: Request, team_id: int | None) -> Team:
    teams = teams_for_user(request.user)
    if team_id is None:
        team = teams.first()
        if team is None:
            raise serializers.ValidationError({"team": "you belong to no team"})
        return team
    team = teams.filter(pk=team_id).first()
    if team is None:
        raise serializers.ValidationError({"team": "not a team you belong to"})
    return team


class BriefListCreateApi(KnownQueryParams, APIView):
    permission_classes = [BriefPermission]
    pagination_class = StandardPagination
    parser_classes = [JSONParser]

    @extend_schema(responses={200: BriefOutputSerializer(many=True)})
    def get(self, request: Request) -> Response:
        return paginated(self, request, brief_list_for_user(request.user), BriefOutputSerializer)

    @extend_schema(
        request=BriefInputSerializer,
        responses={201: BriefOutputSerializer, 400: OpenApiResponse(description="Names the field")},
    )
    def post(self, request: Request) -> Response:
        payload = BriefInputSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        data: dict[str, Any] = dict(payload.validated_data)
        team = _team_for(request, data.pop("team", None))
        fields = body_to_fields(data)
        try:
            brief = brief_create(team=team, created_by=signed_in(request.user), **fields)
        except DjangoValidationError as exc:
            video = fields.get("workload_type") == VIDEO_WORKLOAD
            raise serializers.ValidationError(body_errors(exc, video=video)) from exc
        return Response(BriefOutputSerializer(brief).data, status=status.HTTP_201_CREATED)


class BriefDetailApi(APIView):
    permission_classes = [BriefPermission]
    parser_classes = [JSONParser]

    @extend_schema(responses={200: BriefOutputSerializer})
    def get(self, request: Request, pk: int) -> Response:
        return Response(BriefOutputSerializer(brief_get_for_user(request.user, pk)).data)

    @extend_schema(request=BriefInputSerializer, responses={200: BriefOutputSerializer})
    def patch(self, request: Request, pk: int) -> Response:
        brief = brief_get_for_user(request.user, pk)
        payload = BriefInputSerializer(
            data=request.data, partial=True, context={"workload_type": brief.workload_type}
        )
        payload.is_valid(raise_exception=True)
        data: dict[str, Any] = dict(payload.validated_data)
        if "framework" in data and "tooling" not in data:
            data["tooling"] = list(brief.tooling or [])  # the framework goes first in it
        fields = body_to_fields(data)
        if "team" in data:
            fields["team"] = _team_for(request, data["team"])
        try:
            brief = brief_update(brief=brief, **fields)
        except DjangoValidationError as exc:
            # The merged brief's checks name its columns; the answer names the request's
            # fields, as a POST of the same body does (serializers.body_errors).
            kind = fields.get("workload_type") or brief.workload_type
            video = kind == VIDEO_WORKLOAD
            raise serializers.ValidationError(body_errors(exc, video=video)) from exc
        return Response(BriefOutputSerializer(brief).data)


class BriefEstimateApi(APIView):
    """The engine's per-GPU answer for a stored brief (same shape as POST /estimate).

    A brief may be stored incomplete; until it holds what the engine needs, this answers 409
    naming the missing field (the request is fine, the brief is not ready)."""

    @extend_schema(
        responses={
            200: EstimateOutputSerializer,
            409: OpenApiResponse(EngineErrorSerializer, description="The brief is incomplete"),
        },
    )
    def get(self, request: Request, pk: int) -> Response:
        brief = brief_get_for_user(request.user, pk)
        try:
            estimates = brief_estimates(brief)
            model = request_model_to_dict(request_for_brief(brief))
        except EngineInputError as exc:
            response = engine_error_response(exc)
            response.status_code = 409
            return response
        return Response({"model": model, "estimates": estimates})
