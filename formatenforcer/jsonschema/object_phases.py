"""Where an object state stands in ``{ "key" : value , ... }``: its phase (objects.py reads the characters,
object_walk.py offers the walk its shortcuts).

OPEN before ``{``; FIRST after it; KEY inside a key; COLON after a key's closing quote; BEFORE after the
colon; VALUE inside a value; AFTER a value; NEXT after a comma; DONE after ``}``.
"""

OPEN, FIRST, KEY, COLON, BEFORE, VALUE, AFTER, NEXT, DONE = range(9)
