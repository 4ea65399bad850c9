"""The brief page shows what decides each workload type, and the form asks only for the
chosen type's fields, in plain words, refusing absurd inputs beside the field."""

import json
import re
from decimal import Decimal
from pathlib import Path

import pytest

from apps.briefs.models import WorkloadBrief
from apps.core.roles import Role
from apps.finance.services import candidate_table_recompute, candidate_tables_request_recompute
from tests.factories.briefs import BriefFactory
from tests.factories.quotes import QuoteFactory

from .test_pages import post_data

pytestmark = pytest.mark.django_db

HF_CONFIGS = Path(__file__).resolve().parents[1] / "data" / "hf_configs"

QLORA = {
    "workload_type": "QLORA_FINETUNE",
    "model_preset": "llama-3.1-70b",
    "weight_precision": "",
    "kv_cache_precision": "",
    "input_tokens_p50": None,
    "input_tokens_p95": None,
    "output_tokens_p50": None,
    "output_tokens_p95": None,
    "concurrency": None,
    "latency_percentile": "",
    "ttft_target_ms": None,
    "itl_target_ms": None,
    "success_unit": "TRAINING_RUN",
    "acceptance_rate": Decimal("1"),
    "duty_cycle": "EXPERIMENTAL",
    "hours_per_month": Decimal("100"),
    "tooling": [],
    "training_tokens": 10_000_000,
    "sequence_length": 512,
    "global_batch_tokens": 8192,
    "optimizer": "PAGED_ADAMW_8BIT",
    "sharding": "NONE",
    "activation_checkpointing": True,
    "lora_rank": 64,
    "checkpoint_interval_minutes": 60,
}


def qlora_brief(team, **changes):
    return BriefFactory(team=team, name="Guanaco-style QLoRA", **{**QLORA, **changes})


@pytest.fixture
def page(client, platform_user, team):
    client.force_login(platform_user)
    return client


def headers(html: str) -> list[str]:
    table = html[html.index('id="fit-table"') :]
    head = table[: table.index("</thead>")]
    return [re.sub(r"<[^>]+>", "", h).strip() for h in re.findall(r"<th[^>]*>(.*?)</th>", head)]


def rows(html: str) -> list[tuple[str, str]]:
    """(GPU slug, the row's HTML) in the table's order."""
    return re.findall(
        r'<tr class="[^"]*" data-fit="\w*" data-gpu="([^"]+)" data-meets="\w+">(.*?)</tr>',
        html,
        re.S,
    )


def cells(row_html: str) -> list[str]:
    return [
        re.sub(r"<[^>]+>", " ", c).split()
        for c in re.findall(r"<td[^>]*>(.*?)</td>", row_html, re.S)
    ]


