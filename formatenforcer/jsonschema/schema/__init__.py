"""Stage one of JSON Schema: a raw schema to the typed intermediate form (``schema/ir.py``), with references
resolved, ``allOf`` merged and unsatisfiable parts recorded. It builds no parser and imports no format
grammar: the format checks it needs (a ``const`` against its ``format``) are handed in (``format_checks.py``)."""
