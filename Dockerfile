FROM python:3.13-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
WORKDIR /app
COPY pyproject.toml ./
RUN pip install --no-cache-dir . && pip uninstall -y gpuselect
COPY . .
RUN DJANGO_SETTINGS_MODULE=gpuselect.settings.production DJANGO_SECRET_KEY=build-only \
    DJANGO_ALLOWED_HOSTS=localhost DATABASE_URL=postgres://u@h/d CELERY_BROKER_URL=redis://h \
    python manage.py collectstatic --noinput
RUN useradd --create-home app && chown -R app /app
USER app
EXPOSE 8000