class TestBriefPageByWorkloadType:
    def test_the_fit_help_speaks_of_the_workload_s_own_framework(self, catalog, page, team):
        def help_text(brief):
            html = page.get(f"/briefs/{brief.pk}/").content.decode()
            return html.split("<h2>Fit on every GPU</h2>")[1].split("</p>")[0]

        training = help_text(qlora_brief(team))
        assert "gpu-memory-utilization" not in training and "serving framework" not in training
        assert "training framework" in training and "micro-batch" in training
        serving = help_text(BriefFactory(team=team))
        assert "serving framework" in serving and "gpu-memory-utilization" in serving

    def test_a_qlora_brief_shows_time_to_train_not_serving_columns(self, catalog, page, team):
        brief = qlora_brief(team)
        html = page.get(f"/briefs/{brief.pk}/").content.decode()
        names = headers(html)
        assert "Time to train" in names
        assert "Training tokens/s per GPU" in names
        assert "Configuration" in names and "Layout" in names
        assert any(n.startswith("Memory per GPU") for n in names)
        assert "In flight per replica" not in names and "TTFT p95 (ms)" not in names
        times = re.findall(r'<td class="num time-to-train">([^<]*)</td>', html)
        assert len(times) == 31
        assert any(re.fullmatch(r"[\d,.]+ h( \([\d,.]+ days\))?", t) for t in times), times
        assert 'id="best-fit"' in html and "time to train" in html
        # The engine sizes a QLoRA base in NF4 whatever the checkpoint ships as.
        assert "Weights: NF4" in html
        assert "sized at BF16" not in html  # one statement of the weight precision
        # Serving facts a training brief has no use for are not shown.
        assert "<dt>Tokens per request</dt>" not in html and "<dt>Latency target</dt>" not in html

    def test_a_serving_brief_shows_latency_throughput_concurrency_and_context(
        self, catalog, page, team
    ):
        brief = BriefFactory(team=team)
        html = page.get(f"/briefs/{brief.pk}/").content.decode()
        names = headers(html)
        for wanted in (
            "Configuration", "Layout", "In flight per replica", "TTFT p95 (ms)",
            "Inter-token p95 (ms)", "Context (tokens)",
        ):  # fmt: skip
            assert wanted in names
        assert "Time to train" not in names
        # The longest context each GPU holds, with thousands separated.
        column = names.index("Context (tokens)")
        contexts = [cells(row)[column] for _slug, row in rows(html)]
        assert all(re.fullmatch(r"\d{1,3}(,\d{3})*|—", " ".join(c)) for c in contexts), contexts
        assert any("," in " ".join(c) for c in contexts)

    def test_a_media_brief_shows_images_per_hour(self, catalog, page, team):
        brief = BriefFactory(
            team=team,
            workload_type="IMAGE_GENERATION",
            model_preset="sdxl",
            weight_precision="FP16",
            kv_cache_precision="",
            input_tokens_p50=None,
            input_tokens_p95=None,
            output_tokens_p50=None,
            output_tokens_p95=None,
            image_width=1024,
            image_height=1024,
            success_unit="IMAGE",
            ttft_target_ms=None,
            itl_target_ms=None,
            latency_percentile="OFFLINE",
        )
        names = headers(page.get(f"/briefs/{brief.pk}/").content.decode())
        assert "Images per hour, all replicas" in names and "Latency p95 (ms)" in names
        assert "TTFT p95 (ms)" not in names and "Time to train" not in names

    def test_rows_meeting_the_brief_come_first_then_fewest_gpus(self, catalog, page, team):
        brief = qlora_brief(team)
        html = page.get(f"/briefs/{brief.pk}/").content.decode()
        found = rows(html)
        assert len(found) == 31
        order = []
        for _slug, row in found:
            c = cells(row)
            meets = c[2][:1] == ["yes"]
            order.append((not meets, int(c[3][0].replace(",", ""))))  # "18 GPUs (18 replicas x 1)"
        assert order == sorted(order), order
        assert order[0][0] is False  # some GPU meets a QLoRA brief on a 70B model

    def test_full_gpu_names_not_slugs(self, catalog, page, team):
        html = page.get(f"/briefs/{BriefFactory(team=team).pk}/").content.decode()
        assert re.search(r'<a href="/catalog/h100-sxm5-80gb/">[^<]*H100[^<]*</a>', html)
        assert ">h100-sxm5-80gb<" not in html

    def test_the_model_is_named_as_its_card_names_it(self, catalog, page, team):
        brief = qlora_brief(team)
        detail = page.get(f"/briefs/{brief.pk}/").content.decode()
        assert "<dt>Model</dt><dd>Llama 3.1 70B</dd>" in detail
        listing = page.get("/briefs/").content.decode()
        assert "<td>Llama 3.1 70B</td>" in listing and "<td>llama-3.1-70b</td>" not in listing

    def test_numbers_are_readable(self, catalog, page, team):
        html = page.get(f"/briefs/{BriefFactory(team=team).pk}/").content.decode()
        table = html[html.index('id="fit-table"') : html.index("</table>")]
        # No figure of more than four significant decimals, and thousands are separated.
        assert not re.search(r"\d\.\d{4,}", table)
        assert not re.search(r">\s*\d{5,}", table)

    def test_cost_per_run_is_shown_when_the_candidate_table_has_one(self, catalog, page, team):
        brief = qlora_brief(team)
        QuoteFactory()
        candidate_tables_request_recompute(brief_ids=[brief.pk])
        candidate_table_recompute(brief_id=brief.pk)
        html = page.get(f"/briefs/{brief.pk}/").content.decode()
        assert "Cost per run (USD)" in headers(html)
        h100 = dict(rows(html))["h100-sxm5-80gb"]
        assert re.search(r'<td class="num cost">[\d,.]+</td>', h100), h100
        other = dict(rows(html))["l4-24gb"]
        assert '<td class="num cost">—</td>' in other  # no quote, no cost

    def test_a_brief_not_yet_complete_still_shows_its_fit(self, catalog, page, team):
        # A what-if saved before its success unit is chosen: the fit table is the engine's, the
        # month of demand sized in the workload's usual unit; the candidate table waits.
        brief = BriefFactory(team=team, success_unit="", duty_cycle="", operating_boundary="")
        response = page.get(f"/briefs/{brief.pk}/")
        assert response.status_code == 200
        html = response.content.decode()
        assert rows(html), re.findall(r"engine-error\">([^<]*)", html)

    def test_without_a_candidate_table_no_cost_column(self, catalog, page, team):
        html = page.get(f"/briefs/{qlora_brief(team).pk}/").content.decode()
        assert not any(n.startswith("Cost per run") for n in headers(html))

    def test_a_pasted_quantized_config_says_where_its_precision_came_from(
        self, catalog, page, team
    ):
        config = json.loads((HF_CONFIGS / "deepseek-r1.json").read_text())
        brief = BriefFactory(
            team=team, model_preset="", model_hf_config=config, weight_precision=""
        )
        html = page.get(f"/briefs/{brief.pk}/").content.decode()
        assert re.search(r"Weights: FP8 \(from the config(&#x27;|')s quantization_config", html), (
            html[html.index('id="weight-precision"') :][:300]
        )


