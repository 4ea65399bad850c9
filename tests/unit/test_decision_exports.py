"""Decision-record exports from plain data: a PDF that any text renders into, and CSV."""

import csv
import io
from datetime import UTC, datetime
from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pypdf import PdfReader

from apps.decisions.exports import (
    MAX_PARAGRAPH_CHARS,
    MAX_PARAGRAPH_LINES,
    NOT_RECORDED,
    alternatives_lost,
    clip,
    commercial_summary,
    decision_record_csv,
    decision_record_pdf,
    latin1,
    truncation_mark,
    why_it_lost,
)

HASH = "ab" * 32


def row(**overrides):
    base = {
        "rank": 1,
        "candidate_kind": "GPU",
        "provider": "Acme Cloud",
        "gpu": "h100-sxm5-80gb",
        "system": None,
        "api_model": None,
        "gpu_count": 1,
        "replicas": 2,
        "pricing_term": "ON_DEMAND",
        "quote_id": 3,
        "api_route_id": None,
        "cost_lines": {"gpu_compute": "3650.00"},
        "monthly_cost": "3650.00",
        "accepted_outputs_per_month": "1000000000",
        "effective_unit_cost": "0.00000365",
        "meets_constraints": True,
        "why_not": [],
        "basis": "ESTIMATED",
        "p95_latency_ms": "412.5",
        "memory_headroom_gb": "31.2",
        "quote_age_days": 4,
        "quote_stale": False,
        "notes": [],
        "label": "Acme Cloud · 1\u00d7 h100-sxm5-80gb (quote #3)",
        "chosen": True,
        "alternative": False,
    }
    return {**base, **overrides}


def report(**overrides):
    rows = [
        row(),
        row(
            rank=None,
            provider="Zoë → Łódź — GPUs",
            quote_id=4,
            effective_unit_cost="0.0000091",
            meets_constraints=False,
            why_not=["p95 latency 900 ms > 500 ms"],
            label="Zoë → Łódź — GPUs · 8\u00d7 h200 (quote #4)",
            chosen=False,
        ),
    ]
    base = {
        "id": 7,
        "title": "Capacity for chat — 2027 → H100 \u00d7 2",
        "status": "IN_REVIEW",
        "team": "ML Platform",
        "capacity_model": "Rent on demand",
        "rationale": "Cheapest that meets p95 ≤ 500 ms; 李雷 agreed “in principle”.",
        "acceptance_criteria": {"ttft_target_ms": 500, "acceptance_rate": "0.95"},
        "required_roles": ["platform", "finance", "procurement"],
        "brief": {
            "id": 2,
            "name": "Chat assistant",
            "workload_type": "REALTIME_INFERENCE",
            "model": {"preset": "llama-3.1-8b"},
            "success_unit": "TOKEN",
            "concurrency": 32,
            "latency_target": {"ttft_p95_ms": 500},
            "inputs_version": 1,
        },
        "chosen": {
            "kind": "quote",
            "quote_id": 3,
            "api_route_id": None,
            "label": rows[0]["label"],
            "provider": "Acme Cloud",
            "row": rows[0],
            "evidence": None,
        },
        "alternatives": [rows[1]["label"]],
        "currency": "USD",
        "unit": "TOKEN",
        "computed_at": "2026-11-02T10:00:00+00:00",
        "rows": rows,
        "checklist": {
            "answered": 1,
            "total": 17,
            "answers": [
                {
                    "question": "hw_exact_sku",
                    "section": "HARDWARE",
                    "text": "Is the exact GPU SKU confirmed?",
                    "answer": "YES",
                    "evidence": "Order form §3 — “H100 SXM5 80 GB”",
                    "answered_by": "Ærøskøbing",
                }
            ],
        },
        "approvals": [
            {
                "role": "finance",
                "verdict": "APPROVE",
                "user": "fin",
                "reason": "",
                "created_at": datetime(2026, 11, 3, tzinfo=UTC),
            }
        ],
        "audit_trail": [
            {
                "action": "CREATE",
                "from_status": "",
                "to_status": "DRAFT",
                "role": "",
                "actor": "Jürgen",
                "reason": "",
                "created_at": datetime(2026, 11, 2, tzinfo=UTC),
            }
        ],
        "content_hash": HASH,
        "engine_version": "1.4.0",
        "frozen_at": datetime(2026, 11, 2, tzinfo=UTC),
    }
    return {**base, **overrides}


