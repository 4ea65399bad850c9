"""/api/v1/benchmark-runs/: import a results file, enter a run by hand, list and read runs."""

from typing import Any

from django.conf import settings
from django.http import FileResponse, Http404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.benchmarks import services
from apps.benchmarks.models import BenchmarkRun
from apps.benchmarks.selectors import benchmark_run_get_for_user, benchmark_run_list_for_user
from apps.briefs.models import WorkloadBrief
from apps.briefs.selectors import brief_list_for_user
from apps.core.files import PRIVATE_FILE_CONTENT_TYPE, private_file_response
from apps.core.pagination import StandardPagination, paginated
from apps.core.parsers import JSONParser
from apps.core.permissions import role_permission
from apps.core.query import MAX_ID, ChoiceParam, IntParam, KnownQueryParams, TextParam
from apps.core.roles import BENCHMARK_EDITORS
from apps.core.users import signed_in

from .serializers import (
    BenchmarkRunOutputSerializer,
    ImportInputSerializer,
    ManualRunInputSerializer,
    import_output,
)

PlatformWrites = role_permission(*BENCHMARK_EDITORS)
#: Room for the multipart boundaries and the other form fields around the file.
MULTIPART_OVERHEAD_BYTES = 64 * 1024


def _brief_for(request: Request, brief_id: int) -> WorkloadBrief:
    brief = brief_list_for_user(request.user).filter(pk=brief_id).first()
    if brief is None:
        raise serializers.ValidationError({"brief": f"no brief #{brief_id} in your teams"})
    return brief


def upload_too_large(content_length: str | None) -> str | None:
    """Why a request body is refused before it is read, from its Content-Length alone."""
    limit = settings.BENCHMARK_MAX_UPLOAD_BYTES
    try:
        length = int(content_length or 0)
    except ValueError:
        return None
    if length > limit + MULTIPART_OVERHEAD_BYTES:
        return f"upload too large: {length} bytes, the limit is {limit} bytes for the file"
    return None


class BenchmarkRunImportApi(APIView):
    """A results file of vllm bench serve, GuideLLM, AIPerf, GenAI-Perf, llmperf, an llm-d
    Benchmark Report (inference-perf), MLPerf Endpoints, trtllm-bench or SGLang bench_serving,
    imported as a whole: any problem and nothing is saved (no run, no stored file)."""

    permission_classes = [PlatformWrites]
    parser_classes = [MultiPartParser, FormParser]

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        # Before anything reads the body (a session's CSRF check parses the form): an upload
        # over the limit is refused from its Content-Length, unread.
        reason = upload_too_large(request.META.get("CONTENT_LENGTH"))
        if reason:
            raise serializers.ValidationError({"file": reason})
        super().initial(request, *args, **kwargs)

    @extend_schema(
        request={"multipart/form-data": ImportInputSerializer},
        responses={
            201: BenchmarkRunOutputSerializer,
            200: OpenApiResponse(description="The same file was already imported: the runs"),
            400: OpenApiResponse(description="What is wrong; nothing saved"),
        },
    )
    def post(self, request: Request) -> Response:
        upload = request.FILES.get("file")
        limit = settings.BENCHMARK_MAX_UPLOAD_BYTES
        if upload is not None and upload.size is not None and upload.size > limit:
            raise serializers.ValidationError(
                {"file": f"file too large: {upload.size} bytes, the limit is {limit} bytes"}
            )
        payload = ImportInputSerializer(data=request.data, context={"request": request})
        payload.is_valid(raise_exception=True)
        data = payload.validated_data
        upload = data["file"]
        outcome = services.benchmark_runs_import(
            brief=_brief_for(request, data["brief"]),
            gpu=data.get("gpu"),
            gpu_count=data.get("gpu_count"),
            quote=data.get("quote"),
            system=data.get("system"),
            tool=data.get("tool") or None,
            conditions={k: data[k] for k in ImportInputSerializer.CONDITION_FIELDS if data.get(k)},
            proxy=data.get("proxy", False),
            raw=upload.read(limit + 1),
            filename=upload.name or "result.json",
            created_by=signed_in(request.user),
        )
        return Response(
            import_output(outcome.runs, duplicate=outcome.duplicate),
            status=status.HTTP_200_OK if outcome.duplicate else status.HTTP_201_CREATED,
        )


#: Filters of the run list.
BRIEF = IntParam("brief", 1, MAX_ID, "Runs of this brief")
GPU = TextParam("gpu", "Runs on this GPU (catalog slug); empty means any")
PHASE = ChoiceParam("phase", BenchmarkRun.Phase.values, "Runs of this phase")
CURRENT = ChoiceParam(
    "current", ("true", "false"), "true: only runs no later import has superseded"
)
LIST_FILTERS = (BRIEF, GPU, PHASE, CURRENT)


class BenchmarkRunListCreateApi(KnownQueryParams, APIView):
    """GET: runs of your teams (filters: brief, gpu, phase, current=true). POST: a Phase 1 or
    Phase 3 run entered by hand."""

    permission_classes = [PlatformWrites]
    parser_classes = [JSONParser]
    pagination_class = StandardPagination
    query_params = LIST_FILTERS

    @extend_schema(
        parameters=[p.openapi() for p in LIST_FILTERS],
        responses={200: BenchmarkRunOutputSerializer(many=True)},
    )
    def get(self, request: Request) -> Response:
        qs = benchmark_run_list_for_user(
            request.user,
            brief_id=BRIEF.parse(request),
            gpu=GPU.parse(request) or None,
            phase=PHASE.parse(request),
        )
        if CURRENT.parse(request) == "true":
            qs = qs.filter(superseded_by__isnull=True)
        return paginated(self, request, qs, BenchmarkRunOutputSerializer)

    @extend_schema(request=ManualRunInputSerializer, responses={201: BenchmarkRunOutputSerializer})
    def post(self, request: Request) -> Response:
        payload = ManualRunInputSerializer(data=request.data, context={"request": request})
        payload.is_valid(raise_exception=True)
        data = payload.validated_data
        run = services.benchmark_run_create_manual(
            brief=_brief_for(request, data["brief"]),
            gpu=data["gpu"],
            gpu_count=data["gpu_count"],
            quote=data.get("quote"),
            system=data.get("system"),
            phase=data["phase"],
            label=data.get("label", ""),
            conditions=data.get("conditions"),
            results=data["results"],
            created_by=signed_in(request.user),
        )
        return Response(BenchmarkRunOutputSerializer(run).data, status=status.HTTP_201_CREATED)


class BenchmarkRunRawApi(APIView):
    """The results file as imported (an attachment, application/octet-stream); 404 for a run
    entered by hand or of another team."""

    @extend_schema(
        responses={
            (200, PRIVATE_FILE_CONTENT_TYPE): OpenApiResponse(
                response=OpenApiTypes.BINARY, description="The file as uploaded"
            )
        }
    )
    def get(self, request: Request, pk: int) -> FileResponse:
        run = benchmark_run_get_for_user(request.user, pk)
        if not run.raw_file:
            raise Http404("This run was entered by hand: it has no raw file.")
        return private_file_response(run.raw_file, filename=run.raw_download_name)


class BenchmarkRunDetailApi(APIView):
    permission_classes = [PlatformWrites]

    @extend_schema(responses={200: BenchmarkRunOutputSerializer})
    def get(self, request: Request, pk: int) -> Response:
        return Response(
            BenchmarkRunOutputSerializer(benchmark_run_get_for_user(request.user, pk)).data
        )
