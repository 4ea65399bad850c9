"""Uploaded files are private: stored under random names, served only by views that check
login and team first, and always as a download that no browser renders or sniffs.

Nothing serves MEDIA_ROOT directly (no /media/ route, not even under DEBUG): a benchmark run's
raw file and a checklist answer's evidence file come only from their own views, which look the
row up through the same team-scoped selector as its page (another team's file answers 404).
"""

import hashlib
import os
import uuid
from typing import Any

from django.core.exceptions import SuspiciousFileOperation
from django.db.models.fields.files import FieldFile
from django.http import FileResponse, Http404
from django.utils import timezone
from django.utils.deconstruct import deconstructible
from django.utils.text import get_valid_filename

#: Every stored file is served as this type, never as the type the uploader declared or its
#: extension suggests: a browser then neither renders it (no HTML or SVG from an upload runs
#: on our origin) nor guesses (nosniff).
PRIVATE_FILE_CONTENT_TYPE = "application/octet-stream"
#: The length of the original-filename fields (the name a download is offered under).
DOWNLOAD_NAME_MAX_CHARS = 100
#: Of which the extension keeps at most this many characters (".json", ".parquet", ".tar.gz").
DOWNLOAD_NAME_EXT_CHARS = 10


@deconstructible
class RandomName:
    """``upload_to`` for private files: ``<prefix>/<year>/<month>/<uuid4 hex>``.

    The uploaded filename plays no part in the stored name (no path tricks, nothing to guess:
    122 random bits); keep it in a separate field for the download's filename instead."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix

    def __call__(self, instance: Any, filename: str) -> str:
        return f"{self.prefix}/{timezone.now():%Y/%m}/{uuid.uuid4().hex}"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RandomName) and other.prefix == self.prefix

    def __hash__(self) -> int:
        return hash(self.prefix)


def file_size_and_sha256(file: Any) -> tuple[int, str]:
    """(bytes, SHA-256 hex) of an uploaded or stored file, read in chunks from its start (the
    file is left at its start for whoever reads it next)."""
    digest, size = hashlib.sha256(), 0
    file.seek(0)
    for chunk in file.chunks() if hasattr(file, "chunks") else iter(lambda: file.read(65536), b""):
        digest.update(chunk)
        size += len(chunk)
    file.seek(0)
    return size, digest.hexdigest()


def download_filename(uploaded: str | None, *, default: str) -> str:
    """The name a file is offered under: the uploaded name without any directory, control
    character or character outside letters, digits, ``-_.``, and of bounded length."""
    base = (uploaded or "").replace("\\", "/").rsplit("/", 1)[-1]
    base = "".join(ch for ch in base if ch.isprintable())
    stem, ext = os.path.splitext(base)
    ext = ext[:DOWNLOAD_NAME_EXT_CHARS]
    try:
        return get_valid_filename(stem[: DOWNLOAD_NAME_MAX_CHARS - len(ext)] + ext)
    except SuspiciousFileOperation:  # nothing usable left ("", ".", "..")
        return default


def private_file_response(stored: FieldFile, *, filename: str) -> FileResponse:
    """A stored file as an attachment of a type no browser renders; 404 if it is missing."""
    if not stored:
        raise Http404("No file.")
    try:
        handle = stored.open("rb")
    except FileNotFoundError:
        raise Http404("The file is missing from storage.") from None
    response = FileResponse(
        handle, as_attachment=True, filename=filename, content_type=PRIVATE_FILE_CONTENT_TYPE
    )
    # Also set by SecurityMiddleware (SECURE_CONTENT_TYPE_NOSNIFF); here so that the download
    # does not depend on that setting.
    response["X-Content-Type-Options"] = "nosniff"
    # A private document: no shared cache keeps it, and the browser does not store it either.
    response["Cache-Control"] = "private, no-store"
    return response