def pdf_text(data: bytes) -> str:
    return "\n".join(p.extract_text() for p in PdfReader(io.BytesIO(data)).pages)


class TestDecisionRecordPdf:
    def test_is_a_pdf_naming_the_hash_the_chosen_provider_and_the_engine(self):
        data = decision_record_pdf(report())
        assert data.startswith(b"%PDF")
        text = pdf_text(data)
        assert HASH in text
        assert "Acme Cloud" in text
        assert "1.4.0" in text
        assert "In review" in text  # the status in words, never its code
        assert "IN_REVIEW" not in text
        assert "Llama 3.1 8B" in text  # the model as its card names it, not the preset slug
        assert "llama-3.1-8b" not in text

    def test_symbols_outside_latin_1_are_spelled_out_not_fatal(self):
        text = pdf_text(decision_record_pdf(report()))
        assert "Capacity for chat - 2027 -> H100 x 2" in text
        assert "Zoë -> Lódz - GPUs" in text
        assert "Ærøskøbing" in text
        assert "0.00000365" in text

    def test_an_api_route_record_without_rows_or_checklist_still_renders(self):
        data = decision_record_pdf(
            report(
                rows=[],
                chosen={
                    "kind": "api_route",
                    "quote_id": None,
                    "api_route_id": 5,
                    "label": "Acme · model-1 (API route #5)",
                    "provider": "Acme",
                    "row": None,
                    "evidence": None,
                },
                checklist={"answered": 0, "total": 17, "answers": []},
                approvals=[],
                acceptance_criteria={},
            )
        )
        assert "API route #5" in pdf_text(data)

    @settings(max_examples=25, deadline=None)
    @given(st.text(max_size=60))
    def test_any_title_renders(self, title):
        assert decision_record_pdf(report(title=title, rationale=title)).startswith(b"%PDF")


class TestLatin1:
    @pytest.mark.parametrize(
        ("text", "expected"),
        [
            ("a → b", "a -> b"),
            ("2 \u00d7 H100", "2 x H100"),
            ("x — y", "x - y"),
            ("Zoë", "Zoë"),
            ("Łukasz", "Lukasz"),
            ("Dvořák", "Dvorák"),
            ("李雷", "??"),
            (None, ""),
        ],
    )
    def test_spells_out_or_replaces(self, text, expected):
        assert latin1(text) == expected


class TestDecisionRecordCsv:
    def test_the_frozen_table_round_trips_decimals_and_neutralises_formulas(self):
        snapshot = {
            "candidate_table": {
                "rows": [row(), row(provider="=HYPERLINK(1)", effective_unit_cost="1E-7")]
            }
        }
        parsed = list(csv.DictReader(io.StringIO(decision_record_csv(snapshot))))
        assert [Decimal(r["effective_unit_cost"]) for r in parsed] == [
            Decimal("0.00000365"),
            Decimal("1E-7"),
        ]
        assert parsed[0]["cost_line:gpu_compute"] == "3650.00"
        assert parsed[1]["provider"] == "'=HYPERLINK(1)"
        assert parsed[0]["meets_constraints"] == "true"


REJECTION_REASON = "The quote does not meet the data residency terms of clause 4. " * 110  # ~7,000
EVIDENCE_NOTE = "Signed order form, page 3, line item 7; see the attached SOC 2 report. " * 14_000
UNBROKEN_URL = "https://evidence.example/" + "a1b2c3" * 700
CELL_MARK = "(truncated:"


