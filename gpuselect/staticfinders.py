"""The static-file finder for STATICFILES_DIRS, leaving out pre-compressed copies when
collecting."""

from django.contrib.staticfiles.finders import FileSystemFinder

# The .gz/.br copies committed beside a vendored bundle (static/vendor/plotly/).
COMPRESSED_COPIES = ["*.gz", "*.br"]


class CollectWithoutCompressedCopies(FileSystemFinder):
    """FileSystemFinder, except that collectstatic (which lists with ignore patterns) leaves
    out the committed .gz/.br copies: production's CompressedManifestStaticFilesStorage writes
    its own beside the hashed names, where WhiteNoise looks for them. WhiteNoise lists with no
    patterns (``list(None)``) and so still finds the copies it serves in development and tests."""

    def list(self, ignore_patterns):
        if ignore_patterns is not None:
            ignore_patterns = [*ignore_patterns, *COMPRESSED_COPIES]
        return super().list(ignore_patterns)
