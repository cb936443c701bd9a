"""What a database holds (tables, columns, keys, value samples) as typed data, and its rendering for prompts.

Introspection, which reads it from a database, lives in ``actsagent.db.introspect``.
"""

from actsagent.schema.model import ColumnInfo, ForeignKey, SchemaInfo, TableInfo, render_schema

__all__ = ["ColumnInfo", "ForeignKey", "SchemaInfo", "TableInfo", "render_schema"]
