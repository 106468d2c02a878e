"""Model presets: published shapes the lab, the command line and the scenario files start from.

One table, the one place these shapes are written: the lab's preset picker,
``python -m lab_core plan --preset``, the scenario files that name a preset
(``workload: {model: gpt3-175b, ...}``) and the exports' model identifiers
all read it. Each preset gives lab_core workload inputs (the model shape and,
where the model is defined by it, the sequence length and dropout) with the
source of every number, the published parameter count it must reproduce
(tests/model/test_presets.py) and what the lab's shape does not represent:

- ``untied_output``: the model has an output layer separate from its token
  embedding; the lab counts one vocabulary x hidden matrix (shape.param_count,
  arXiv:2104.04473 Eq 2), so its count is that much below the published one.
- ``architecture``: what the launch exports write that the lab's counts do
  not distinguish: a gated MLP, rotary positions, RMSNorm, linear biases
  (the lab counts GPT's: a plain MLP, learned positions, biases; shape.py).
- A gated MLP (SwiGLU) with inner size f is entered as ffn_hidden = 1.5 f
  (shape.py); experts likewise (moe.py).
- ``torchtitan``: (model name, flavor) registered for this shape in
  torchtitan v0.2.2's torchtitan/models/<name>/__init__.py, for the
  torchtitan export.

Display names and notes are in the catalogs (``presets`` in content/i18n).
"""
from .errors import LabInputError
from .inputs import SPEC_BY_NAME

# Model-shape inputs a preset sets; a preset leaves the rest of the workload alone.
SHAPE_INPUTS = ("params", "layers", "hidden", "heads", "kv_heads", "head_dim", "v_head_dim", "q_lora_rank",
                "kv_lora_rank", "ffn_hidden", "vocab", "experts", "experts_per_token", "expert_ffn_hidden",
                "shared_experts", "dense_layers", "expert_groups", "expert_groups_per_token", "mtp_layers")

def _llama3(params, layers, hidden, heads, ffn, seq_len=8192):
    # arXiv:2407.21783 Table 3: layers, model dimension, FFN dimension, heads, 8 key/value heads;
    # the vocabulary of 128,256 tokens is the released tokenizer's (Sec 3.1.1 calls it 128K).
    return dict(params=params, layers=layers, hidden=hidden, heads=heads, kv_heads=8, ffn_hidden=ffn * 3 // 2,
                vocab=128256, seq_len=seq_len, dropout=False)


# Llama 3, Mixtral, DeepSeek-V3, Qwen3: SwiGLU, rotary positions, RMSNorm, no linear biases
# (arXiv:2302.13971 Sec 2.2 for the recipe; each model's paper for its use).
MODERN = {"gated_mlp": True, "rope": True, "rmsnorm": True, "bias": False}

GPT = {"gated_mlp": False, "rope": False, "rmsnorm": False, "bias": True}


def _source(paper, where):
    return {"id": paper, "where": where, "url": "https://arxiv.org/abs/" + paper.split(":", 1)[1]}


def _preset(inputs, source, torchtitan=None, untied_output=True, architecture=MODERN):
    """One preset; its published size is the parameter count its inputs name."""
    return {"inputs": inputs, "published_params": inputs["params"], "untied_output": untied_output,
            "architecture": architecture, "source": source, "torchtitan": torchtitan}


LLAMA3 = _source("arXiv:2407.21783", "Table 3")

