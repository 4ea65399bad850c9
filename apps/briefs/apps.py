from django.apps import AppConfig


class BriefsConfig(AppConfig):
    name = "apps.briefs"
    label = "briefs"
