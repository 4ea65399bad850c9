"""The brief page says what it read: a pasted config.json's "Read as" panel (the estimate
response's `model` summary in words) and the model named by its architecture, here and in the
brief list; a preset is known by its name and has no panel."""

import re
from html import unescape

import pytest

from apps.core.roles import Role
from tests.factories.briefs import BriefFactory

pytestmark = pytest.mark.django_db

# Llama 3.1 8B's config.json, as Hugging Face ships it (the fields the engine reads).
LLAMA_8B_CONFIG = {
    "architectures": ["LlamaForCausalLM"],
    "model_type": "llama",
    "hidden_size": 4096,
    "intermediate_size": 14336,
    "num_attention_heads": 32,
    "num_hidden_layers": 32,
    "num_key_value_heads": 8,
    "vocab_size": 128256,
    "max_position_embeddings": 131072,
    "torch_dtype": "bfloat16",
    "tie_word_embeddings": False,
}


def text_of(html: str, element_id: str) -> str:
    match = re.search(rf'id="{element_id}".*?</div>', html, re.S)
    assert match, f"no #{element_id} on the page"
    # Spaces collapsed, no-break spaces kept (str.split would take them for spaces).
    return re.sub(r"[ \t\n]+", " ", unescape(re.sub(r"<[^>]+>", " ", match.group(0))))


def test_a_pasted_config_reads_as_the_engine_read_it(catalog, client, make_user, team):
    client.force_login(make_user(Role.PLATFORM))
    brief = BriefFactory(
        team=team, model_preset="", model_hf_config=LLAMA_8B_CONFIG,
        weight_precision="BF16", kv_cache_precision="FP8",
    )  # fmt: skip
    html = client.get(f"/briefs/{brief.pk}/").content.decode()
    panel = text_of(html, "read-as")
    # 8.03 B parameters (7.51 B multiplied per token), 16.06 GB at BF16, KV: 2 x 32 layers x 8
    # heads x 128 dims x 1 byte (FP8) = 65,536 bytes a token.
    assert "8.03\u00a0B in all; 7.51\u00a0B active per token" in panel
    assert "Weights 16.1\u00a0GB" in panel
    assert "KV cache 65.5\u00a0kB per token of context" in panel
    assert "Layers 32 full attention" in panel
    assert "BF16" not in panel  # the precision is stated once, in the facts above
    assert "Pasted config.json (LlamaForCausalLM)" in html
    listing = client.get("/briefs/").content.decode()
    assert "Pasted config.json" in listing and ">custom<" not in listing


def test_a_brief_not_complete_still_shows_what_its_config_reads_as(
    catalog, client, make_user, team
):
    client.force_login(make_user(Role.PLATFORM))
    brief = BriefFactory(
        team=team, model_preset="", model_hf_config=LLAMA_8B_CONFIG, weight_precision="",
        kv_cache_precision="", workload_type="",
    )  # fmt: skip
    panel = text_of(client.get(f"/briefs/{brief.pk}/").content.decode(), "read-as")
    assert "Weights 16.1\u00a0GB" in panel  # at the config's torch_dtype, BF16
    assert "131\u00a0kB per token of context" in panel  # the KV cache at BF16 too


def test_a_preset_has_no_panel(catalog, client, make_user, team):
    client.force_login(make_user(Role.PLATFORM))
    html = client.get(f"/briefs/{BriefFactory(team=team).pk}/").content.decode()
    assert 'id="read-as"' not in html and "Llama 3.1 8B" in html
