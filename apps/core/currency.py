"""Currencies the product accepts (ISO 4217). Amounts are Decimals with a currency beside them."""

from django.db import models


class Currency(models.TextChoices):
    USD = "USD", "US dollar"
    EUR = "EUR", "Euro"
    GBP = "GBP", "Pound sterling"
    JPY = "JPY", "Japanese yen"
    CHF = "CHF", "Swiss franc"
    CAD = "CAD", "Canadian dollar"
    AUD = "AUD", "Australian dollar"
    SGD = "SGD", "Singapore dollar"
    INR = "INR", "Indian rupee"
    CNY = "CNY", "Chinese yuan"


# Decimal places of each currency's minor unit where it is not 2 (ISO 4217's list: the yen has
# none, so 380 JPY reads "JPY 380", never "380.00").
MINOR_UNITS: dict[str, int] = {Currency.JPY: 0}
DEFAULT_MINOR_UNITS = 2

# FX rates (apps.finance FxRate) are stored as units of this currency per one unit of another;
# it is also the built-in reporting currency (apps.finance.assumptions.FALLBACKS), so a brief
# that reports in it converts with one rate and any other with two (a cross rate).
BASE_CURRENCY = Currency.USD
# The currencies an FX rate can be entered for: every other one (the base currency's is 1).
FX_CURRENCIES = [code for code in Currency.values if code != BASE_CURRENCY]
