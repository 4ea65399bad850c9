"""The checklist's evidence and warnings in words for the decision PDF
(apps.decisions.evidence_words)."""

from apps.decisions.evidence_words import acknowledgement_words, evidence_words, warning_lines

SHA = "2373ab5b3fdcb0b96f063acd5ce5d7a8e3694e61449ee527e811ec2e9c8bb6cc"


def test_an_answer_reads_its_text_link_and_file_with_size_and_hash():
    answer = {
        "evidence_text": "SOC 2 type II, 2026",
        "evidence_link": "https://trust.example/soc2",
        "evidence_file": {"name": "SOC2.pdf", "bytes": 74_752, "sha256": SHA},
        "evidence": "SOC 2 type II, 2026",
    }
    assert evidence_words(answer) == (
        "SOC 2 type II, 2026 · https://trust.example/soc2 · file SOC2.pdf (73.0 KB, "
        "SHA-256 2373ab5b3fdcb0b9…)"
    )


def test_a_record_frozen_before_the_parts_reads_its_one_string():
    assert evidence_words({"evidence": "Order form, section 3"}) == "Order form, section 3"
    assert evidence_words({"evidence_text": "", "evidence_link": "", "evidence": ""}) == ""


def test_warnings_and_acknowledgements_read_as_sentences():
    warnings = [{"question": "se_compliance", "text": "Are the certifications current?",
                 "answer": "NO", "evidence": "ISO only"}]  # fmt: skip
    assert warning_lines(warnings) == ["Are the certifications current? No: ISO only"]
    assert acknowledgement_words({"acknowledged_warnings": ["se_compliance", "co_sla"]}) == (
        "acknowledged 2 checklist warnings"
    )
    assert acknowledgement_words({"acknowledged_warnings": []}) == ""
