"""``{% back_url %}``: where a refusal page's "Go back" link points: the referring page when it
is on this site, else the home page (an outside or missing Referer is never linked)."""

from django import template
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme

register = template.Library()


@register.simple_tag(takes_context=True)
def back_url(context: template.Context) -> str:
    request = context.get("request")
    home = reverse("home")
    if request is None:
        return home
    referer = request.META.get("HTTP_REFERER", "")
    if referer and url_has_allowed_host_and_scheme(
        referer, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return referer
    return home
