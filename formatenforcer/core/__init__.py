"""The compiled core: the token walk in C (``_native``), the vocabulary trie as flat arrays it walks, and the
automata it runs. Everything here has a pure-Python equivalent in the walk (formatenforcer/walk.py): the
compiled path is used where it applies and gives bit-identical masks (see docs/architecture.md)."""
