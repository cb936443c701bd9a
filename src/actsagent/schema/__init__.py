"""Schema introspection and its compact rendering for prompts."""

from actsagent.schema.introspect import introspect
from actsagent.schema.model import ColumnInfo, ForeignKey, SchemaInfo, TableInfo
from actsagent.schema.render import render_schema

__all__ = ["ColumnInfo", "ForeignKey", "SchemaInfo", "TableInfo", "introspect", "render_schema"]