def long_text_report():
    """A record holding every kind of text the app accepts, at lengths it accepts."""
    answers = [
        {
            "question": "hw_exact_sku",
            "section": "HARDWARE",
            "text": "Is the exact GPU SKU confirmed?",
            "answer": "YES",
            "evidence": EVIDENCE_NOTE,  # about 1 MB
            "answered_by": "Ærøskøbing",
        },
        {
            "question": "hw_link",
            "section": "HARDWARE",
            "text": "Where is the order form?",
            "answer": "YES",
            "evidence": UNBROKEN_URL,
            "answered_by": "李雷",
        },
        {
            "question": "hw_lines",
            "section": "HARDWARE",
            "text": "One line per item?",
            "answer": "YES",
            "evidence": "item\n" * 500,
            "answered_by": "x",
        },
    ]
    approvals = [
        {
            "role": "finance",
            "verdict": "REJECT",
            "user": "fin",
            "reason": REJECTION_REASON,
            "created_at": datetime(2026, 11, 3, tzinfo=UTC),
        },
        {
            "role": "procurement",
            "verdict": "REJECT",
            "user": "@" * 400,  # the widest Helvetica glyph, in a narrow column
            "reason": "李雷 → " * 2000,
            "created_at": datetime(2026, 11, 3, tzinfo=UTC),
        },
    ]
    trail = [
        {
            "action": "REJECT",
            "from_status": "IN_REVIEW",
            "to_status": "DRAFT",
            "role": "finance",
            "actor": "fin",
            "reason": REJECTION_REASON,
            "created_at": datetime(2026, 11, 3, tzinfo=UTC),
        }
    ] * 3
    long_label = "W" * 300
    rows = [row(label=long_label, provider=long_label), row(rank=2, chosen=False)]
    return report(
        title="Capacity " + "x" * 190,
        rationale=EVIDENCE_NOTE,
        rows=rows,
        acceptance_criteria={"W" * 80: UNBROKEN_URL},
        checklist={"answered": 3, "total": 17, "answers": answers},
        approvals=approvals,
        audit_trail=trail,
    )


class TestLongText:
    def test_a_record_with_any_length_of_text_renders_with_a_visible_mark(self):
        data = decision_record_pdf(long_text_report())
        reader = PdfReader(io.BytesIO(data))
        text = "\n".join(p.extract_text() for p in reader.pages)
        assert HASH in text
        assert CELL_MARK in text
        # The 1 MB note and the rationale say how much of them was left out.
        assert "more characters" in text
        assert "full text on the record's page" in text
        assert len(reader.pages) < 20

    def test_a_short_text_is_left_whole(self):
        assert clip("short") == "short"

    def test_a_long_paragraph_is_cut_at_the_named_limit_with_the_count_left_out(self):
        text = "a" * (MAX_PARAGRAPH_CHARS + 10)
        assert clip(text) == "a" * MAX_PARAGRAPH_CHARS + " " + truncation_mark(10)
        assert "10 more characters" in truncation_mark(10)

    def test_a_seven_thousand_character_rejection_reason_renders_in_the_approvals(self):
        data = decision_record_pdf(
            report(
                approvals=[
                    {
                        "role": "finance",
                        "verdict": "REJECT",
                        "user": "fin",
                        "reason": REJECTION_REASON,
                        "created_at": datetime(2026, 11, 3, tzinfo=UTC),
                    }
                ]
            )
        )
        text = pdf_text(data)
        assert "data residency terms" in text
        assert CELL_MARK in text

    def test_a_paragraph_of_many_short_lines_is_cut_at_the_line_limit(self):
        text = "x\n" * 3000
        clipped = clip(text)
        assert clipped.count("\n") == MAX_PARAGRAPH_LINES
        assert clipped.endswith(truncation_mark(len(text) - 2 * MAX_PARAGRAPH_LINES - 1))
        pages = PdfReader(io.BytesIO(decision_record_pdf(report(rationale=text)))).pages
        assert len(pages) <= 5


class TestTheRecordsUnit:
    def test_a_record_frozen_before_scaled_units_reads_per_one_output(self):
        text = pdf_text(decision_record_pdf(report(unit="TOKEN")))
        assert "USD per accepted token" in text
        assert "Platform labour" in text

    def test_a_scaled_record_states_its_unit_and_the_chosen_rows_labour(self):
        chosen = row(
            effective_unit_cost="3.65",
            cost_lines={"gpu_compute": "1150.00", "platform_labour": "4600.00"},
            monthly_cost="5750.00",
        )
        data = report(
            unit="per 1M accepted tokens",
            rows=[chosen],
            chosen={**report()["chosen"], "row": chosen},
        )
        text = pdf_text(decision_record_pdf(data)).replace("\n", " ")
        assert "USD 3.65 per 1M accepted tokens" in text
        assert "USD 4,600.00 a month (80 % of the monthly cost)" in text

    def test_the_csv_repeats_the_unit_on_every_row(self):
        snapshot = {
            "candidate_table": {
                "currency": "EUR",
                "unit": "per 1k accepted images",
                "unit_scale": 1000,
                "rows": [row(), row()],
            }
        }
        parsed = list(csv.DictReader(io.StringIO(decision_record_csv(snapshot))))
        assert {(r["currency"], r["unit"]) for r in parsed} == {("EUR", "per 1k accepted images")}


