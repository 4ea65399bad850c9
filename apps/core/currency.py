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
