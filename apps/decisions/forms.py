from decimal import Decimal
from typing import Any

from django import forms

from apps.core.forms import PercentField
from apps.core.roles import DECISION_AUTHORS

from .models import ChecklistAnswer, DecisionRecord

ROLE_CHOICES = [(r.value, r.label) for r in DECISION_AUTHORS]
MAX_EVIDENCE_BYTES = 10 * 1024 * 1024

# The acceptance-criteria keys the service fills in by default; blank: not a criterion.
CRITERIA = (
    "latency_percentile", "ttft_target_ms", "itl_target_ms", "e2e_target_ms", "acceptance_rate",
    "min_memory_headroom_gb", "accepted_outputs_per_month",
)  # fmt: skip
PERCENTILES = [
    ("", "— none —"), ("P50", "p50 (median)"), ("P95", "p95"), ("P99", "p99"),
    ("OFFLINE", "Offline (no latency target)"),
]  # fmt: skip


class DecisionRecordForm(forms.Form):
    """What an author writes on a record; the evidence is frozen by the service."""

    title = forms.CharField(
        max_length=200, required=False, help_text="Blank: named after the brief."
    )
    capacity_model = forms.ChoiceField(
        choices=DecisionRecord.CapacityModel.choices,
        label="How the capacity is bought",
        help_text="Rent, reserve, buy or a model API: what the commitment is.",
    )
    rationale = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 4}),
        required=False,
        label="Why this candidate",
        help_text="What the approvers read first: why it wins, and what was weighed.",
    )
    required_roles = forms.MultipleChoiceField(
        choices=ROLE_CHOICES,
        widget=forms.CheckboxSelectMultiple,
        initial=[r for r, _ in ROLE_CHOICES],
        help_text="The roles that must each approve.",
    )
    alternatives = forms.MultipleChoiceField(
        choices=[],
        widget=forms.CheckboxSelectMultiple,
        required=False,
        help_text="Other candidates from the table that were considered.",
    )

    criteria_latency_percentile = forms.ChoiceField(
        label="Latency percentile", choices=PERCENTILES, required=False
    )
    criteria_ttft_target_ms = forms.IntegerField(
        label="Time to first token target (ms)", required=False, min_value=1
    )
    criteria_itl_target_ms = forms.IntegerField(
        label="Inter-token latency target (ms)", required=False, min_value=1
    )
    criteria_e2e_target_ms = forms.IntegerField(
        label="End-to-end target (ms)", required=False, min_value=1
    )
    criteria_acceptance_rate = PercentField(
        label="Acceptance rate (%)", required=False, min_share=Decimal(0), max_share=Decimal(1),
        help_text="Share of outputs that must pass quality checks: 90 means 9 in 10.",
    )  # fmt: skip
    criteria_min_memory_headroom_gb = forms.DecimalField(
        label="Minimum memory headroom (GB)", required=False, min_value=Decimal(0)
    )
    criteria_accepted_outputs_per_month = forms.DecimalField(
        label="Accepted outputs a month", required=False, min_value=Decimal(0),
        help_text="In the brief's success unit (tokens, images, runs…).",
    )  # fmt: skip

    def __init__(self, *args: Any, candidates: list[tuple[str, str]], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["alternatives"].choices = candidates  # type: ignore[attr-defined]

    def criteria_fields(self) -> list[forms.BoundField]:
        return [self[f"criteria_{key}"] for key in CRITERIA]

    def main_fields(self) -> list[forms.BoundField]:
        return [self[name] for name in ("title", "capacity_model", "rationale")]

    def choice_fields(self) -> list[forms.BoundField]:
        return [self["required_roles"], self["alternatives"]]

    def acceptance_criteria(self) -> dict[str, Any]:
        criteria: dict[str, Any] = {}
        for key in CRITERIA:
            value = self.cleaned_data.get(f"criteria_{key}")
            if value in ("", None):
                criteria[key] = None
            elif isinstance(value, Decimal):
                criteria[key] = format(value.normalize(), "f")
            else:
                criteria[key] = value
        return criteria

    def alternatives_value(self) -> list[dict[str, Any]]:
        return [decode_candidate(v) for v in self.cleaned_data.get("alternatives", [])]

    def service_fields(self) -> dict[str, Any]:
        return {
            "title": self.cleaned_data["title"],
            "capacity_model": self.cleaned_data["capacity_model"],
            "rationale": self.cleaned_data["rationale"],
            "required_roles": self.cleaned_data["required_roles"],
            "alternatives": self.alternatives_value(),
            "acceptance_criteria": self.acceptance_criteria(),
        }


def encode_candidate(*, quote_id: int | None, api_route_id: int | None) -> str:
    return f"q{quote_id}" if quote_id is not None else f"r{api_route_id}"


def decode_candidate(value: str) -> dict[str, Any]:
    kind, number = value[:1], int(value[1:])
    if kind == "q":
        return {"quote_id": number, "api_route_id": None}
    return {"quote_id": None, "api_route_id": number}


def initial_criteria(criteria: dict[str, Any]) -> dict[str, Any]:
    return {f"criteria_{k}": v for k, v in (criteria or {}).items() if v is not None}


class SubmitForm(forms.Form):
    role = forms.ChoiceField(choices=ROLE_CHOICES, required=False)


class VerdictForm(forms.Form):
    """A role's verdict: approve with a comment (and, over must-have checklist warnings, their
    acknowledgement), or reject with a reason."""

    role = forms.ChoiceField(choices=ROLE_CHOICES)
    reason = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}))
    comment = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}))
    acknowledge_warnings = forms.BooleanField(required=False)


