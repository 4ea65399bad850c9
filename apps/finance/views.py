from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from apps.briefs.models import WorkloadBrief
from apps.briefs.selectors import brief_get_for_user
from apps.core.currency import BASE_CURRENCY
from apps.core.roles import FINANCE_EDITORS, has_role
from apps.decisions.selectors import checklist_completeness_by_quote

from . import charts
from .assumptions import (
    assumption_values,
    organisation_defaults,
    resolved_assumptions,
    self_managed_gpu_hours_now,
)
from .capacity import capacity_model_page
from .forms import MOVES, FinanceAssumptionsForm, FxRateForm, OrganisationAssumptionsForm
from .fx import fx_rates_applied, rate_text
from .labels import (
    gpu_name,
    name_price_sources,
    offer_labels,
    offers_in_words,
    quote_ids_in,
)
from .lines import (
    PLAN_WORDS,
    assumption_label,
    assumption_value,
    candidate_table_display,
    catalog_names,
    currency_first,
    dominant_assumption,
    dominant_assumption_field,
    labour_policy_text,
)
from .models import FinanceAssumptions, FxRate
from .selectors import ranking_for_brief
from .sensitivity import sensitivity_display
from .services import finance_assumptions_update, fx_rate_create
from .units import money_text, unit_for

# The page's table shows this many rows unless asked for every row (``?rows=all``, one click
# away): a screenful to scan plus the whole top of any ranking; thousands of rows make a page
# of megabytes that no browser scrolls comfortably. The CSV and the API always have every row.
FINANCE_PAGE_ROWS = 200
ALL_ROWS = "all"
# The charts plot the best-ranked this many candidates: the same screenful as the table, and a
# bounded figure (every row of a 5,000-row table made 3 MB of chart data on one page).
FINANCE_CHART_ROWS = FINANCE_PAGE_ROWS

# Every order keeps the rows that meet the brief (ranked) ahead of those that do not: a row that
# misses the brief is never on top, whatever the column sorted by.
SORTS = {
    "rank": lambda r: (r["rank"] is None, r["rank"] or 0),
    "unit_cost": lambda r: (
        r["rank"] is None,
        r["effective_unit_cost"] is None,
        float(r["effective_unit_cost"] or 0),
    ),
    "monthly_cost": lambda r: (r["rank"] is None, float(r["monthly_cost"])),
    "latency": lambda r: (
        r["rank"] is None,
        r["p95_latency_ms"] is None,
        float(r["p95_latency_ms"] or 0),
    ),
    "provider": lambda r: (r["rank"] is None, (r["provider"] or "").lower()),
}


def assumptions_gist(sources: dict[str, str]) -> str:
    """The collapsed assumptions section's one line: how many come from where ("2 set for this
    brief, 3 by the organisation, 20 built-in")."""
    counts = {"brief": 0, "organisation": 0, "built-in": 0}
    for name in MOVES:
        source = sources.get(name, "organisation")
        counts[source] = counts.get(source, 0) + 1
    parts = [
        f"{counts['brief']} set for this brief",
        f"{counts['organisation']} by the organisation",
        f"{counts['built-in']} built-in",
    ]
    return f"{len(MOVES)} assumptions: " + ", ".join(parts)


def _save_form(
    request: HttpRequest, form: FinanceAssumptionsForm, brief: WorkloadBrief | None
) -> bool:
    if not form.is_valid():
        return False
    fields = {name: form.cleaned_data[name] for name in form.Meta.fields}
    try:
        finance_assumptions_update(brief=brief, **fields)
    except ValidationError as exc:
        for field, errors in exc.message_dict.items():
            for error in errors:
                form.add_error(field if field in form.fields else None, error)
        return False
    messages.success(request, "Assumptions saved; the candidate table is being recomputed.")
    return True


