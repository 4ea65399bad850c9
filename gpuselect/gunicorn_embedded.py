"""gunicorn's settings for the embedded default: what ``make run`` serves through.

``make run`` starts ``gunicorn --config python:gpuselect.gunicorn_embedded --bind
127.0.0.1:$(PORT)`` with ``gpuselect.settings.local`` (SQLite, tasks in-process, DEBUG off);
``gpuselect.embedded_server.command`` builds the same line for the tests and bench scripts.
A production WSGI server rather than Django's development server: a body the app refuses
(the 413 of apps.core.middleware) is not read, gunicorn drains at most 64 KiB of it before it
closes the connection, and no debug page is ever shown. ``make dev`` keeps the development
server (autoreload, DEBUG on).

One process with threads, not several processes:
- SQLite takes one writer at a time whatever the process count, so more processes add no
  write capacity, only more connections queueing for the write lock (WAL lets the readers
  proceed beside it: gpuselect/settings/base.py);
- the embedded default keeps its sign-in and API throttle counters in the process's memory
  (LocMemCache), which several processes would each count apart, multiplying the limits;
- each process runs its own in-process sweeper (apps.finance.tasks), one is enough.
"""

# The app, its settings module given by the environment (manage.py's default otherwise).
wsgi_app = "gpuselect.wsgi:application"

workers = 1
worker_class = "gthread"
# Requests served at once. 8: the team of writers the embedded default is sized and tested
# for (tests/integration/test_embedded_concurrency.py: 8 concurrent writers, no error). A
# ninth request waits in gunicorn's queue, holding no database lock, instead of adding to the
# writers already waiting on SQLite's (whose busy timeout is 20 s, settings/base.py).
threads = 8
# Seconds a worker may stay silent before gunicorn restarts it. With gthread the worker's main
# loop answers while its threads work, so this bounds a hung worker, not a long request; 120 s
# is the production shape's figure (scripts/fuzz-live, docs/design.md).
timeout = 120
# Seconds Ctrl-C gives requests in flight to finish.
graceful_timeout = 10
# Seconds an idle keep-alive connection stays open (gunicorn's default is 2; a browser opening
# a page's scripts and styles reuses its connections within that).
keepalive = 5
# One line a request on the terminal, as the development server prints.
accesslog = "-"
errorlog = "-"
loglevel = "info"
# The embedded default is reached directly, never behind a proxy: X-Forwarded-* headers are
# not believed from anyone, so a client cannot claim https.
forwarded_allow_ips = ""
