from django.contrib import admin

from .models import Team


@admin.register(Team)
class TeamAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    list_display = ("name", "slug", "created_at")
    prepopulated_fields = {"slug": ("name",)}
    filter_horizontal = ("members",)
