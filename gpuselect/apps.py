"""The project's own AppConfig overrides."""

from django.contrib.staticfiles.apps import StaticFilesConfig as DjangoStaticFilesConfig


class StaticFilesConfig(DjangoStaticFilesConfig):
    """collectstatic leaves out the .gz/.br copies committed beside a vendored bundle
    (static/vendor/plotly/): production's CompressedManifestStaticFilesStorage writes its own
    beside the hashed names, where WhiteNoise looks for them; the committed ones serve only
    development and tests, straight from the finders."""

    ignore_patterns = [*DjangoStaticFilesConfig.ignore_patterns, "*.gz", "*.br"]
