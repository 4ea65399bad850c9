"""The production image builds: the Dockerfile's collectstatic step, run exactly as written
(its env and its command, parsed from the Dockerfile so the two cannot drift), passes the
production settings' own checks."""

import os
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCKERFILE = ROOT / "Dockerfile"


def run_instructions(text: str) -> list[str]:
    """Each RUN instruction of a Dockerfile, its continuation lines joined."""
    instructions, current = [], ""
    for line in text.splitlines():
        stripped = line.strip()
        if not current and not stripped.startswith("RUN "):
            continue
        current += " " + stripped.removesuffix("\\").strip()
        if not stripped.endswith("\\"):
            instructions.append(current.strip().removeprefix("RUN").strip())
            current = ""
    return instructions


def collectstatic_step() -> tuple[dict[str, str], list[str]]:
    """The env assignments and the command of the RUN line that runs collectstatic."""
    (line,) = [r for r in run_instructions(DOCKERFILE.read_text()) if "collectstatic" in r]
    words = shlex.split(line)
    env = {}
    while words and "=" in words[0] and not words[0].startswith("-"):
        name, value = words.pop(0).split("=", 1)
        env[name] = value
    return env, words


class TestDockerfileCollectstatic:
    def test_the_parser_finds_the_step_with_production_settings(self):
        env, command = collectstatic_step()
        assert env["DJANGO_SETTINGS_MODULE"] == "gpuselect.settings.production"
        assert command[:3] == ["python", "manage.py", "collectstatic"]

    def test_the_step_as_written_exits_0(self, tmp_path):
        env, command = collectstatic_step()
        static_root = tmp_path / "static"
        # The image installs the project's dependencies only, which do not include brotli (the
        # dev tools pull it in here): hide it, as in the image. whitenoise then compresses with
        # gzip alone, seconds instead of minutes of brotli on plotly.js and Swagger UI.
        no_brotli = tmp_path / "no-brotli"
        no_brotli.mkdir()
        (no_brotli / "brotli.py").write_text('raise ImportError("not in the image")\n')
        result = subprocess.run(  # noqa: S603 - the Dockerfile's own command, our manage.py
            [sys.executable, *command[1:]],
            cwd=ROOT,
            # Only what the image build has: PATH for the interpreter, the step's own env,
            # and a static root in a temporary folder instead of /app/staticfiles.
            env={
                "PATH": os.environ.get("PATH", ""),
                "PYTHONPATH": str(no_brotli),
                **env,
                "DJANGO_STATIC_ROOT": str(static_root),
            },
            capture_output=True,
            text=True,
            check=False,
        )
        assert result.returncode == 0, result.stderr[-2000:]
        assert (static_root / "staticfiles.json").exists()  # the manifest whitenoise serves from
