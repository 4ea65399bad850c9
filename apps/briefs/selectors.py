"""Reads of briefs, scoped to the teams a user belongs to."""

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import QuerySet
from django.http import Http404

from apps.core.models import Team
from apps.engine import EngineInputError
from apps.engine.request import parse_model, resolve_weight_precision

from .contract import model_body
from .models import WorkloadBrief


def teams_for_user(user: AbstractBaseUser | AnonymousUser) -> QuerySet[Team]:
    if getattr(user, "is_superuser", False):
        return Team.objects.order_by("name")
    return Team.objects.filter(members=user).order_by("name")  # type: ignore[misc]


def brief_list_for_user(user: AbstractBaseUser | AnonymousUser) -> QuerySet[WorkloadBrief]:
    qs = WorkloadBrief.objects.select_related("team").order_by("-updated_at", "-id")
    if getattr(user, "is_superuser", False):
        return qs
    return qs.filter(team__members=user)  # type: ignore[misc]


def brief_get_for_user(user: AbstractBaseUser | AnonymousUser, pk: int) -> WorkloadBrief:
    """The brief, or 404 when it does not exist or belongs to another team (no existence leak)."""
    try:
        return brief_list_for_user(user).get(pk=pk)
    except WorkloadBrief.DoesNotExist:
        raise Http404("No such brief.") from None


def brief_weight_precision(brief: WorkloadBrief) -> tuple[str, str] | None:
    """(the precision the brief's weights are sized at, where it came from), or None when the
    brief has no model the engine can read yet. A blank weight_precision means "as the
    checkpoint ships": the engine's own rule decides (quantization_config, torch_dtype, BF16)."""
    body = model_body(brief)
    if body is None:
        return None
    try:
        model = parse_model(body)
    except EngineInputError:
        return None
    chosen, note = resolve_weight_precision(
        {"weight_precision": brief.weight_precision} if brief.weight_precision else {}, model
    )
    if brief.weight_precision:
        return str(chosen), note or "as given in the brief"
    return str(chosen), note or ""