@login_required
@require_http_methods(["GET", "POST"])
def brief_finance_page(request: HttpRequest, pk: int) -> HttpResponse:
    brief = brief_get_for_user(request.user, pk)
    can_edit = has_role(request.user, FINANCE_EDITORS)
    override = FinanceAssumptions.objects.filter(brief=brief).first()
    form = FinanceAssumptionsForm(request.POST or None, instance=override)
    if request.method == "POST":
        if not can_edit:
            raise PermissionDenied("Only the finance role changes assumptions.")
        if _save_form(request, form, brief):
            return redirect("briefs:finance", pk=brief.pk)
    sort = request.GET.get("sort", "rank")
    sort = sort if sort in SORTS else "rank"
    show_all = request.GET.get("rows") == ALL_ROWS
    # The ranking's first rows are all the default view needs; another order or every row
    # needs the whole table.
    whole = show_all or sort != "rank"
    ranking = ranking_for_brief(brief, limit=None if whole else FINANCE_PAGE_ROWS)
    ranked = ranking["rows"]  # in ranking order
    rows = sorted(ranked, key=SORTS[sort])
    shown = rows if show_all else rows[:FINANCE_PAGE_ROWS]
    assumptions = resolved_assumptions(brief)
    values, sources = assumption_values(assumptions), assumptions.sources
    # One unit for the whole page: the rows' unit costs are in it (apps.finance.units).
    currency, unit = ranking["currency"] or "USD", ranking["unit"] or "per accepted output"
    figures = {}
    if rows:
        # The charts show the best-ranked candidates whatever the table's order.
        best = ranked[:FINANCE_CHART_ROWS]
        # Each candidate named once in words for every chart (no ids or slugs).
        charts.label_rows(best, catalog_names(best)[0])
        figures = {
            "unit-cost-chart": charts.unit_cost_figure(best, unit, currency),
            "latency-chart": charts.cost_vs_latency_figure(best, currency, unit),
            "breakdown-chart": charts.cost_breakdown_figure(best, currency),
        }
        utilization = charts.utilization_figure(
            ranking["capacity_model"], currency, gpu_name(ranking["capacity_model"].get("gpu"))
        )
        if utilization:
            figures["utilization-chart"] = utilization
    # Shown open: the unit costs and the trade-off against latency; the others in their
    # collapsed sections (the utilization curve with rent / reserve / buy, the cost lines in
    # their own), so that the page reads in under three screens before its details.
    placed = {"breakdown-chart": "breakdown_figures", "utilization-chart": "capacity_figures"}
    sections: dict[str, list[tuple[str, str, charts.PlotlyJson]]] = {
        "figures": [], "breakdown_figures": [], "capacity_figures": []
    }  # fmt: skip
    for name, figure in figures.items():
        sections[placed.get(name, "figures")].append((name, f"{name}-data", figure))
    # Each row carries its own figures (in words and formatted) so that the template only
    # loops over a row's cells (no lookups across rows); one query for every checklist.
    table_unit = unit_for(ranking["success_unit"])
    outputs = table_unit.outputs if table_unit else "accepted outputs"
    line_names, line_headers = candidate_table_display(
        shown,
        currency=currency,
        values=assumptions,
        outputs=outputs,
        output=(table_unit.output if table_unit else "output").removeprefix("accepted "),
        success_unit=ranking["success_unit"] or "",
    )
    checklist = checklist_completeness_by_quote(
        [r["quote_id"] for r in shown if r["quote_id"]], team_id=brief.team_id
    )
    for row in shown:
        row["checklist"] = checklist.get(row["quote_id"]) if row["quote_id"] else None
    leader = next((r for r in ranked if r["rank"] is not None), None)
    capacity = capacity_model_page(ranking["capacity_model"])
    # The not-costed entries, the capacity options and the rows' price sources name quotes and
    # routes by id (as the JSON does); the page names them in words (two queries for all).
    offered = [*ranking["not_costed"], *capacity["capacity_options"], *shown]
    plan_quotes = [
        i for p in ranking["serving_plans_not_listed"] for i in quote_ids_in(p.get("reason", ""))
    ]
    quote_words, route_words = offer_labels(
        [*(o.get("quote_id") for o in offered), *plan_quotes],
        [o.get("api_route_id") for o in offered],
    )
    name_price_sources(shown, quote_words, route_words)
    not_costed = [
        {
            **entry,
            "label": quote_words.get(entry.get("quote_id") or 0)
            or route_words.get(entry.get("api_route_id") or 0)
            or "a quote no longer listed",
        }
        for entry in ranking["not_costed"]
    ]
    capacity["capacity_gpu"] = gpu_name(ranking["capacity_model"].get("gpu"))
    # The engine's sentences with their amounts written as the page writes money.
    capacity["capacity_rationale"] = [
        currency_first(line) for line in ranking["capacity_model"].get("rationale") or []
    ]
    capacity["capacity_break_evens"] = [
        currency_first(b.get("explanation") or "")
        for b in ranking["capacity_model"].get("break_evens") or []
    ]
    # The comparison speaks of rank 1 (apps.finance.capacity): its own GPU, or for a winning
    # API route the best GPU candidate's.
    winner_key = ranking["capacity_model"].get("winner") or ""
    capacity["capacity_about_winner"] = not winner_key.startswith("api_route:")
    for option in capacity["capacity_options"]:
        option["source"] = (
            quote_words.get(option.get("quote_id") or 0)
            or route_words.get(option.get("api_route_id") or 0)
            or "—"
        )
    return render(
        request,
        "finance/brief_finance.html",
        {
            "brief": brief,
            "ranking": ranking,
            "rows": shown,
            # Rows that meet the brief (ranked) first, then those that cannot, with why.
            "ranked_rows": [r for r in shown if r["rank"] is not None],
            "unmet_rows": [r for r in shown if r["rank"] is None],
            "total_rows": ranking["total_rows"],
            "show_all": show_all,
            "rows_param": f"&rows={ALL_ROWS}" if show_all else "",
            "line_names": line_names,
            "line_headers": line_headers,
            "sort": sort,
            "unit_cost_label": unit,
            # The energy column's per-output figure names the output without "accepted".
            "table_output": (table_unit.output if table_unit else "output").removeprefix(
                "accepted "
            ),
            "outputs": outputs,
            "labour_policy": labour_policy_text(values, sources),
            "leader_warning": dominant_assumption(leader, currency) if leader else None,
            "leader_assumption": dominant_assumption_field(leader) if leader else None,
            "warned_rows": sum(1 for r in shown if r["warning"]),
            "assumptions": [
                (
                    name,
                    assumption_label(name),
                    assumption_value(
                        name, values[name], str(values.get("reporting_currency") or "")
                    ),
                    sources.get(name, "organisation"),
                    moves,
                )
                for name, moves in MOVES.items()
            ],
            "form": form,
            "can_edit": can_edit,
            **sections,
            "assumptions_gist": assumptions_gist(sources),
            # "What would change the winner" (apps.finance.sensitivity, finance/_sensitivity.html)
            "sensitivity": sensitivity_display(ranking["sensitivity"]),
            "tornado": charts.tornado_figure(ranking["sensitivity"]),
            "checklist_complete": checklist,  # (answered, total) per shown quote id
            "not_costed": not_costed,
            "serving_plans": [
                {
                    **p,
                    "label": PLAN_WORDS.get(p.get("candidate_kind"), "Serving plan"),
                    "reason": offers_in_words(p.get("reason", ""), quote_words),
                }
                for p in ranking["serving_plans_not_listed"]
            ],
            **capacity,
        },
    )


