"""The procurement checklist: four sections of questions asked of every candidate
(a quote, or a GPU system), following the seed's procurement checklist."""

from dataclasses import dataclass
from typing import TypedDict

from .frozen import FrozenChecklist


@dataclass(frozen=True)
class Question:
    key: str
    section: str
    text: str


SECTIONS = (
    ("HARDWARE", "Hardware and topology"),
    ("SOFTWARE", "Software stack"),
    ("COMMERCIAL", "Commercial model"),
    ("SECURITY", "Security and governance"),
)

QUESTIONS: tuple[Question, ...] = (
    Question(
        "hw_exact_sku", "HARDWARE", "Is the exact GPU SKU and memory size confirmed in writing?"
    ),
    Question(
        "hw_interconnect",
        "HARDWARE",
        "Is the intra-node interconnect (NVLink / NVSwitch / Infinity Fabric) as quoted?",
    ),
    Question(
        "hw_network",
        "HARDWARE",
        "Is the inter-node network (InfiniBand / RoCE bandwidth per GPU) documented?",
    ),
    Question(
        "hw_storage",
        "HARDWARE",
        "Is local and shared storage throughput enough for checkpoints and model loads?",
    ),
    Question(
        "hw_capacity", "HARDWARE", "Is the capacity available when we need it (lead time, region)?"
    ),
    Question(
        "sw_drivers",
        "SOFTWARE",
        "Are the driver, CUDA/ROCm and framework versions we need supported?",
    ),
    Question(
        "sw_serving",
        "SOFTWARE",
        "Does our serving stack (vLLM, SGLang, TensorRT-LLM, Triton) run on it?",
    ),
    Question(
        "sw_orchestration",
        "SOFTWARE",
        "Is orchestration supported (Kubernetes, Slurm, Ray) with GPU scheduling?",
    ),
    Question(
        "sw_observability",
        "SOFTWARE",
        "Are GPU metrics and logs exported to our observability stack?",
    ),
    Question(
        "co_pricing", "COMMERCIAL", "Are all prices, fees, egress and support costs in the quote?"
    ),
    Question(
        "co_commitment",
        "COMMERCIAL",
        "Are commitment length, cancellation and scale-down terms acceptable?",
    ),
    Question("co_sla", "COMMERCIAL", "Is there an SLA with credits for GPU failures and downtime?"),
    Question("co_replacement", "COMMERCIAL", "Is failed-hardware replacement time committed?"),
    Question(
        "se_isolation",
        "SECURITY",
        "Is tenant isolation adequate (dedicated hosts, no shared GPUs)?",
    ),
    Question("se_data", "SECURITY", "Do data residency and encryption meet our policy?"),
    Question(
        "se_compliance", "SECURITY", "Are the required certifications (SOC 2, ISO 27001) current?"
    ),
    Question("se_access", "SECURITY", "Are access controls and audit logs available to us?"),
)

QUESTION_KEYS = frozenset(q.key for q in QUESTIONS)

#: The questions a buyer may not sign past unseen: security certifications, data residency and
#: encryption, and the SLA. A "No" or "Partial" on one is a warning on the record, and each
#: approval of the record must acknowledge it in words (apps.decisions.services).
MUST_HAVE = frozenset({"se_compliance", "se_data", "co_sla"})
#: The answers that make a must-have question a warning.
SHORT_ANSWERS = frozenset({"NO", "PARTIAL"})


class ChecklistWarning(TypedDict):
    """A must-have question a frozen checklist answers "No" or "Partial"."""

    question: str
    text: str
    answer: str
    evidence: str


def must_have_warnings(checklist: FrozenChecklist) -> list[ChecklistWarning]:
    """The must-have questions a frozen checklist answers "No" or "Partial", in question order
    (a snapshot's ``checklist``)."""
    answers = {a.get("question"): a for a in checklist.get("answers", [])}
    return [
        {
            "question": q.key,
            "text": q.text,
            "answer": str(answers[q.key]["answer"]),  # one of SHORT_ANSWERS (the filter below)
            "evidence": answers[q.key].get("evidence") or "",
        }
        for q in QUESTIONS
        if q.key in MUST_HAVE and (answers.get(q.key) or {}).get("answer") in SHORT_ANSWERS
    ]
