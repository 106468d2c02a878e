"""YAML with line numbers, for messages that point at the line to fix.

PyYAML's SafeLoader composes the node tree (which knows where every node
starts); this module turns it into plain dicts, lists and scalars, keeping
the line of every key and list item beside them:

    data = load_text(text)          # raises YamlProblem(line, message)
    data.key_lines["workload"]      # 1-based line of the ``workload:`` key
    data["tags"].item_lines[0]      # line of the first tag

Scalars are resolved by SafeLoader's own rules (YAML 1.1: ``1.3e9`` stays a
string, ``yes`` is true); the validator decides what each field accepts.
Duplicate keys, which PyYAML would silently let the last one win, are kept
for the validator to report.
"""
import yaml


class YamlProblem(Exception):
    """The text is not one YAML document of mappings, lists and scalars."""

    def __init__(self, line, message):
        self.line = line
        self.message = message
        super().__init__(f"line {line}: {message}")


class YMap(dict):
    """A mapping that remembers its own line, each key's line and repeated keys."""

    line = 1

    def __init__(self, line):
        super().__init__()
        self.line = line
        self.key_lines = {}
        self.repeated = []  # (key, line) of keys given more than once


class YList(list):
    """A list that remembers its own line and each item's line."""

    def __init__(self, line):
        super().__init__()
        self.line = line
        self.item_lines = []


def _line(node):
    return node.start_mark.line + 1


def _convert(node, loader):
    if isinstance(node, yaml.MappingNode):
        result = YMap(_line(node))
        for key_node, value_node in node.value:
            if not isinstance(key_node, yaml.ScalarNode):
                raise YamlProblem(_line(key_node), "a key must be a plain word, not a list or mapping")
            key = loader.construct_object(key_node, deep=True)
            if not isinstance(key, str):
                # `on:`, `no:`, `1:` become booleans or numbers in YAML 1.1.
                key = key_node.value
            if key in result.key_lines:
                result.repeated.append((key, _line(key_node)))
                continue
            result[key] = _convert(value_node, loader)
            result.key_lines[key] = _line(key_node)
        return result
    if isinstance(node, yaml.SequenceNode):
        result = YList(_line(node))
        for item in node.value:
            result.append(_convert(item, loader))
            result.item_lines.append(_line(item))
        return result
    return loader.construct_object(node, deep=True)


def load_text(text):
    """Parse one YAML document into YMap/YList/scalars; raise YamlProblem."""
    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            raise YamlProblem(1, "the file is empty")
        return _convert(node, loader)
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        line = mark.line + 1 if mark else 1
        text = " ".join(part for part in (err.context, err.problem) if part)
        raise YamlProblem(line, f"YAML syntax error: {text}") from None
    except yaml.YAMLError as err:
        raise YamlProblem(1, f"YAML syntax error: {err}") from None
    finally:
        loader.dispose()