class TestBriefForm:
    def test_labels_are_words_with_units(self, catalog, page):
        html = page.get("/briefs/new/").content.decode()
        for label in (
            "Time to first token target (ms)",
            "KV heads",
            "Inter-token latency target (ms)",
            "Context window (tokens)",
            "Concurrent requests",
        ):
            assert f">{label}</label>" in html, label
        assert ">FP8</option>" in html and ">Fp8<" not in html
        assert "Ttft" not in html and "Kv heads" not in html

    def test_each_field_names_the_workload_types_it_belongs_to(self, catalog, page):
        html = page.get("/briefs/new/").content.decode()
        found = re.findall(r'data-workloads="([^"]*)" data-field="(\w+)"', html)
        by_field = {field: types.split() for types, field in found}
        assert "REALTIME_INFERENCE" not in by_field["training_tokens"]
        assert "QLORA_FINETUNE" in by_field["training_tokens"]
        assert by_field["lora_rank"] == ["LORA_FINETUNE", "QLORA_FINETUNE"]
        assert "QLORA_FINETUNE" not in by_field["ttft_target_ms"]
        assert by_field["name"] == []  # every type
        assert "js/brief_form.js" in html

    def test_a_serving_brief_drops_training_values_it_has_no_use_for(self, catalog, page, team):
        data = post_data(team, training_tokens="1000000", lora_rank="16")
        response = page.post("/briefs/new/", data)
        assert response.status_code == 302, response.context["form"].errors
        brief = WorkloadBrief.objects.get()
        assert brief.training_tokens is None and brief.lora_rank is None

    def test_p95_below_p50_says_so_in_words_beside_the_field(self, catalog, page, team):
        response = page.post(
            "/briefs/new/", post_data(team, input_tokens_p50="4000", input_tokens_p95="100")
        )
        errors = response.context["form"].errors
        assert "at least the p50" in errors["input_tokens_p95"][0]
        assert "__all__" not in errors
        html = response.content.decode()
        assert "brief_input_p95_at_least_p50" not in html
        assert "Constraint" not in html
        assert WorkloadBrief.objects.count() == 0

    @pytest.mark.parametrize(
        ("changes", "field", "words"),
        [
            # Llama 3.1 8B reads 131,072 tokens: a 900k-token prompt cannot be one request.
            ({"input_tokens_p50": "900000", "input_tokens_p95": "900000"}, "input_tokens_p95",
             "context window (131,072 tokens)"),
            ({"input_tokens_p95": "130000", "output_tokens_p95": "4000"}, "input_tokens_p95",
             "shorten one"),
            ({"concurrency": str(10**11)}, "concurrency", "less than or equal to 1000000"),
            ({"context_window": "0"}, "context_window", "greater than or equal to 1"),
            ({"context_window": "1000000"}, "context_window", "at most 131,072 tokens"),
            ({"context_window": "2000", "input_tokens_p95": "4000"}, "input_tokens_p95",
             "this brief's context window (2,000 tokens)"),
            ({"experts": "4", "active_experts": "8", "model_preset": "", "params_billion": "8",
              "layers": "32", "hidden_size": "4096", "attention_heads": "32"},
             "active_experts", "cannot be more than the experts"),
        ],
    )  # fmt: skip
    def test_absurd_inputs_are_refused_beside_the_field(
        self, catalog, page, team, changes, field, words
    ):
        response = page.post("/briefs/new/", post_data(team, **changes))
        assert response.status_code == 200
        errors = response.context["form"].errors
        assert field in errors, errors
        assert any(words in e for e in errors[field]), errors[field]
        assert WorkloadBrief.objects.count() == 0

    def test_a_pasted_config_shows_the_precision_it_is_sized_at(self, catalog, page, team):
        config = (HF_CONFIGS / "deepseek-r1.json").read_text()
        # An error elsewhere keeps the form on screen, showing what the paste was read as.
        data = post_data(team, model_preset="", model_hf_config=config, acceptance_rate="700")
        data.pop("weight_precision", None)
        response = page.post("/briefs/new/", data)
        assert response.status_code == 200
        html = response.content.decode()
        assert re.search(r'id="weights-inferred">Weights: FP8 \(from the config', html)
        assert WorkloadBrief.objects.count() == 0


