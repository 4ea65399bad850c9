"""Form pieces every page's forms share: a share typed and shown as a percentage, and the
field list of a form's errors for the top of its page (templates/partials/form_errors.html)."""

from decimal import Decimal
from typing import Any

from django import forms
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models

from . import formatting

HUNDRED = Decimal(100)


class PercentInput(forms.NumberInput):
    """A number box with a "%" after it (the page's CSS draws it from ``data-unit``)."""

    def __init__(self, attrs: dict[str, Any] | None = None) -> None:
        super().__init__({"step": "any", "inputmode": "decimal", "data-unit": "%", **(attrs or {})})


class PercentField(forms.DecimalField):
    """A share (0.03) typed and shown as a percentage (3): what a person writes "3 %" as.

    ``cleaned_data`` holds the share, so services, models and their validators see the stored
    value; the bounds are checked in percent first, so that a refusal reads "at most 99.99 %",
    never "≤ 0.9999" for a 3 that meant 3 %."""

    widget = PercentInput
    unit = "%"  # drawn after the box (templates/partials/field.html)

    def __init__(
        self,
        *,
        min_share: Decimal | None = None,
        max_share: Decimal | None = None,
        share_places: int = 4,
        **kwargs: Any,
    ) -> None:
        self.min_share, self.max_share = min_share, max_share
        kwargs.setdefault("max_digits", None)
        kwargs.setdefault("decimal_places", share_places)  # checked on the share (validators)
        kwargs.pop("min_value", None)
        kwargs.pop("max_value", None)
        super().__init__(**kwargs)

    def prepare_value(self, value: Any) -> Any:
        """The stored share as the box shows it: 0.0300 -> "3"."""
        if isinstance(value, Decimal | float | int) and not isinstance(value, bool):
            return formatting.number(Decimal(str(value)) * HUNDRED, 6).replace(",", "")
        return value

    def to_python(self, value: Any) -> Decimal | None:  # type: ignore[override]
        if isinstance(value, str):
            value = value.strip().removesuffix("%").strip()
        percent = super().to_python(value)
        return None if percent is None else percent / HUNDRED

    def validate(self, value: Any) -> None:
        super(forms.DecimalField, self).validate(value)  # required; not the digit checks
        if value in self.empty_values:
            return
        low, high = self.min_share, self.max_share
        if low is not None and value < low:
            raise forms.ValidationError(f"At least {formatting.percent(low, 6)}.", code="min_value")
        if high is not None and value > high:
            raise forms.ValidationError(f"At most {formatting.percent(high, 6)}.", code="max_value")

    def widget_attrs(self, widget: forms.Widget) -> dict[str, Any]:
        attrs = super().widget_attrs(widget)
        if self.min_share is not None:
            attrs["min"] = formatting.number(self.min_share * HUNDRED, 6)
        if self.max_share is not None:
            attrs["max"] = formatting.number(self.max_share * HUNDRED, 6)
        return attrs


def share_bounds(model_field: models.Field) -> tuple[Decimal | None, Decimal | None]:  # type: ignore[type-arg]
    """The (lowest, highest) share a model field's own validators allow."""
    low = high = None
    for validator in model_field.validators:
        if isinstance(validator, MinValueValidator):
            low = Decimal(str(validator.limit_value))
        elif isinstance(validator, MaxValueValidator):
            high = Decimal(str(validator.limit_value))
    return low, high


def percent_field(model: type[models.Model], name: str, **kwargs: Any) -> PercentField:
    """A PercentField for a model's share field, with its bounds, places and blankness."""
    field = model._meta.get_field(name)
    if not isinstance(field, models.Field):
        raise TypeError(f"{model.__name__}.{name} is not a field")
    low, high = share_bounds(field)
    kwargs.setdefault("required", not field.blank)
    kwargs.setdefault("label", str(field.verbose_name).capitalize())
    if "%" not in kwargs["label"]:
        kwargs["label"] = f"{kwargs['label']} (%)"  # the unit, in the label as every unit is
    if field.help_text:
        kwargs.setdefault("help_text", field.help_text)
    return PercentField(
        min_share=low,
        max_share=high,
        share_places=getattr(field, "decimal_places", 4) or 4,
        **kwargs,
    )


def form_error_list(*forms_: Any) -> list[dict[str, str]]:
    """Every error of the forms, in field order, for the top of the page: [{"label", "message",
    "anchor"}] where ``anchor`` is the field's input id ("" for an error of the whole form)."""
    out: list[dict[str, str]] = []
    for form in forms_:
        if form is None or not form.is_bound or not form.errors:
            continue
        for error in form.non_field_errors():
            out.append({"label": "", "message": str(error), "anchor": ""})
        for bound in form:
            for error in bound.errors:
                out.append(
                    {
                        "label": str(bound.label),
                        "message": str(error),
                        "anchor": bound.id_for_label or "",
                    }
                )
    return out


def plain_decimal(value: Decimal) -> str:
    """A stored decimal as a box shows it: its padding zeros dropped, never an exponent
    (6.9800 -> "6.98", 0.0000 -> "0", 1E+1 -> "10")."""
    text = format(value.normalize(), "f")
    return "0" if text in ("-0", "") else text


def trim_decimal_initials(form: forms.BaseForm) -> None:
    """Show a bound model's decimals as they were typed, not padded to the column's places
    (a quote's 6.98 reads "6.98", not "6.9800"). Percentages are PercentField's own."""
    for name, field in form.fields.items():
        value = form.initial.get(name)
        decimal = isinstance(field, forms.DecimalField) and not isinstance(field, PercentField)
        if decimal and isinstance(value, Decimal):
            form.initial[name] = plain_decimal(value)
