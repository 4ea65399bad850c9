"""The embedded default used by ``make run``: SQLite, tasks in-process, DEBUG on."""

from .base import *  # noqa: F403
from .base import env

DEBUG = env.bool("DJANGO_DEBUG", default=True)
