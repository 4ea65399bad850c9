FROM python:3.13-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
WORKDIR /app
COPY pyproject.toml ./
RUN pip install --no-cache-dir . && pip uninstall -y gpuselect
COPY . .
# collectstatic under the production settings, which refuse a secret key under 32 characters.
# This key exists only for this one RUN (it is not an ENV of the image), signs nothing and is
# not a secret; the running container gets its own DJANGO_SECRET_KEY from the environment.
RUN DJANGO_SETTINGS_MODULE=gpuselect.settings.production \
    DJANGO_SECRET_KEY=build-only-for-collectstatic-never-used-at-runtime-0123456789 \
    DJANGO_ALLOWED_HOSTS=localhost DATABASE_URL=postgres://u@h/d CELERY_BROKER_URL=redis://h \
    python manage.py collectstatic --noinput
RUN useradd --create-home app && chown -R app /app
USER app
EXPOSE 8000
