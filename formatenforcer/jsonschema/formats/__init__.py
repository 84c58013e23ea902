"""``format`` values as string content automata: dates and times, URIs and addresses, hostnames and IDNA,
``format: regex``, and the content automata they are built on (``content.py``)."""
