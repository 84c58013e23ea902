"""Where an array state stands in ``[ item , item ]``: its phase (arrays.py reads the characters,
array_walk.py offers the walk its shortcuts).

OPEN before ``[``; FIRST after it; VALUE inside an item; AFTER an item; NEXT after a comma; DONE after ``]``.
A state of a ``uniqueItems`` array also carries its item's text so far (a ``PartialItem`` where part of it was
read inside a free run, see partial_item.py).
"""

OPEN, FIRST, VALUE, AFTER, NEXT, DONE = range(6)
