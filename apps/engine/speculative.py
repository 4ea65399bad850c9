"""Speculative decoding and multi-token prediction: several tokens per decode step.

A draft (the model's own MTP head, an EAGLE head, or a smaller draft model) proposes `k` tokens;
the target model checks all of them in one forward pass over k + 1 tokens per sequence and keeps
the longest accepted prefix plus one token of its own. With each draft token accepted
independently with probability `a`, a step yields on average

    E = (1 - a^(k+1)) / (1 - a)        (k + 1 when a = 1)

tokens per sequence (Leviathan, Kalman and Matias 2023, "Fast Inference from Transformers via
Speculative Decoding", ICML, arXiv:2211.17192, equation 1). The step costs the verification pass
(k + 1 tokens per sequence: the weights are read once, the extra tokens are computed and, for an
MoE model, touch more experts) plus k draft passes, each `c` times a plain decode step (the
paper's cost coefficient c). Inter-token latency is that step time / E; throughput is
batch x E / step time.
"""

from __future__ import annotations

from apps.engine.performance import ServingModel
from apps.engine.types import ModelSpec, SpeculativeMethod, SpeculativeSpec

# Most draft tokens a request may propose per step. SGLang's EAGLE / MTP examples use
# --speculative-num-steps 1-5 (SGLang docs, "Speculative Decoding"); vLLM's num_speculative_tokens
# is typically 1-5 (vLLM docs, "Speculative Decoding"). Beyond ~8 the acceptance of the tail is
# negligible; 16 leaves room without inviting nonsense.
SPECULATIVE_MAX_TOKENS = 16

# Decoder layers in the draft head, per method. DeepSeek-V3 Technical Report (arXiv:2412.19437),
# section 2.2: each MTP module is one Transformer block plus a projection, sharing the embedding
# and output head with the main model; V3 / R1 ship one (num_nextn_predict_layers 1). EAGLE (Li
# et al. 2024, arXiv:2401.15077, section 3): the draft is a single decoder layer (plus an FC
# layer) that reuses the target's embedding and LM head. Both heads also run the shared LM head
# once per draft token, which `draft_cost` adds.
DRAFT_HEAD_LAYERS: dict[SpeculativeMethod, int] = {
    SpeculativeMethod.MTP: 1,
    SpeculativeMethod.EAGLE: 1,
}

# A separate draft model of unstated size: draft / target parameters. Engine choice, from the
# usual pairings: Llama-3.2-1B for Llama-3.1-8B (0.15), Llama-3.1-8B for Llama-3.1-70B (0.11),
# Qwen2.5-0.5B for Qwen2.5-7B (0.07) (vLLM docs "Speculative Decoding" examples and the models'
# cards). Decode is bandwidth-bound, so a draft pass costs about its share of the bytes.
DRAFT_MODEL_DEFAULT_SHARE = 0.1


def expected_tokens_per_step(acceptance_rate: float, tokens: int) -> float:
    """E = (1 - a^(k+1)) / (1 - a): tokens a sequence gains per verification step
    (Leviathan et al. 2023, equation 1); k + 1 at a = 1, 1 at a = 0."""
    a = acceptance_rate
    if a >= 1.0:
        return float(tokens + 1)
    return (1.0 - a ** (tokens + 1)) / (1.0 - a)


def draft_cost(model: ModelSpec, spec: SpeculativeSpec) -> float:
    """c: one draft pass as a fraction of one plain decode step of the target (at most 1).

    MTP / EAGLE: one decoder layer of the target's (1 / layers of it) plus the shared LM head
    (vocab x hidden parameters, as a share of the active parameters). A draft model: its
    parameters as a share of the target's active parameters (DRAFT_MODEL_DEFAULT_SHARE when
    its size is not given).
    """
    active = model.active_params
    if spec.method is SpeculativeMethod.DRAFT_MODEL:
        if spec.draft_params_billion is None:
            return DRAFT_MODEL_DEFAULT_SHARE
        share = spec.draft_params_billion * 1e9 / active
    else:
        head = model.vocab_size * model.hidden_size / active
        share = DRAFT_HEAD_LAYERS[spec.method] / max(model.layers, 1) + head
    return share if share < 1.0 else 1.0


def per_token_times(
    sm: ServingModel,
    model: ModelSpec,
    spec: SpeculativeSpec,
    decode_seqs: float,
    context: float,
    prefill_tokens: float,
    prefill_context: float,
) -> tuple[float, float, float, float]:
    """`sm.times` of one speculative step, divided by the tokens each sequence gains in it.

    The arguments are those of a plain decode step. `prefill_tokens` are the prompt tokens a
    plain step carries; requests finish E times sooner with speculation, so E times as many
    prompts arrive per step. The verification pass carries the k draft tokens of each sequence
    as extra tokens attending to its context (the framework's "extend" / target-verify pass:
    weights and KV read once, k more tokens computed, more experts touched); each of the k draft
    passes costs `draft_cost` of a plain decode step.
    """
    k = spec.tokens
    per_step = expected_tokens_per_step(spec.acceptance_rate, k)
    prompts = prefill_tokens * per_step
    verify_tokens = decode_seqs * k
    extra = prompts + verify_tokens
    extra_context = (
        (prompts * prefill_context + verify_tokens * context) / extra if extra > 0 else 0.0
    )
    seconds, memory_s, compute_s, comm_s = sm.times(decode_seqs, context, extra, extra_context)
    d_seconds, d_memory, d_compute, d_comm = sm.times(decode_seqs, context, 0.0, 0.0)
    drafts = k * draft_cost(model, spec)
    return (
        (seconds + drafts * d_seconds) / per_step,
        (memory_s + drafts * d_memory) / per_step,
        (compute_s + drafts * d_compute) / per_step,
        (comm_s + drafts * d_comm) / per_step,
    )


_METHOD_WORDS = {
    SpeculativeMethod.MTP: "multi-token prediction (MTP head)",
    SpeculativeMethod.EAGLE: "EAGLE draft head",
    SpeculativeMethod.DRAFT_MODEL: "draft model",
}


def speculative_note(model: ModelSpec, spec: SpeculativeSpec) -> str:
    """What the estimate assumed about speculative decoding, in words."""
    k = spec.tokens
    per_step = expected_tokens_per_step(spec.acceptance_rate, k)
    cost = draft_cost(model, spec)
    size = ""
    if spec.method is SpeculativeMethod.DRAFT_MODEL:
        size = (
            f" of {spec.draft_params_billion:g} B parameters"
            if spec.draft_params_billion is not None
            else f" assumed {DRAFT_MODEL_DEFAULT_SHARE:.0%} of the model's size"
        )
    return (
        f"speculative decoding: {_METHOD_WORDS[spec.method]}{size}, {k} token"
        f"{'s' if k != 1 else ''} proposed per step at {spec.acceptance_rate:.0%} acceptance "
        f"each: {per_step:.2f} tokens per step on average (Leviathan et al. 2023); each step "
        f"verifies {k + 1} tokens per sequence and runs {k} draft pass"
        f"{'es' if k != 1 else ''} at {cost:.1%} of a decode step each; inter-token latency and "
        "throughput include both, time to first token does not change"
    )
