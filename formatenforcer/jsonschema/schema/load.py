"""Reading a schema document: a dict or bool as it is, JSON text parsed, a pydantic model class dumped."""

from __future__ import annotations

import json
from typing import Any

from ...core.errors import SchemaError
from .json_value import check_json_data


def load_schema(schema: Any) -> Any:
    """A dict/bool schema from a dict, bool, JSON text, or pydantic BaseModel subclass."""
    if isinstance(schema, (dict, bool)):
        check_json_data(schema)
        return schema
    if isinstance(schema, (str, bytes)):
        try:
            return json.loads(schema)
        except ValueError as error:
            raise SchemaError(f"the schema is not valid JSON: {error}", "#") from None
    dump = getattr(schema, "model_json_schema", None)
    if isinstance(schema, type) and callable(dump):
        return dump()
    raise SchemaError(f"a schema must be a dict, a JSON string or a pydantic model class, not {type(schema).__name__}")


def ignores_extra_fields(schema: Any) -> bool:
    """Whether ``schema`` is a pydantic model class that drops the fields it does not declare (its config's
    ``extra`` unset or ``"ignore"``, pydantic's default): then extra keys are pointless to generate."""
    if not (isinstance(schema, type) and callable(getattr(schema, "model_json_schema", None))):
        return False
    config = getattr(schema, "model_config", None)
    extra = config.get("extra") if isinstance(config, dict) else None
    return extra in (None, "ignore")