PRESETS = {
    # arXiv:2005.14165 Table 2.1: 96 layers, d_model 12,288, 96 heads of 128, context 2,048;
    # MLP 4 d_model (Sec 2.1, as GPT-2). Vocabulary: lab_core's default 51,200, the GPT-2
    # tokenizer's 50,257 padded as Megatron-LM trained it (arXiv:2104.04473).
    "gpt3-175b": _preset(dict(params=175e9, layers=96, hidden=12288, heads=96, seq_len=2048),
                         _source("arXiv:2005.14165", "Table 2.1"), untied_output=False, architecture=GPT),
    "llama3-8b": _preset(_llama3(8e9, 32, 4096, 32, 14336), LLAMA3, ("llama3", "8B")),
    "llama3-70b": _preset(_llama3(70e9, 80, 8192, 64, 28672), LLAMA3, ("llama3", "70B")),
    "llama3-405b": _preset(_llama3(405e9, 126, 16384, 128, 53248), LLAMA3, ("llama3", "405B")),
    # The long-context stage: sequences of 131,072 tokens (arXiv:2407.21783 Sec 3.4.2,
    # Table 4's context-parallel row).
    "llama3-405b-128k": _preset(_llama3(405e9, 126, 16384, 128, 53248, seq_len=131072),
                                _source("arXiv:2407.21783", "Table 3, Table 4"), ("llama3", "405B")),
    # arXiv:2401.04088 Table 1: dim 4,096, 32 layers, 32 heads of 128, 8 key/value heads,
    # SwiGLU hidden 14,336, vocabulary 32,000, 8 experts, top-2, context 32,768.
    "mixtral-8x7b": _preset(dict(params=46.7e9, layers=32, hidden=4096, heads=32, kv_heads=8, ffn_hidden=21504,
                                 vocab=32000, experts=8, experts_per_token=2, seq_len=32768, dropout=False),
                            _source("arXiv:2401.04088", "Table 1, Sec 2")),
    # arXiv:2412.19437 Sec 4.2: 61 layers, hidden 7,168, multi-head latent attention of 128 heads
    # (query/key head 128 + 64 rotary = 192, value head 128, query latent 1,536, key/value latent
    # 512; attention.py), dense MLP 18,432 in the first 3 layers, 1 shared and 256 routed experts
    # of 2,048, 8 per token; vocabulary 129,280 (the released config; "128K" in Sec 4.1). Node-limited
    # routing (Sec 2.1.2): the released config's 8 expert groups (n_group), a token's experts from 4 of
    # them (topk_group), at most 4 nodes when a group fills a node. One multi-token-prediction module
    # (Sec 2.2, 4.2: "we set the MTP depth D to 1"; the released config's num_nextn_predict_layers 1).
    "deepseek-v3": _preset(dict(params=671e9, layers=61, hidden=7168, heads=128, kv_heads=128, head_dim=192,
                                v_head_dim=128, q_lora_rank=1536, kv_lora_rank=512, ffn_hidden=27648,
                                vocab=129280, experts=256, experts_per_token=8, expert_ffn_hidden=3072,
                                shared_experts=1, dense_layers=3, expert_groups=8, expert_groups_per_token=4,
                                mtp_layers=1, seq_len=4096, dropout=False),
                           _source("arXiv:2412.19437", "Sec 2.1.2, 2.2, 4.2"), ("deepseek_v3", "671B")),
    # arXiv:2505.09388 Table 2: 94 layers, 64 query / 4 key-value heads, 128 experts, 8 per token,
    # no shared expert; hidden 4,096, expert size 1,536 and vocabulary 151,936 from the released
    # config; heads of 128 (its config.json head_dim), so the query width is 64 x 128 = 8,192.
    "qwen3-235b-a22b": _preset(dict(params=235e9, layers=94, hidden=4096, heads=64, kv_heads=4, head_dim=128,
                                    ffn_hidden=12288,
                                    vocab=151936, experts=128, experts_per_token=8, expert_ffn_hidden=2304,
                                    seq_len=4096, dropout=False),
                               _source("arXiv:2505.09388", "Table 2"), ("qwen3", "235B-A22B")),
}

PRESET_IDS = tuple(PRESETS)


def _default(name):
    spec = SPEC_BY_NAME[name]
    return None if spec.derive_if_zero else spec.default


def preset_values(preset_id):
    """Only the inputs the preset gives (a new dict): what a scenario file naming
    it starts from. LabInputError for an unknown id."""
    if preset_id not in PRESETS:
        raise LabInputError("preset", preset_id, ", ".join(PRESET_IDS), "unknown_choice")
    return dict(PRESETS[preset_id]["inputs"])


def preset_inputs(preset_id):
    """Every model-shape input (SHAPE_INPUTS) at its default, then the preset's
    inputs: choosing a preset replaces the whole shape, e.g. a dense model's
    preset drops the experts of a mixture-of-experts one."""
    values = preset_values(preset_id)
    return dict({name: _default(name) for name in SHAPE_INPUTS}, **values)


_FULL_INPUTS = {}


def _full_inputs(preset_id):
    """preset_inputs, made once per preset (the lab asks on every move)."""
    if preset_id not in _FULL_INPUTS:
        _FULL_INPUTS[preset_id] = preset_inputs(preset_id)
    return _FULL_INPUTS[preset_id]


def matching_preset(inputs):
    """The id of the preset whose model shape (SHAPE_INPUTS of preset_inputs)
    ``inputs`` has, or None; of presets with one shape (Llama 3 405B at 8K and
    128K), the one whose other inputs (the sequence length) match too, else the first."""
    found = [preset_id for preset_id in PRESET_IDS
             if all(inputs.get(name) == _full_inputs(preset_id)[name] for name in SHAPE_INPUTS)]
    exact = [preset_id for preset_id in found
             if all(inputs.get(name) == value for name, value in PRESETS[preset_id]["inputs"].items())]
    return (exact or found or [None])[0]


def preset_for_shape(shape):
    """The preset whose model shape ``shape`` (a ModelShape) is, ignoring the
    sequence length: the torchtitan export names its flavor. None when none is."""
    for preset_id, preset in PRESETS.items():
        inputs = preset["inputs"]
        if (inputs["layers"], inputs["hidden"], inputs["heads"]) != (shape.layers, shape.hidden, shape.heads):
            continue
        if inputs.get("vocab") not in (None, shape.vocab) or inputs.get("kv_heads") not in (None, shape.kv_heads):
            continue
        if inputs.get("ffn_hidden") not in (None, shape.ffn_hidden):
            continue
        experts = shape.experts
        if (experts.count if experts else 0) == inputs.get("experts", 0):
            return preset_id
    return None


def to_dict():
    """The presets as JSON-ready data (for the page's configuration)."""
    return {preset_id: {"inputs": dict(p["inputs"]), "published_params": p["published_params"],
                        "untied_output": p["untied_output"], "architecture": dict(p["architecture"]),
                        "source": dict(p["source"]),
                        "torchtitan": list(p["torchtitan"]) if p["torchtitan"] else None}
            for preset_id, p in PRESETS.items()}
