"""One home per vocabulary: every Django choice set that names an engine vocabulary has the
engine enum's values in the engine's order (the models, the brief API and the brief form alike),
and the words a person reads for each."""

from enum import StrEnum

import pytest
from django.apps import apps

from apps.benchmarks.models import BenchmarkRun
from apps.briefs import choices
from apps.briefs.api.serializers import BriefInputSerializer, TrainingSerializer
from apps.briefs.forms import BriefForm
from apps.briefs.models import WorkloadBrief
from apps.catalog.models import Gpu, GpuSystem, ModelPreset
from apps.core.choices import text_choices
from apps.decisions.models import Approval, ChecklistAnswer, DecisionRecord
from apps.engine import costing
from apps.engine import types as engine
from apps.engine.capacity_model import CapacityOption
from apps.finance.models import CandidateRow, CandidateTable, FinanceAssumptions, FxRate
from apps.quotes.models import ApiRoute, ApiRoutePrice, Quote

# (model, field) -> the engine enum it is derived from.
ENGINE_VOCABULARIES = {
    (WorkloadBrief, "workload_type"): engine.WorkloadType,
    (WorkloadBrief, "weight_precision"): engine.Precision,
    (WorkloadBrief, "kv_cache_precision"): engine.Precision,
    (WorkloadBrief, "success_unit"): costing.SuccessUnit,
    (WorkloadBrief, "duty_cycle"): engine.DutyCycle,
    (WorkloadBrief, "operating_boundary"): costing.OperatingBoundary,
    (WorkloadBrief, "optimizer"): engine.Optimizer,
    (WorkloadBrief, "sharding"): engine.Sharding,
    (WorkloadBrief, "speculative_method"): engine.SpeculativeMethod,
    (FinanceAssumptions, "labour_allocation"): costing.LabourAllocation,
    (Quote, "pricing_term"): costing.PricingTerm,
    (DecisionRecord, "capacity_model"): CapacityOption,
    (CandidateRow, "basis"): costing.Basis,
    (Gpu, "architecture"): engine.Architecture,
    (ModelPreset, "kind"): engine.ModelKind,
}
# Vocabularies of the Django apps alone: the engine has no word for them.
DJANGO_ONLY = {
    (WorkloadBrief, "latency_percentile"),  # the engine holds every target as its p95
    (GpuSystem, "scale"),
    (BenchmarkRun, "phase"),
    (BenchmarkRun, "tool"),
    (Quote, "currency"),
    (ApiRoute, "currency"),
    (ApiRoutePrice, "currency"),
    (FinanceAssumptions, "reporting_currency"),
    (FxRate, "currency"),
    (CandidateTable, "currency"),
    (CandidateRow, "candidate_kind"),
    (DecisionRecord, "status"),
    (DecisionRecord, "chosen_plan"),  # the plan kinds of CandidateRow.Kind
    (DecisionRecord, "submitted_as"),
    (Approval, "role"),
    (Approval, "verdict"),
    (ChecklistAnswer, "answer"),
}
# The brief's derived choice sets (apps.briefs.choices) -> their engine enums.
BRIEF_CHOICES = {
    choices.WorkloadType: engine.WorkloadType,
    choices.Precision: engine.Precision,
    choices.SuccessUnit: costing.SuccessUnit,
    choices.DutyCycle: engine.DutyCycle,
    choices.OperatingBoundary: costing.OperatingBoundary,
    choices.Tooling: engine.Tooling,
    choices.Optimizer: engine.Optimizer,
    choices.Sharding: engine.Sharding,
    choices.SpeculativeMethod: engine.SpeculativeMethod,
}


def values(enum: type[StrEnum]) -> list[str]:
    return [member.value for member in enum]


def field_values(field_choices) -> list[str]:
    return [value for value, _label in field_choices]


@pytest.mark.parametrize(
    ("model", "field", "enum"),
    [(model, field, enum) for (model, field), enum in ENGINE_VOCABULARIES.items()],
    ids=[f"{model.__name__}.{field}" for model, field in ENGINE_VOCABULARIES],
)
def test_a_model_field_has_its_engine_enums_values_in_order(model, field, enum):
    assert field_values(model._meta.get_field(field).choices) == values(enum)


def test_every_choice_field_of_the_apps_is_an_engine_vocabulary_or_said_to_be_the_apps_own():
    fields = {
        (model, field.name)
        for model in apps.get_models()
        if model.__module__.startswith("apps.")
        for field in model._meta.concrete_fields
        if field.choices
    }

    assert fields - set(ENGINE_VOCABULARIES) - DJANGO_ONLY == set()
    assert set(ENGINE_VOCABULARIES) | DJANGO_ONLY <= fields


@pytest.mark.parametrize(
    ("derived", "enum"),
    list(BRIEF_CHOICES.items()),
    ids=[e.__name__ for e in BRIEF_CHOICES.values()],
)
def test_a_brief_choice_set_is_its_engine_enum(derived, enum):
    assert derived.values == values(enum)
    assert [derived(value) for value in values(enum)] == list(derived)


@pytest.mark.parametrize(
    "derived",
    [
        *BRIEF_CHOICES,
        Quote.PricingTerm,
        DecisionRecord.CapacityModel,
        ModelPreset.Kind,
        Gpu.Architecture,
    ],
    ids=lambda c: c.__qualname__,
)
def test_every_value_of_a_labelled_vocabulary_has_written_words(derived):
    assert derived.unlabelled == ()


@pytest.mark.parametrize(
    ("field", "enum"),
    [
        ("workload_type", engine.WorkloadType),
        ("weight_precision", engine.Precision),
        ("kv_cache_precision", engine.Precision),
        ("success_unit", costing.SuccessUnit),
        ("duty_cycle", engine.DutyCycle),
        ("operating_boundary", costing.OperatingBoundary),
    ],
)
def test_the_brief_api_offers_the_engine_enums_values(field, enum):
    offered = BriefInputSerializer().fields[field].choices

    assert list(offered) == values(enum)


def test_the_brief_api_and_form_offer_the_engine_tools_and_training_vocabularies():
    api_tools = BriefInputSerializer().fields["tooling"].child.choices
    training = TrainingSerializer().fields

    assert list(api_tools) == values(engine.Tooling)
    assert field_values(BriefForm.base_fields["tooling"].choices) == values(engine.Tooling)
    assert list(training["optimizer"].choices) == values(engine.Optimizer)
    assert list(training["sharding"].choices) == values(engine.Sharding)


class TestTextChoices:
    class Colour(StrEnum):
        RED = "RED"
        DARK_BLUE = "DARK_BLUE"

    def test_a_value_the_engine_gains_is_a_choice_labelled_from_its_name(self):
        derived = text_choices(self.Colour, {"RED": "Red"})

        assert derived.choices == [("RED", "Red"), ("DARK_BLUE", "Dark Blue")]
        assert derived.unlabelled == ("DARK_BLUE",)

    def test_a_member_is_the_engine_value_and_compares_equal_to_it(self):
        derived = text_choices(self.Colour)

        assert derived.RED == self.Colour.RED
        assert derived("DARK_BLUE").label == "Dark Blue"

    def test_a_label_for_a_value_the_engine_lacks_is_refused(self):
        with pytest.raises(ValueError, match="GREEN"):
            text_choices(self.Colour, {"GREEN": "Green"})