class TestBriefApiBounds:
    @pytest.fixture
    def api(self, catalog, token_client):
        return token_client(Role.PLATFORM)

    def post(self, api, **changes):
        from .test_brief_api import BRIEF_BODY

        body = {**BRIEF_BODY, **changes}
        return api.post("/api/v1/briefs/", json.dumps(body), content_type="application/json")

    @pytest.mark.parametrize(
        ("changes", "path", "words"),
        [
            ({"input_tokens": {"p50": 900_000, "p95": 900_000}}, ("input_tokens", "p95"),
             "context window (131,072 tokens)"),
            ({"input_tokens": {"p50": 100_000, "p95": 130_000},
              "output_tokens": {"p50": 4000, "p95": 4000}}, ("input_tokens", "p95"),
             "shorten one"),
            ({"concurrency": 10**11}, ("concurrency",), "less than or equal to 1000000"),
            ({"context_window": 0}, ("context_window",), "greater than or equal to 1"),
            ({"context_window": 1_000_000}, ("context_window",), "at most 131,072 tokens"),
        ],
    )  # fmt: skip
    def test_absurd_inputs_are_a_field_level_400_and_nothing_is_saved(
        self, api, changes, path, words
    ):
        response = self.post(api, **changes)
        assert response.status_code == 400, response.content
        errors = response.json()["errors"]
        for part in path:
            errors = errors[part]
        assert any(words in e for e in errors), errors
        assert WorkloadBrief.objects.count() == 0

    def test_a_patch_beyond_the_context_window_is_refused_too(self, api):
        created = self.post(api).json()
        response = api.patch(
            f"/api/v1/briefs/{created['id']}/",
            json.dumps({"input_tokens": {"p50": 900_000, "p95": 900_000}}),
            content_type="application/json",
        )
        assert response.status_code == 400, response.content
        assert "context window" in response.json()["detail"]
        brief = WorkloadBrief.objects.get()
        assert (brief.input_tokens_p50, brief.inputs_version) == (1000, 1)

    def test_a_sane_brief_still_saves(self, api):
        response = self.post(api)
        assert response.status_code == 201, response.content


def media_brief(team, **changes):
    return BriefFactory(
        team=team, workload_type="IMAGE_GENERATION", model_preset="sdxl",
        weight_precision="FP16", kv_cache_precision="", input_tokens_p50=None,
        input_tokens_p95=None, output_tokens_p50=None, output_tokens_p95=None,
        image_width=1024, image_height=1024, success_unit="IMAGE", ttft_target_ms=None,
        itl_target_ms=None, latency_percentile="OFFLINE", **changes,
    )  # fmt: skip