class ChecklistAnswerForm(forms.Form):
    answer = forms.ChoiceField(choices=ChecklistAnswer.Answer.choices)
    # What each evidence field is for is said once, above the questions (the checklist page).
    evidence_text = forms.CharField(
        required=False, widget=forms.Textarea(attrs={"rows": 2}), label="Evidence"
    )
    evidence_link = forms.URLField(required=False, label="Evidence link", assume_scheme="https")
    evidence_file = forms.FileField(required=False, label="Evidence file (10 MB at most)")

    def clean_evidence_file(self) -> Any:
        upload = self.cleaned_data.get("evidence_file")
        if upload and upload.size > MAX_EVIDENCE_BYTES:
            raise forms.ValidationError("larger than 10 MB")
        return upload


ANSWER_OR_BLANK = [("", "Not answered yet"), *ChecklistAnswer.Answer.choices]


class ChecklistQuestionForm(ChecklistAnswerForm):
    """One question inside the whole-checklist form: an unanswered question may stay blank."""

    answer = forms.ChoiceField(choices=ANSWER_OR_BLANK, required=False)

    def __init__(self, *args: Any, answered: bool, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.answered = answered

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if not data.get("answer") and "answer" not in self.errors:
            if self.answered:
                self.add_error(
                    "answer", "Choose an answer: a given answer can be changed, not removed."
                )
            elif any(data.get(n) for n in ("evidence_text", "evidence_link", "evidence_file")):
                self.add_error("answer", "Choose an answer for the evidence you gave.")
        return data

    def to_save(self) -> dict[str, Any] | None:
        """The answer's fields when this question was answered or changed, else None."""
        if not self.has_changed() or not self.cleaned_data.get("answer"):
            return None
        return {
            name: self.cleaned_data.get(name)
            for name in ("answer", "evidence_text", "evidence_link", "evidence_file")
        }


class ChecklistForm:
    """Every checklist question of one quote in one form (one POST saves all answers at once);
    each question's fields are prefixed with its key (``co_sla-answer``)."""

    def __init__(
        self,
        data: Any = None,
        files: Any = None,
        *,
        items: list[dict[str, Any]],
    ) -> None:
        self.forms: dict[str, ChecklistQuestionForm] = {}
        for item in items:
            initial = {
                "answer": item["answer"] or "",
                "evidence_text": item["evidence_text"],
                "evidence_link": item["evidence_link"],
            }
            self.forms[item["question"]] = ChecklistQuestionForm(
                data, files, prefix=item["question"], initial=initial, answered=bool(item["answer"])
            )

    def is_valid(self) -> bool:
        return all([form.is_valid() for form in self.forms.values()])  # every form checked

    def answers(self) -> dict[str, dict[str, Any]]:
        """The answers to save: the questions answered or changed in this POST."""
        changed = {key: form.to_save() for key, form in self.forms.items()}
        return {key: fields for key, fields in changed.items() if fields is not None}

    def questions_with_errors(self) -> list[str]:
        return [key for key, form in self.forms.items() if form.errors]
