"""Decision records and the procurement checklist, relative to /api/v1/."""

from django.urls import path

from . import views

urlpatterns = [
    path(
        "decision-records/",
        views.DecisionRecordListCreateApi.as_view(),
        name="decision-record-list",
    ),
    path(
        "decision-records/<int:pk>/",
        views.DecisionRecordDetailApi.as_view(),
        name="decision-record-detail",
    ),
    path(
        "decision-records/<int:pk>/submit",
        views.DecisionRecordSubmitApi.as_view(),
        name="decision-record-submit",
    ),
    path(
        "decision-records/<int:pk>/approve",
        views.DecisionRecordApproveApi.as_view(),
        name="decision-record-approve",
    ),
    path(
        "decision-records/<int:pk>/reject",
        views.DecisionRecordRejectApi.as_view(),
        name="decision-record-reject",
    ),
    path(
        "decision-records/<int:pk>/supersede",
        views.DecisionRecordSupersedeApi.as_view(),
        name="decision-record-supersede",
    ),
    path(
        "decision-records/<int:pk>/refresh",
        views.DecisionRecordRefreshApi.as_view(),
        name="decision-record-refresh",
    ),
    path(
        "decision-records/<int:pk>/verify",
        views.DecisionRecordVerifyApi.as_view(),
        name="decision-record-verify",
    ),
    path(
        "decision-records/<int:pk>/export.csv",
        views.DecisionRecordCsvApi.as_view(),
        name="decision-record-csv",
    ),
    path(
        "decision-records/<int:pk>/export.pdf",
        views.DecisionRecordPdfApi.as_view(),
        name="decision-record-pdf",
    ),
    path(
        "checklist/quotes/<int:quote_id>/",
        views.QuoteChecklistApi.as_view(),
        name="quote-checklist",
    ),
    path(
        "checklist/quotes/<int:quote_id>/<slug:question>/evidence",
        views.QuoteChecklistEvidenceApi.as_view(),
        name="quote-checklist-evidence",
    ),
]
