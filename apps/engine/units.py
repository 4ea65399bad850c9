"""The unit a candidate table is read in: one per table, from the brief's success unit.

Costs are computed and stored per one accepted output (`CandidateCost.effective_unit_cost`);
every reader (rankings JSON and CSV, the finance page and its charts, the capacity model, the
decision record's snapshot and PDF) shows them multiplied by the unit's `scale`, so that one
table says one thing in one unit: "4.85 USD per 1M accepted tokens", not "0.00000485 USD".

The scale is fixed per success unit (never chosen from the figures), so two tables of the same
success unit always compare directly. It follows how each output is priced in the market and
lands the usual figures between about 0.01 and 1,000 currency units:
- tokens per million: model APIs are priced per 1M tokens (https://openai.com/api/pricing/,
  https://www.anthropic.com/pricing);
- images per thousand: image services are priced per 1,000 images (Amazon Rekognition, "per
  1,000 images", https://aws.amazon.com/rekognition/pricing/), a generated image costs a few
  tenths of a cent to a few cents;
- requests and records per thousand (a request or a record costs a fraction of a cent);
- clips, seconds of video, patches or tasks, checkpoints, training runs and evaluations one by
  one: each costs cents to thousands on its own.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from apps.engine.costing_types import CostKind, SuccessUnit, cost_kind
from apps.engine.types import WorkloadType


@dataclass(frozen=True, kw_only=True, slots=True)
class TableUnit:
    """How a table of `success_unit` reads: ``scale`` outputs per shown unit cost."""

    success_unit: SuccessUnit
    scale: int
    output: str  # one output, in words: "accepted token"
    outputs: str  # several: "accepted tokens"
    choice: str  # the brief form's label: "Accepted output token"

    @property
    def label(self) -> str:
        """The table's unit in words: "per 1M accepted tokens", "per accepted clip"."""
        if self.scale == 1:
            return f"per {self.output}"
        return f"per {scale_text(self.scale)} {self.outputs}"

    def scaled(self, per_output: Decimal) -> Decimal:
        """A cost per one output in this table's unit (exact: a power-of-ten multiple)."""
        return per_output * self.scale


def scale_text(scale: int) -> str:
    """1,000,000 -> "1M", 1,000 -> "1k", other scales as digits."""
    for size, suffix in ((1_000_000_000, "B"), (1_000_000, "M"), (1_000, "k")):
        if scale >= size and scale % size == 0:
            return f"{scale // size}{suffix}"
    return str(scale)


_UNITS = (
    TableUnit(
        success_unit=SuccessUnit.TOKEN,
        scale=1_000_000,
        output="accepted token",
        outputs="accepted tokens",
        choice="Accepted output token",
    ),
    TableUnit(
        success_unit=SuccessUnit.REQUEST,
        scale=1_000,
        output="accepted request",
        outputs="accepted requests",
        choice="Accepted request",
    ),
    TableUnit(
        success_unit=SuccessUnit.RECORD,
        scale=1_000,
        output="processed record",
        outputs="processed records",
        choice="Processed record",
    ),
    TableUnit(
        success_unit=SuccessUnit.IMAGE,
        scale=1_000,
        output="accepted image",
        outputs="accepted images",
        choice="Accepted image",
    ),
    TableUnit(
        success_unit=SuccessUnit.CLIP,
        scale=1,
        output="accepted clip",
        outputs="accepted clips",
        choice="Accepted clip",
    ),
    TableUnit(
        success_unit=SuccessUnit.VIDEO_SECOND,
        scale=1,
        output="accepted second of video",
        outputs="accepted seconds of video",
        choice="Accepted second of video",
    ),
    TableUnit(
        success_unit=SuccessUnit.PATCH,
        scale=1,
        output="accepted patch or task",
        outputs="accepted patches or tasks",
        choice="Accepted patch / task (code agents)",
    ),
    TableUnit(
        success_unit=SuccessUnit.CHECKPOINT,
        scale=1,
        output="accepted fine-tuned checkpoint",
        outputs="accepted fine-tuned checkpoints",
        choice="Accepted fine-tuned checkpoint",
    ),
    TableUnit(
        success_unit=SuccessUnit.TRAINING_RUN,
        scale=1,
        output="completed training run",
        outputs="completed training runs",
        choice="Completed training run",
    ),
    TableUnit(
        success_unit=SuccessUnit.EVALUATION,
        scale=1,
        output="completed evaluation",
        outputs="completed evaluations",
        choice="Completed evaluation",
    ),
)
TABLE_UNITS: dict[SuccessUnit, TableUnit] = {u.success_unit: u for u in _UNITS}


def table_unit(success_unit: SuccessUnit | str) -> TableUnit:
    """The table unit of a success unit (its enum member or its value)."""
    return TABLE_UNITS[SuccessUnit(success_unit)]


_FINETUNES = frozenset(
    {WorkloadType.FULL_FINETUNE, WorkloadType.LORA_FINETUNE, WorkloadType.QLORA_FINETUNE}
)


# The unit a brief that names none yet is sized in (its fit table and what-if figures need a
# month of demand; its candidate table waits for the brief to name one): each workload's usual
# unit of work, the first that `unit_applies` accepts for it.
DEFAULT_UNITS: dict[WorkloadType, SuccessUnit] = {
    WorkloadType.TRAINING: SuccessUnit.TRAINING_RUN,
    WorkloadType.FULL_FINETUNE: SuccessUnit.TRAINING_RUN,
    WorkloadType.LORA_FINETUNE: SuccessUnit.TRAINING_RUN,
    WorkloadType.QLORA_FINETUNE: SuccessUnit.TRAINING_RUN,
    WorkloadType.BATCH_INFERENCE: SuccessUnit.TOKEN,
    WorkloadType.REALTIME_INFERENCE: SuccessUnit.TOKEN,
    WorkloadType.EMBEDDINGS: SuccessUnit.RECORD,
    WorkloadType.IMAGE_GENERATION: SuccessUnit.IMAGE,
    WorkloadType.VIDEO_GENERATION: SuccessUnit.CLIP,
    WorkloadType.EVALUATION: SuccessUnit.EVALUATION,
}


def unit_applies(success_unit: SuccessUnit, workload_type: WorkloadType) -> bool:
    """Whether the costing can count ``success_unit`` for ``workload_type`` (otherwise every
    row of the table says why not and has no unit cost)."""
    kind = cost_kind(workload_type)
    if kind is CostKind.TRAINING:
        if success_unit is SuccessUnit.CHECKPOINT:
            return workload_type in _FINETUNES
        return success_unit is SuccessUnit.TRAINING_RUN
    if kind is CostKind.MEDIA:
        if success_unit is SuccessUnit.VIDEO_SECOND:
            return workload_type is WorkloadType.VIDEO_GENERATION
        return success_unit in (SuccessUnit.IMAGE, SuccessUnit.CLIP, SuccessUnit.REQUEST)
    if workload_type is WorkloadType.EMBEDDINGS:
        return success_unit in (SuccessUnit.RECORD, SuccessUnit.REQUEST, SuccessUnit.TOKEN)
    if success_unit is SuccessUnit.EVALUATION:
        return workload_type is WorkloadType.EVALUATION
    return success_unit in (
        SuccessUnit.TOKEN,
        SuccessUnit.REQUEST,
        SuccessUnit.RECORD,
        SuccessUnit.PATCH,
    )
