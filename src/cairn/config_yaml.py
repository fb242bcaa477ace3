"""The config file's YAML: the safe loader, refusing a key given twice in one mapping.
Imported by :func:`cairn.config.load_config` only when there is a file to read."""

from __future__ import annotations

from typing import Any

import yaml


class UniqueKeyLoader(yaml.SafeLoader):
    """YAML's safe loader, except that a key given twice in one mapping is refused:
    ``safe_load`` keeps the last one silently, so half of a config would be ignored."""


def _unique_mapping(loader: yaml.SafeLoader, node: yaml.MappingNode) -> dict[Any, Any]:
    seen: set[Any] = set()
    for key_node, _ in node.value:
        if key_node.tag == "tag:yaml.org,2002:merge":
            continue  # `<<: *anchor` brings defaults a key of this mapping may override
        key = loader.construct_object(key_node, deep=True)
        try:
            repeated = key in seen
            seen.add(key)
        except TypeError:
            raise yaml.constructor.ConstructorError(
                None, None, "a mapping key must be a plain value", key_node.start_mark
            ) from None
        if repeated:
            raise yaml.constructor.ConstructorError(
                None, None, f"repeated key {str(key)[:60]!r}", key_node.start_mark
            )
    return loader.construct_mapping(node, deep=True)


UniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _unique_mapping)