def offered_presets(html):
    """The preset options a person can pick: those neither hidden nor disabled."""
    select = html[
        html.index('id="id_model_preset"') : html.index(
            "</select>", html.index('id="id_model_preset"')
        )
    ]
    return {
        value
        for value, attrs in re.findall(r'<option value="([^"]+)"([^>]*)>', select)
        if "hidden" not in attrs and "disabled" not in attrs
    }


class TestPresetsOfTheBriefsKind:
    def test_an_image_brief_offers_only_diffusion_presets(self, catalog, page, team):
        brief = media_brief(team)

        offered = offered_presets(page.get(f"/briefs/{brief.pk}/edit/").content.decode())

        assert offered == {"sdxl", "flux.1-dev"}

    def test_a_language_brief_offers_no_diffusion_or_embedding_preset(self, catalog, page, team):
        brief = qlora_brief(team)

        offered = offered_presets(page.get(f"/briefs/{brief.pk}/edit/").content.decode())

        assert "llama-3.1-70b" in offered
        assert not offered & {"sdxl", "flux.1-dev", "bge-large-en-v1.5", "e5-large"}

    def test_each_preset_names_the_types_it_serves_for_the_script(self, catalog, page):
        html = page.get("/briefs/new/").content.decode()
        serves = dict(re.findall(r'<option value="([^"]+)" data-workloads="([^"]*)"', html))
        assert serves["sdxl"].split() == ["IMAGE_GENERATION", "VIDEO_GENERATION"]
        assert "IMAGE_GENERATION" not in serves["llama-3.1-8b"].split()
        assert "EMBEDDINGS" in serves["bge-large-en-v1.5"].split()

    def test_a_language_preset_on_an_image_brief_is_a_field_error_and_saves_nothing(
        self, catalog, page, team
    ):
        data = post_data(
            team, workload_type="IMAGE_GENERATION", model_preset="llama-3.1-8b",
            success_unit="IMAGE", image_width="1024", image_height="1024",
        )  # fmt: skip

        response = page.post("/briefs/new/", data)

        assert response.status_code == 200
        errors = response.context["form"].errors
        assert "model_preset" in errors and "__all__" not in errors, errors
        assert "diffusion" in errors["model_preset"][0]
        choices = response.context["form"].fields["model_preset"].choices
        slugs = {slug for _, group in choices[1:] for slug, _ in group}
        assert slugs == {"sdxl", "flux.1-dev"}
        assert WorkloadBrief.objects.count() == 0


class TestToolingOfTheBriefsKind:
    def test_each_tool_names_the_types_it_applies_to_for_the_script(self, catalog, page):
        html = page.get("/briefs/new/").content.decode()
        tags = re.findall(r'<input type="checkbox" name="tooling"[^>]*>', html)
        by_tool = {
            re.search(r'value="(\w+)"', tag).group(1): (
                re.search(r'data-workloads="([^"]*)"', tag).group(1).split()
                if "data-workloads" in tag
                else None
            )
            for tag in tags
        }
        assert "IMAGE_GENERATION" not in by_tool["VLLM"]
        assert "REALTIME_INFERENCE" in by_tool["VLLM"]
        assert by_tool["COMFYUI"] == ["IMAGE_GENERATION", "VIDEO_GENERATION"]
        assert by_tool["KUBERNETES"] is None  # every type

    def test_an_image_brief_keeps_no_language_model_framework(self, catalog, page, team):
        data = post_data(
            team, workload_type="IMAGE_GENERATION", model_preset="sdxl",
            success_unit="IMAGE", image_width="1024", image_height="1024",
            tooling=["VLLM", "COMFYUI", "KUBERNETES"],
        )  # fmt: skip

        response = page.post("/briefs/new/", data)

        assert response.status_code == 302, response.context["form"].errors
        assert WorkloadBrief.objects.get().tooling == ["COMFYUI", "KUBERNETES"]

    def test_a_chat_brief_keeps_its_framework_and_drops_comfyui(self, catalog, page, team):
        response = page.post("/briefs/new/", post_data(team, tooling=["SGLANG", "COMFYUI"]))

        assert response.status_code == 302, response.context["form"].errors
        assert WorkloadBrief.objects.get().tooling == ["SGLANG"]
