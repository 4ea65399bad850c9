"""POST /api/v1/estimate and GET /api/v1/models/: the engine over HTTP, stateless."""

from typing import Any

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.catalog.selectors import estimates_for_request, gpu_specs, model_preset_list
from apps.core.api_examples import ESTIMATE_EXAMPLES
from apps.core.parsers import JSONParser
from apps.core.query import KnownQueryParams
from apps.engine import EngineInputError, parse_estimate_request, request_model_to_dict


class EngineErrorSerializer(serializers.Serializer):  # type: ignore[type-arg]
    detail = serializers.CharField()
    field = serializers.CharField(required=False, help_text="The field at fault, when one is.")


class EstimateOutputSerializer(serializers.Serializer):  # type: ignore[type-arg]
    model = serializers.DictField(
        help_text=(
            "The model as the engine read it: total and active parameters (active: per token, "
            "the input embedding lookup excluded, as model cards count them; also given with "
            "both embedding matrices), weight precision per tensor group, weights_gb, KV bytes "
            "per token, attention layer types."
        )
    )
    estimates = serializers.ListField(
        child=serializers.DictField(),
        help_text=(
            "One estimate per GPU. `fit` is FITS (within the serving framework's default 90% "
            "of GPU memory), TIGHT (fits only with more of the GPU, e.g. vLLM "
            "--gpu-memory-utilization 0.95, or at a smaller batch / shorter context; "
            "`fit_advice` says which and how much) or NO; `fits` is `fit != NO`. "
            "`memory_capacity_gb` is per GPU in GB (10^9 bytes), from "
            "`memory_capacity_source`: the driver-reported MiB where known, else the datasheet."
        ),
    )


def engine_error_response(exc: EngineInputError) -> Response:
    return Response({"detail": f"{exc.field}: {exc.message}", "field": exc.field}, status=400)


class EstimateApi(APIView):
    """Estimate a brief (not saved) on every catalog GPU, or on the GPUs and count asked for."""

    parser_classes = [JSONParser]

    @extend_schema(
        request=dict[str, Any],
        responses={
            200: EstimateOutputSerializer,
            400: OpenApiResponse(EngineErrorSerializer, description="Bad input; names the field"),
        },
        examples=ESTIMATE_EXAMPLES,
    )
    def post(self, request: Request) -> Response:
        try:
            known = {spec.slug for spec in gpu_specs()}
            engine_request = parse_estimate_request(request.data, known_gpus=known)
            estimates = estimates_for_request(engine_request)
        except EngineInputError as exc:
            return engine_error_response(exc)
        return Response({"model": request_model_to_dict(engine_request), "estimates": estimates})


class ModelPresetOutputSerializer(serializers.Serializer):  # type: ignore[type-arg]
    slug = serializers.CharField()
    name = serializers.CharField()
    kind = serializers.CharField()
    params_billion = serializers.FloatField()
    active_params_billion = serializers.FloatField()
    layers = serializers.IntegerField()
    hidden_size = serializers.IntegerField()
    attention_heads = serializers.IntegerField()
    kv_heads = serializers.IntegerField()
    head_dim = serializers.IntegerField()
    vocab_size = serializers.IntegerField()
    intermediate_size = serializers.IntegerField()
    experts = serializers.IntegerField()
    active_experts = serializers.IntegerField()
    max_context_tokens = serializers.IntegerField()


class ModelPresetListApi(KnownQueryParams, APIView):
    """The model presets the engine knows, by slug (use as {"model": {"preset": slug}})."""

    @extend_schema(responses={200: ModelPresetOutputSerializer(many=True)})
    def get(self, request: Request) -> Response:
        return Response(ModelPresetOutputSerializer(model_preset_list(), many=True).data)
