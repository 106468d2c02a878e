"""The framework versions the exports' keys were taken from.

Each export writes only keys listed in content/export/<list> (taken from the
files named here at the commit named here; tests/export check every key the
exports write against those lists and the lists' headers against this table).
"""


class Framework:
    __slots__ = ("id", "name", "version", "repository", "commit", "files", "key_list")

    def __init__(self, id, name, version, repository, commit, files, key_list):
        self.id, self.name, self.version, self.repository = id, name, version, repository
        self.commit, self.files, self.key_list = commit, files, key_list

    def numbers(self):
        return {"framework": self.name, "version": self.version, "repository": self.repository,
                "commit": self.commit[:12], "files": ", ".join(self.files)}


FRAMEWORKS = {
    "megatron": Framework(
        "megatron", "Megatron-LM / Megatron-Core", "core_v0.15.3", "github.com/NVIDIA/Megatron-LM",
        "309ffca6a40553362d44fd17efc56b772fa1aa44", ("megatron/training/arguments.py",), "megatron_flags.txt"),
    "torchtitan": Framework(
        "torchtitan", "torchtitan", "v0.2.2", "github.com/pytorch/torchtitan",
        "73a0e6979dd10b6b1904098eb3c8f62c18ab87ce", ("torchtitan/config/job_config.py",), "torchtitan_keys.txt"),
    "deepspeed": Framework(
        "deepspeed", "DeepSpeed", "0.16.5 (after v0.16.4)", "github.com/microsoft/DeepSpeed",
        "38327e07f6cd39b63418f60cedd1651b0be3e7c3",
        ("deepspeed/runtime/constants.py", "deepspeed/runtime/zero/config.py",
         "deepspeed/runtime/activation_checkpointing/config.py", "deepspeed/runtime/config.py",
         "deepspeed/runtime/tensor_parallel/config.py"), "deepspeed_keys.txt"),
}