CODE_NAMES = ("REALTIME_INFERENCE", "ttft_p95_ms", "ON_DEMAND", "ttft_target_ms", "APPROVE")


def quote(**overrides):
    base = {
        "id": 3,
        "provider": "Acme Cloud",
        "gpu": "h100-sxm5-80gb",
        "gpu_name": "NVIDIA H100 SXM5",
        "region": "eu-west",
        "pricing_term": "RESERVED_1Y",
        "hourly_price_per_gpu": "2.1000",
        "currency": "USD",
        "minimum_commitment_months": 12,
        "capex_per_gpu": None,
        "quote_date": "2026-10-20",
        "valid_until": "2026-12-31",
    }
    return {**base, **overrides}


def usd(text):
    """Money as apps.core.formatting writes it: the currency first, a no-break space."""
    return text.replace("USD ", "USD\u00a0").replace("EUR ", "EUR\u00a0")


class TestCommercialSummary:
    def test_a_record_frozen_before_the_quote_facts_says_not_recorded(self):
        facts = dict(commercial_summary(report()))  # no "quotes" in the report
        for label in ("Region", "Price per GPU-hour", "Quote date", "Valid until"):
            assert facts[label] == NOT_RECORDED, label
        assert facts["Minimum commitment"] == NOT_RECORDED
        assert facts["Contract value"].startswith(NOT_RECORDED)
        text = pdf_text(decision_record_pdf(report())).replace("\n", " ")
        assert "Region not recorded" in text

    def test_a_reserved_quote_states_price_dates_commitment_and_contract_value(self):
        # The provider bills 700 a month of the 1,000 all-in (labour and the rest are ours).
        chosen = row(
            pricing_term="RESERVED_1Y",
            monthly_cost="1000.00",
            vendor_monthly_cost="700.00",
            replicas=2,
            configuration={"paid_gpus": 2, "text": "2 GPUs (2 replicas x 1)"},
        )
        data = report(
            rows=[chosen],
            chosen={**report()["chosen"], "row": chosen},
            quotes=[quote()],
        )
        facts = dict(commercial_summary(data))
        assert facts["GPU"] == "NVIDIA H100 SXM5"
        assert facts["Quantity"] == "2 GPUs (2 replicas \u00d7 1)"
        assert facts["Pricing term"] == "Reserved 1 year"
        assert facts["Region"] == "eu-west"
        assert facts["Price per GPU-hour"] == usd("USD 2.10")
        assert facts["Valid until"] == "2026-12-31 (59 days left when frozen)"
        assert facts["Minimum commitment"] == "12 months"
        assert facts["Vendor bill a month"].startswith(usd("USD 700.00 (GPU-hours"))
        # What procurement signs: the vendor's bill over the commitment, not the all-in cost.
        assert facts["Contract value"] == usd(
            "USD 8,400.00 (vendor commitment: the vendor bill x the 12-month commitment)"
        )
        assert facts["All-in cost a month"].startswith(usd("USD 1,000.00"))
        assert facts["All-in cost, 12 months"] == usd("USD 12,000")
        assert facts["All-in cost, 36 months"] == usd("USD 36,000")

    def test_a_vendor_in_another_currency_is_shown_in_it_too(self):
        chosen = row(pricing_term="RESERVED_1Y", vendor_monthly_cost="1100.00")
        data = report(
            rows=[chosen],
            chosen={**report()["chosen"], "row": chosen},
            quotes=[quote(currency="EUR")],
            fx_rates=[{"currency": "EUR", "rate": "1.1", "as_of": "2026-11-01", "source": "ECB"}],
        )
        facts = dict(commercial_summary(data))
        assert facts["Vendor bill a month"].startswith(usd("USD 1,100.00 (= EUR 1,000.00)"))

    @pytest.mark.parametrize(
        ("layout", "expected"),
        [
            ("TP2xPP2", "TP2xPP2 (tensor parallel; pipeline parallel)"),
            ({"tp": 8, "pp": 1, "dep": 1, "replicas": 1}, "TP8 (tensor parallel)"),
        ],
    )
    def test_a_row_with_a_layout_states_it_in_words(self, layout, expected):
        chosen = row(layout=layout)
        facts = dict(commercial_summary(report(chosen={**report()["chosen"], "row": chosen})))
        assert facts["Layout"] == expected

    def test_a_row_without_a_layout_shows_none(self):
        assert "Layout" not in dict(commercial_summary(report()))

    def test_the_sensitivity_totals_are_used_when_they_hold_the_row(self):
        chosen = row(monthly_cost="1000.00")
        sensitivity = {
            "leading": [
                {
                    "key": "quote:3",
                    "totals": [
                        {"months": 12, "total": "12500.00"},
                        {"months": 36, "total": "36500.00"},
                    ],
                }
            ]
        }
        data = report(
            rows=[chosen], chosen={**report()["chosen"], "row": chosen}, sensitivity=sensitivity
        )
        facts = dict(commercial_summary(data))
        assert (facts["All-in cost, 12 months"], facts["All-in cost, 36 months"]) == (
            usd("USD 12,500"),
            usd("USD 36,500"),
        )

    def test_owned_hardware_is_valued_at_its_capex_in_the_quotes_currency_and_converted(self):
        chosen = row(
            pricing_term="OWNED",
            gpu_count=8,
            replicas=1,
            monthly_cost="9000",
            vendor_monthly_cost="6000",
            configuration={"paid_gpus": 8, "text": "8 GPUs (1 replica x 8)"},
        )
        owned = quote(pricing_term="OWNED", currency="EUR", capex_per_gpu="30000.00")
        data = report(
            rows=[chosen],
            chosen={**report()["chosen"], "row": chosen},
            quotes=[owned],
            fx_rates=[{"currency": "EUR", "rate": "1.1", "as_of": "2026-11-01", "source": "ECB"}],
        )
        facts = dict(commercial_summary(data))
        assert facts["Capex per GPU"] == usd("EUR 30,000 (= USD 33,000 at the frozen FX rate)")
        assert facts["Contract value"].startswith(
            usd("EUR 240,000 (= USD 264,000 at the frozen FX rate) (capex: 8 GPUs x EUR 30,000)")
        )

    def test_an_api_route_is_priced_per_token_with_no_commitment(self):
        api = row(
            candidate_kind="API_ROUTE",
            quote_id=None,
            api_route_id=5,
            gpu=None,
            gpu_count=None,
            replicas=None,
            pricing_term=None,
            api_model="model-1",
        )
        data = report(
            rows=[api],
            chosen={"kind": "api_route", "quote_id": None, "api_route_id": 5,
                    "label": "Acme - model-1", "provider": "Acme", "row": api, "evidence": None},
            api_routes=[{"id": 5, "provider": "Acme", "model": "model-1", "currency": "USD",
                         "input_price_per_mtok": "0.10", "output_price_per_mtok": "0.30"}],
        )  # fmt: skip
        facts = dict(commercial_summary(data))
        assert facts["Price per 1M tokens"] == usd("input USD 0.10, output USD 0.30")
        assert facts["Quote date"] == NOT_RECORDED  # frozen before routes kept their date
        assert facts["Commitment"] == "none (billed per token)"


