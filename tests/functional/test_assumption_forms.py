"""The finance assumption forms (issue 27): shares shown and typed as percentages, every
field labelled with its unit, and what a blank field gives shown beside it."""

from decimal import Decimal

import pytest

from apps.core.roles import Role
from apps.finance.assumptions import organisation_defaults
from apps.finance.forms import FinanceAssumptionsForm, OrganisationAssumptionsForm
from apps.finance.models import FinanceAssumptions

pytestmark = pytest.mark.django_db


def test_the_organisation_form_shows_each_built_in_default():
    form = OrganisationAssumptionsForm()
    assert str(form["retry_rate"].label) == "Retry rate (%)"
    assert "Blank: 2\u00a0% (built in)." in str(form["retry_rate"].help_text)
    assert "Blank: 1.56 (built in)." in str(form["pue"].help_text)
    assert form.fields["pue"].widget.attrs["placeholder"] == "1.56"
    assert form.fields["retry_rate"].widget.attrs["placeholder"] == "2"
    assert "In the reporting currency (USD)." in str(form["labour_rate_per_hour"].help_text)


def test_a_stored_share_shows_as_a_percentage_not_a_fraction(client, make_user):
    FinanceAssumptions.objects.create(is_default=True, retry_rate=Decimal("0.0300"))
    client.force_login(make_user(Role.FINANCE))
    html = client.get("/finance/assumptions/").content.decode()
    box = html[html.index('name="retry_rate"') - 200 : html.index('name="retry_rate"') + 120]
    assert 'value="3"' in box and "0.0300" not in box


def test_the_organisation_form_takes_a_percentage(client, make_user):
    client.force_login(make_user(Role.FINANCE))
    response = client.post("/finance/assumptions/", {"retry_rate": "3", "failure_rate": "0.5"})
    assert response.status_code == 302
    default = organisation_defaults()
    assert (default.retry_rate, default.failure_rate) == (Decimal("0.03"), Decimal("0.005"))


def test_a_briefs_override_says_it_inherits_the_organisation_default():
    FinanceAssumptions.objects.create(is_default=True, retry_rate=Decimal("0.04"))
    form = FinanceAssumptionsForm()
    assert "Blank: 4\u00a0% (the organisation default)." in str(form["retry_rate"].help_text)
    assert "Blank: 1\u00a0% (the organisation default)." in str(form["failure_rate"].help_text)
