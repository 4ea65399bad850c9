"""The decision report's one reader (apps.decisions.report_data.report_of): a record frozen by
an older build, missing keys, is read with its defaults, and the PDF's words come from it."""

from apps.decisions.report import build_document, commercial_summary
from apps.decisions.report_data import report_of

# A candidate row as the first snapshots froze it: no configuration, vendor bill, energy or
# label of its own.
OLD_ROW = {
    "rank": 1,
    "candidate_kind": "GPU",
    "provider": "Acme Cloud",
    "gpu": "h100-sxm5-80gb",
    "gpu_count": 2,
    "replicas": 3,
    "pricing_term": "ON_DEMAND",
    "quote_id": 3,
    "api_route_id": None,
    "monthly_cost": "3650.00",
    "effective_unit_cost": "0.00000365",
    "meets_constraints": True,
}
OLD_QUOTE = {"id": 3, "provider": "Acme Cloud", "gpu": "h100-sxm5-80gb", "currency": "USD"}


def old_report(**overrides):
    base = {
        "id": 1,
        "title": "Old record",
        "currency": "USD",
        "unit": "TOKEN",
        "rows": [OLD_ROW],
        "chosen": {"kind": "quote", "quote_id": 3, "label": "Acme", "row": OLD_ROW},
        "quotes": [OLD_QUOTE],
    }
    return {**base, **overrides}


class TestReportOf:
    def test_a_row_frozen_without_a_configuration_pays_for_its_replicas_gpus(self):
        row = report_of(old_report()).rows[0]
        assert row.paid_gpus is None  # not frozen: the words work it out from the row
        assert row.gpus_text == "6 GPUs (3 replicas \u00d7 2)"
        assert row.vendor_monthly_cost is None
        assert row.why_not == ()
        assert row.platform_labour is None

    def test_a_row_without_a_label_is_labelled_among_the_rows(self):
        row = report_of(old_report()).rows[0]
        assert row.label == "Acme Cloud · h100-sxm5-80gb · On demand"

    def test_the_chosen_row_is_the_tables_own_row(self):
        report = report_of(old_report())
        assert report.chosen.row is report.rows[0]

    def test_a_quote_frozen_without_its_commitment_or_end_date_says_so(self):
        quote = report_of(old_report()).quotes[3]
        assert quote.commitment_frozen is False
        assert quote.valid_until_frozen is False
        frozen = report_of(old_report(quotes=[{**OLD_QUOTE, "minimum_commitment_months": 0}]))
        assert frozen.quotes[3].commitment_frozen is True

    def test_keys_missing_from_the_report_read_as_none_or_empty(self):
        report = report_of({})
        assert report.rows == ()
        assert report.chosen.row is None
        assert report.alternative_refs is None  # a report from before alternative_refs
        assert report.checklist.answers == ()
        assert report.leading == ()


class TestAnOldRecordRenders:
    def test_its_commercial_summary_says_what_was_not_recorded(self):
        facts = dict(commercial_summary(old_report()))
        assert facts["Vendor bill a month"] == "not recorded"
        assert facts["Contract value"] == "not recorded (the quote's commitment was not frozen)"
        assert "Quantity" not in facts  # the GPUs paid for were not frozen

    def test_its_document_builds_from_a_report_missing_every_optional_key(self):
        document = build_document(old_report())
        headings = [s.heading for s in document.sections]
        assert headings[:2] == ["Commercial summary", "Decision"]
        assert "Owned hardware (capex inputs)" not in headings
        assert "What would change the decision" not in headings
