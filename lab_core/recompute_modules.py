"""Fine-grained selective recompute: which parts of a layer "selective" recomputes.

Megatron-Core's --recompute-granularity selective recomputes the submodules
named by --recompute-modules (megatron/core/transformer/transformer_config.py,
recompute_modules; default ["core_attn"], the attention core of
arXiv:2205.05198 Sec 5). Workload.recompute_modules takes the same names:

- ``core_attn``: the attention core (its s x s scores, softmax and dropout;
  with flash attention nothing of it is stored, so nothing changes);
- ``layernorm``: the two norms of a layer (input_layernorm, pre_mlp_layernorm):
  their outputs, which the next GEMMs keep as their inputs, are discarded and
  rebuilt in the backward;
- ``mla_up_proj``: multi-head latent attention's up-projections and rotary
  embedding: the expanded queries, keys and values the attention core keeps
  are rebuilt from the latents (multi_latent_attention.py, recompute_up_proj);
- ``moe_act``: the routed experts' activation function: its output, the
  experts' second-GEMM input, is rebuilt (moe/experts.py, activation_recompute);
- ``mlp``: the MLP of each dense layer, whole (transformer_layer.py: not of
  mixture-of-experts layers);
- ``moe``: each mixture-of-experts layer, whole: router, dispatch, experts, combine;
- ``shared_experts``: the shared experts' MLP.

The first four use output-discarding checkpoints (the output is freed once its
consumer has it, then rebuilt before the consumer's backward); the last three
keep their module's input and rebuild everything inside. What each drops is in
activations.module_savings, what it replays in step_time.module_replay_seconds.
DeepSeek-V3 recomputes its norms and MLA up-projections and its SwiGLU's output
(arXiv:2412.19437 Sec 3.2.3 and 3.3.2): layernorm, mla_up_proj and moe_act.

Only the Megatron-Core stack (``modern``) has these modules: torchtitan's
selective recompute is PyTorch's per-op checkpointing (stack.per_op_selective)
and the 2021 Megatron-LM recomputes the attention core only.
"""
from .errors import LabInputError

RECOMPUTE_MODULES = ("core_attn", "layernorm", "mla_up_proj", "moe_act", "mlp", "moe", "shared_experts")
DEFAULT_RECOMPUTE_MODULES = ("core_attn",)
# The stack whose selective recompute takes modules (stack.py).
MODULES_STACK = "modern"


def allowed_text():
    return ", ".join(RECOMPUTE_MODULES)


def canonical(value):
    """The modules as a tuple in RECOMPUTE_MODULES order, from a list, a tuple or a
    string of names separated by commas (either language's), semicolons or spaces (what a
    command line, a link or a typed box gives); LabInputError naming the first unknown name."""
    if isinstance(value, str):
        for separator in (",", "，", "、", ";"):
            value = value.replace(separator, " ")
        names = value.split()
    elif isinstance(value, (list, tuple, frozenset, set)):
        names = list(value)
    else:
        raise LabInputError("recompute_modules", value, allowed_text(), "not_a_list")
    for name in names:
        if name not in RECOMPUTE_MODULES:
            raise LabInputError("recompute_modules", name, allowed_text(), "unknown_choice")
    chosen = set(names)
    return tuple(name for name in RECOMPUTE_MODULES if name in chosen)


def check(modules, shape, stack):
    """LabInputError when a module does not fit the model or the stack (reason
    ``inconsistent``; numbers["rule"] says which rule, numbers["module"] which module)."""
    if modules == DEFAULT_RECOMPUTE_MODULES:
        return
    if stack != MODULES_STACK:
        _refuse(modules, "stack", {"stack": stack})
    experts = shape.experts
    for module in modules:
        if module == "mla_up_proj" and not shape.attention.kv_rank:
            _refuse(modules, "needs_mla", {"module": module})
        if module in ("moe_act", "moe") and experts is None:
            _refuse(modules, "needs_experts", {"module": module})
        if module == "shared_experts" and (experts is None or not experts.shared):
            _refuse(modules, "needs_shared", {"module": module})
        if module == "mlp" and experts is not None and not experts.dense_layers:
            _refuse(modules, "needs_dense", {"module": module})


def _refuse(modules, rule, numbers):
    raise LabInputError("recompute_modules", ", ".join(modules), allowed_text(), "inconsistent",
                        _RULES[rule], dict(numbers, rule=rule))


_RULES = {
    "stack": "recompute modules are Megatron-Core's (the modern stack); others recompute the attention core",
    "needs_mla": "mla_up_proj recomputes multi-head latent attention's up-projections (set kv_lora_rank)",
    "needs_experts": "moe_act and moe recompute parts of mixture-of-experts layers (set experts)",
    "needs_shared": "shared_experts recomputes the shared experts (set shared_experts)",
    "needs_dense": "mlp recomputes the MLP of dense layers; every layer of this model routes to experts",
}


def named_modules(recompute, modules):
    """The modules a plan's recompute is of, when they say more than "selective": Megatron-Core's
    selective recompute of other modules than the default; () for any other plan (what the plan
    card, the activation decision, the compare panel and the exports name)."""
    if recompute == "selective" and tuple(modules) != DEFAULT_RECOMPUTE_MODULES:
        return tuple(modules)
    return ()


def selective_differs(modules, flash):
    """Whether selective recompute keeps less than none with these modules (the
    planner then searches it; core_attn alone under flash attention changes nothing)."""
    return any(module != "core_attn" for module in modules) or ("core_attn" in modules and not flash)