@login_required
@require_http_methods(["GET", "POST"])
def organisation_assumptions_page(request: HttpRequest) -> HttpResponse:
    can_edit = has_role(request.user, FINANCE_EDITORS)
    form = OrganisationAssumptionsForm(request.POST or None, instance=organisation_defaults())
    if request.method == "POST":
        if not can_edit:
            raise PermissionDenied("Only the finance role changes assumptions.")
        if _save_form(request, form, None):
            return redirect("finance:assumptions")
    briefs, gpu_hours = self_managed_gpu_hours_now()
    return render(
        request,
        "finance/assumptions.html",
        {
            "form": form,
            "can_edit": can_edit,
            "gpu_hours_now": money_text(gpu_hours).removesuffix(".00") if briefs else None,
            "gpu_hours_briefs": briefs,
        },
    )


@login_required
@require_http_methods(["GET", "POST"])
def fx_rates_page(request: HttpRequest) -> HttpResponse:
    """Finance's FX-rate table: every rate entered, and a form to add one (finance only)."""
    can_edit = has_role(request.user, FINANCE_EDITORS)
    form = FxRateForm(request.POST or None)
    if request.method == "POST":
        if not can_edit:
            raise PermissionDenied("Only the finance role adds FX rates.")
        if form.is_valid():
            try:
                fx_rate_create(created_by=request.user, **form.cleaned_data)
            except ValidationError as exc:
                for field, errors in exc.message_dict.items():
                    for error in errors:
                        form.add_error(field if field in form.fields else None, error)
            else:
                messages.success(request, "Rate added; every candidate table is being recomputed.")
                return redirect("finance:fx-rates")
    applied = {r.id for r in fx_rates_applied().values()}
    rates = list(FxRate.objects.all())
    for rate in rates:
        rate.applies = rate.pk in applied  # type: ignore[attr-defined]
        rate.shown = rate_text(rate.rate)  # type: ignore[attr-defined]
    return render(
        request,
        "finance/fx_rates.html",
        {"form": form, "can_edit": can_edit, "rates": rates, "base": BASE_CURRENCY},
    )
