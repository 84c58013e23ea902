"""``$ref`` resolution for the normalizer: documents, base URIs (``$id``), anchors, JSON pointers.

The root schema is scanned once: every ``$id`` (resolved against its parent's base URI) names a resource,
every ``$anchor`` (and ``$dynamicAnchor``, used as a plain anchor) a location, and each schema's base URI
is recorded by pointer. Other documents come only from the ``resources`` mapping the caller supplies
(absolute URI -> schema); each is scanned the first time a ``$ref`` names its URI, with its retrieval URI
as base (its own ``$id``, if any, is registered too). Nothing is ever fetched: a ``$ref`` to a document that
was not supplied is reported as an unsupported ``$ref`` whose message names the URI.

Pointers of schemas inside a supplied document are written ``<uri>#/json/pointer`` so errors say where.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import unquote, urljoin

from ..errors import SchemaError
from .ir import AnyValue, CycleError, Node, Ref
from .merge import Merger, Unsupported


def _join(base: str, ref: str) -> str:
    """``urljoin`` that also keeps a fragment-only reference on a non-hierarchical base (``urn:...``)."""
    if ref.startswith("#"):
        return base.partition("#")[0] + ref
    return urljoin(base, ref)


def _escape(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


_NAME_MAPS = frozenset({"$defs", "definitions", "properties", "patternProperties", "dependentSchemas", "dependencies"})


def _document_uri(uri: str) -> str:
    """``uri`` without an empty fragment (``http://x/s.json#`` names the same document as ``http://x/s.json``)."""
    return uri[:-1] if uri.endswith("#") else uri


class References:
    """The ``$ref`` half of the normalizer (mixed into ``Normalizer``, which provides ``node`` and ``draft7``)."""

    draft7: bool
    merger: Merger
    problems: list[tuple[str, str]]
    track: bool
    node: Callable[..., Node]

    def __init__(self, root: Any, resources: Mapping[str, Any] | None) -> None:
        self.root = root
        self.missing: dict[str, str] = {}
        """pointer of a ``$ref`` -> the URI of the document it needs, which was not supplied."""
        self._supplied = {_document_uri(str(k)): v for k, v in (resources or {}).items()}
        self._refs: dict[str, Ref] = {}
        self._resources: dict[str, tuple[Any, str]] = {}
        self._anchors: dict[str, tuple[Any, str, str]] = {}
        self._bases: dict[str, str] = {}
        self._dynamic: set[str] = set()
        """``<resource uri>#<name>`` of every ``$dynamicAnchor`` met so far."""
        self._scan(root, "#", "", document=True)

    def _scan(self, schema: Any, pointer: str, base: str, document: bool = False, names: bool = False) -> None:
        """Records ids, anchors and base URIs below ``schema``; ``names``: a map of schemas by name
        (``$defs``, ``properties``...), whose keys are names, not keywords (a ``$defs`` entry "default")."""
        if isinstance(schema, list) or names:
            items = enumerate(schema) if isinstance(schema, list) else schema.items() if isinstance(schema, dict) \
                else ()  # fmt: skip
            for key, item in items:
                self._scan(item, f"{pointer}/{_escape(str(key))}", base)
            return
        if not isinstance(schema, dict):
            if document:
                self._resources.setdefault(base, (schema, pointer))
            return
        retrieved = base
        ident = schema.get("$id", schema.get("id") if self.draft7 else None)
        if self.draft7 and "$ref" in schema:
            ident = None  # draft-07: $ref ignores its siblings, $id included
        if isinstance(ident, str):
            uri, _, fragment = _join(base, ident).partition("#")
            if uri and not ident.startswith("#"):  # "#name" (draft-07) is only an anchor, not a new resource
                base = uri
                self._resources[uri] = (schema, pointer)
            if fragment and not fragment.startswith("/"):
                self._anchors[f"{base}#{fragment}"] = (schema, pointer, base)
        if document:
            self._resources.setdefault(retrieved, (schema, pointer))
        for keyword in ("$anchor", "$dynamicAnchor"):  # a $ref to a dynamic anchor acts as a plain one
            anchor = schema.get(keyword)
            if isinstance(anchor, str):
                self._anchors.setdefault(f"{base}#{anchor}", (schema, pointer, base))
                if keyword == "$dynamicAnchor":
                    self._dynamic.add(f"{base}#{anchor}")
        self._bases[pointer] = base
        self.track = self.track or "unevaluatedProperties" in schema or "unevaluatedItems" in schema
        for key, value in schema.items():
            if key in ("enum", "const", "examples", "default"):
                continue
            self._scan(value, f"{pointer}/{_escape(key)}", base, names=key in _NAME_MAPS)

    def base_of(self, pointer: str, fallback: str) -> str:
        """The base URI in force at ``pointer`` (its own ``$id`` applied), or ``fallback`` if not scanned."""
        return self._bases.get(pointer, fallback)

    def _resource(self, uri: str) -> tuple[Any, str] | None:
        """The (schema, pointer) of the document or ``$id`` resource ``uri``, scanning a supplied one now."""
        if not uri:
            return (self.root, "#")
        found = self._resources.get(uri)
        if found is None and uri == self._bases.get("#", ""):
            found = (self.root, "#")
        if found is None and uri in self._supplied:
            from .normalize import load_schema

            document = load_schema(self._supplied.pop(uri))
            self._scan(document, f"{uri}#", uri, document=True)
            found = self._resources.get(uri)
        return found

    def _reference(self, ref: Any, base: str, pointer: str) -> Node:
        if not isinstance(ref, str):
            raise SchemaError("'$ref' must be a string", pointer)
        uri, _, fragment = _join(base, ref).partition("#")
        resource = self._resource(uri)
        if resource is None:
            self.missing[pointer] = uri
            self.problems.append((pointer, "$ref"))  # a document that was not supplied: never fetched
            return AnyValue()
        schema, target = resource
        target_base = uri
        fragment = unquote(fragment)
        if fragment and not fragment.startswith("/"):
            found = self._anchors.get(f"{uri}#{fragment}")
            if found is None:
                raise SchemaError(f"'$ref' {ref!r} names an anchor that does not exist", pointer)
            schema, target, target_base = found
        elif fragment:
            for token in fragment[1:].split("/"):
                token = token.replace("~1", "/").replace("~0", "~")
                if isinstance(schema, dict) and token in schema:
                    schema = schema[token]
                elif isinstance(schema, list) and token.isdigit() and int(token) < len(schema):
                    schema = schema[int(token)]
                else:
                    raise SchemaError(f"'$ref' {ref!r} points nowhere", pointer)
                target = f"{target}/{_escape(token)}"
        target_base = self._bases.get(target, target_base)
        hit = self._refs.get(target)
        if hit is None:
            hit = self._refs[target] = Ref(target, lambda: self.node(schema, target, target_base))
        return hit

    def _dynamic_reference(self, ref: Any, base: str, pointer: str) -> Node:
        """``$dynamicRef``, where its target does not depend on the path taken to it: like ``$ref`` unless it
        first resolves to a ``$dynamicAnchor`` of its name; then the outermost resource of the dynamic scope
        declaring that anchor wins, which is the root resource when it declares it (evaluation starts there),
        or the first target when no other known resource declares it. Otherwise Unsupported."""
        if not isinstance(ref, str):
            raise SchemaError("'$dynamicRef' must be a string", pointer)
        uri, _, fragment = _join(base, ref).partition("#")
        name = unquote(fragment)
        if not name or name.startswith("/") or f"{uri}#{name}" not in self._dynamic:
            return self._reference(ref, base, pointer)
        root = self._bases.get("#", "")
        if f"{root}#{name}" in self._dynamic:
            return self._reference(f"{root}#{name}", base, pointer)
        for other in list(self._supplied):  # every document that could be on the path must be known
            self._resource(other)
        if {key for key in self._dynamic if key.endswith(f"#{name}")} == {f"{uri}#{name}"}:
            return self._reference(ref, base, pointer)
        raise Unsupported("$dynamicRef", f"the target of {ref!r} depends on the path of references to it")

    def finish(self) -> None:
        """Resolves every reference met so far (and those they lead to), and the complements left lazy by a
        recursive ``not``/``oneOf``, so all problems are known now."""
        done: set[str] = set()
        negations: set[int] = set()
        negated = self.merger.negations
        while len(done) < len(self._refs) or len(negations) < len(negated):
            for pointer, ref in list(self._refs.items()):
                if pointer not in done:
                    done.add(pointer)
                    try:
                        ref.get()
                    except CycleError:
                        self.problems.append((pointer, "$ref"))
            for key, ref in list(negated.items()):
                if key not in negations:
                    negations.add(key)
                    try:
                        ref.get()
                    except (Unsupported, CycleError) as problem:
                        # where is lost (the complement is shared); leniently, that `not` constrains nothing
                        self.problems.append(("#", problem.keyword if isinstance(problem, Unsupported) else "$ref"))
                        ref.settle(AnyValue())


__all__ = ["References"]
