from django.urls import path

from . import views

app_name = "decisions"

urlpatterns = [
    path("", views.decision_list_page, name="list"),
    path("new/", views.decision_create_page, name="create"),
    path("<int:pk>/", views.decision_detail_page, name="detail"),
    path("<int:pk>/edit/", views.decision_edit_page, name="edit"),
    path("<int:pk>/submit/", views.decision_submit_action, name="submit"),
    path("<int:pk>/approve/", views.decision_approve_action, name="approve"),
    path("<int:pk>/reject/", views.decision_reject_action, name="reject"),
    path("<int:pk>/supersede/", views.decision_supersede_action, name="supersede"),
    path("<int:pk>/refresh/", views.decision_refresh_action, name="refresh"),
    path("<int:pk>/verify/", views.decision_verify_page, name="verify"),
    path("<int:pk>/export.csv", views.decision_export_csv, name="export-csv"),
    path("<int:pk>/export.pdf", views.decision_export_pdf, name="export-pdf"),
    path("checklist/quotes/<int:quote_id>/", views.quote_checklist_page, name="checklist"),
    path(
        "checklist/quotes/<int:quote_id>/<slug:question>/evidence",
        views.quote_checklist_evidence_download,
        name="checklist-evidence",
    ),
]