class TestWhyItLost:
    UNIT = "per 1M accepted tokens"

    def test_a_dearer_row_costs_a_share_more(self):
        chosen = row(effective_unit_cost="2.00")
        assert why_it_lost(row(effective_unit_cost="2.24"), chosen, self.UNIT, report()) == (
            "costs 12 % more per 1M accepted tokens"
        )

    def test_a_row_that_misses_the_latency_target_says_which_target(self):
        failing = row(
            meets_constraints=False,
            why_not=["misses the p95 TTFT/ITL target"],
            p95_latency_ms="900",
        )
        text = why_it_lost(failing, row(), self.UNIT, report())
        assert text == (
            "misses the latency target: time to first token 500 ms (estimated p95 900 ms)"
        )

    def test_a_quote_without_an_fx_rate_is_not_costed(self):
        data = report(
            alternative_refs=[{"quote_id": 9, "api_route_id": None}],
            not_costed=[{"quote_id": 9, "reason": "no FX rate for JPY (to convert JPY into USD)"}],
            quotes=[quote(id=9, provider="Tokyo GPU KK", currency="JPY", region="ap-northeast-1")],
        )
        lost = alternatives_lost(data, self.UNIT)
        assert (
            lost[0]["label"] == "Tokyo GPU KK · NVIDIA H100 SXM5 · Reserved 1 year · ap-northeast-1"
        )
        assert lost[0]["reason"] == "not costed: no FX rate for JPY"

    def test_the_pdf_shows_no_code_names(self):
        text = pdf_text(decision_record_pdf(report()))
        assert [c for c in CODE_NAMES if c in text] == []
        assert "Real-time inference" in text
        assert "Time to first token target" in text
