"""``$ref`` resolution for the normalizer: documents, base URIs (``$id``), anchors, JSON pointers.

The root schema is scanned once: every ``$id`` (resolved against its parent's base URI) names a resource,
every ``$anchor`` (and ``$dynamicAnchor``, used as a plain anchor) a location, and each schema's base URI
is recorded by pointer. Other documents come only from the ``resources`` mapping the caller supplies
(absolute URI -> schema); each is scanned the first time a ``$ref`` names its URI, with its retrieval URI
as base (its own ``$id``, if any, is registered too). Nothing is ever fetched: a ``$ref`` to a document that
was not supplied is reported as an unsupported ``$ref`` whose message names the URI.

Pointers of schemas inside a supplied document are written ``<uri>#/json/pointer`` so errors say where.

``$dynamicRef`` (and draft 2019-09's ``$recursiveRef``) depend on the path taken: the normalizer carries the
dynamic scope (``Scope``: which resource binds each ``$dynamicAnchor`` name, and where a ``$recursiveRef``
to a ``$recursiveAnchor`` lands) and reads a node once per (location, scope).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import unquote, urljoin

from ...core.errors import Problem, SchemaError
from .dialects import dialect_of, is_legacy, unknown_keywords
from .ir import AnyValue, CycleError, Node, Ref, Unsupported
from .load import load_schema
from .merge import Merger
from .metaschemas import metaschema


def _join(base: str, ref: str) -> str:
    """``urljoin`` that also keeps a fragment-only reference on a non-hierarchical base (``urn:...``)."""
    if ref.startswith("#"):
        return base.partition("#")[0] + ref
    return urljoin(base, ref)


def _escape(token: str) -> str:
    if "~" in token or "/" in token:
        return token.replace("~", "~0").replace("/", "~1")
    return token


_NAME_MAPS = frozenset({"$defs", "definitions", "properties", "patternProperties", "dependentSchemas", "dependencies"})


_NOT_SCHEMAS = frozenset({"enum", "const", "examples", "default"})


_MARKS = frozenset({"$id", "id", "$anchor", "$dynamicAnchor", "$recursiveAnchor"})
"""Keywords by which ``_scan`` records a resource or a location (see ``References._unmarked``)."""


Scope = tuple[tuple[str, str], ...]
"""A dynamic scope, reduced to what ``$dynamicRef`` and ``$recursiveRef`` can observe: sorted (anchor name,
outermost resource URI declaring it) pairs, and the pair (``RECURSIVE``, URI) while the innermost resource has
``"$recursiveAnchor": true`` (see ``References.enter``)."""

RECURSIVE = ""
"""The name under which ``Scope`` binds the target of ``$recursiveRef``: no ``$dynamicRef`` looks up the empty
name (one with an empty fragment is a plain ``$ref``), so no ``$dynamicAnchor`` binding is shadowed."""


CYCLE = "a $ref cycle: the reference is needed to build itself before any value is read"


def _document_uri(uri: str) -> str:
    """``uri`` without an empty fragment (``http://x/s.json#`` names the same document as ``http://x/s.json``)."""
    return uri[:-1] if uri.endswith("#") else uri


class References:
    """The ``$ref`` half of the normalizer (mixed into ``Normalizer``, which provides ``node``)."""

    merger: Merger
    problems: list[Problem]
    track: bool
    node: Callable[..., Node]

    def __init__(self, root: Any, resources: Mapping[str, Any] | None) -> None:
        self.root = root
        self.root_dialect = (dialect_of(root.get("$schema")) if isinstance(root, dict) else None) or ""
        """The dialect of the root document ("" when it names none: every keyword is read)."""
        self._dialects: dict[str, str] = {}
        """pointer -> the dialect of the resource the schema there belongs to (schema/dialects.py)."""
        self.missing: dict[str, str] = {}
        """pointer of a ``$ref`` -> the URI of the document it needs, which was not supplied."""
        self._supplied = {_document_uri(str(k)): v for k, v in (resources or {}).items()}
        self._loaded: set[str] = set()
        """URIs of the documents scanned so far (supplied or metaschemas)."""
        self._refs: dict[tuple[str, Scope], Ref] = {}
        """(pointer, dynamic scope) -> the lazy reference to the node read there under that scope."""
        self._resources: dict[str, tuple[Any, str]] = {}
        self._anchors: dict[str, tuple[Any, str, str]] = {}
        self._bases: dict[str, str] = {}
        self._dynamic: set[str] = set()
        """``<resource uri>#<name>`` of every ``$dynamicAnchor`` met so far."""
        self._declared: dict[str, set[str]] = {}
        """resource URI -> the names of the ``$dynamicAnchor``s it declares."""
        self._recursive: set[str] = set()
        """URIs of the resources whose root holds ``"$recursiveAnchor": true`` (draft 2019-09)."""
        self.nesting = 0
        """In a plain document (``plain``), the most schema objects nested in one another below the root (every
        dict a keyword other than ``enum``/``const``/``examples``/``default`` holds counts): ``deep.prepare``
        has nothing to do for a document nested less than ``deep.DEEP``."""
        self.plain = self._unmarked(root)
        """Whether no schema of the root document holds an identifier or an anchor (see ``_unmarked``)."""
        if self.plain:
            # nothing in the root document names a resource or a location: every schema in it has the base
            # "" and the root's dialect, exactly what the lookups below return for a pointer not recorded, so
            # the scan (which builds a pointer for every sub-schema) is skipped
            self._resources.setdefault("", (root, "#"))
        else:
            self._scan(root, "#", "", document=True)
        self.scope: Scope = self.enter((), self._bases.get("#", ""))
        """The dynamic scope the schema being normalized is read under (see ``enter``)."""

    def _unmarked(self, root: Any) -> bool:
        """Whether no schema that ``_scan`` would visit in the document ``root`` holds an identifier (``$id``,
        ``id``) or an anchor; also sets ``track`` as ``_scan`` does, for the schemas it visits before it stops.
        Then ``_scan`` would only record base "" and the root's dialect for each pointer, which are the
        defaults of ``_bases``/``_dialects`` lookups (``base_of`` is only asked where an ``$id`` is, which
        is then a place the scan does not visit either). Same walk as ``_scan``, without the pointers."""
        if not isinstance(root, (dict, list)):
            return True
        # schema objects and lists of them still to look at, each with the number of schema objects around it
        # (no recursion: any depth)
        todo: list[tuple[Any, int]] = [(root, 0)]
        deepest = 0
        while todo:
            schema, depth = todo.pop()
            if isinstance(schema, list):
                todo.extend((item, depth) for item in schema if isinstance(item, (dict, list)))
                continue
            if depth > deepest:
                deepest = depth
            if not _MARKS.isdisjoint(schema):
                return False
            if "unevaluatedProperties" in schema or "unevaluatedItems" in schema:
                self.track = True
            for key, value in schema.items():
                if isinstance(value, dict):
                    if key in _NAME_MAPS:
                        todo.extend((item, depth + 1) for item in value.values() if isinstance(item, (dict, list)))
                    elif key not in _NOT_SCHEMAS:
                        todo.append((value, depth + 1))
                elif isinstance(value, list) and key not in _NOT_SCHEMAS:
                    todo.append((value, depth + 1))
        self.nesting = deepest
        return True

    def _scan(
        self,
        schema: Any,
        pointer: str,
        base: str,
        document: bool = False,
        names: bool = False,
        dialect: str | None = None,
    ) -> None:
        """Records ids, anchors, base URIs and dialects below ``schema``; ``names``: a map of schemas by name
        (``$defs``, ``properties``...), whose keys are names, not keywords (a ``$defs`` entry "default");
        ``dialect``: the surrounding resource's (None: the root's)."""
        if dialect is None:
            dialect = self.root_dialect
        if isinstance(schema, list) or names:
            items = enumerate(schema) if isinstance(schema, list) else schema.items() if isinstance(schema, dict) \
                else ()  # fmt: skip
            for key, item in items:
                self._scan(item, f"{pointer}/{_escape(str(key))}", base, dialect=dialect)
            return
        if not isinstance(schema, dict):
            if document:
                self._resources.setdefault(base, (schema, pointer))
            return
        if document or "$id" in schema or "id" in schema:  # a resource root may name its own dialect
            dialect = dialect_of(schema.get("$schema")) or dialect
        legacy = is_legacy(dialect)
        self._dialects[pointer] = dialect
        retrieved = base
        ident = schema.get("$id", schema.get("id") if legacy else None)
        if legacy and "$ref" in schema:
            ident = None  # draft-07: $ref ignores its siblings, $id included
        root = document
        if isinstance(ident, str):
            uri, _, fragment = _join(base, ident).partition("#")
            if uri and not ident.startswith("#"):  # "#name" (draft-07) is only an anchor, not a new resource
                base = uri
                self._resources[uri] = (schema, pointer)
                root = True
            if fragment and not fragment.startswith("/"):
                self._anchors[f"{base}#{fragment}"] = (schema, pointer, base)
        if document:
            self._resources.setdefault(retrieved, (schema, pointer))
        for keyword in ("$anchor", "$dynamicAnchor"):  # a $ref to a dynamic anchor acts as a plain one
            anchor = schema.get(keyword) if keyword not in unknown_keywords(dialect) else None
            if isinstance(anchor, str):
                self._anchors.setdefault(f"{base}#{anchor}", (schema, pointer, base))
                if keyword == "$dynamicAnchor":
                    self._dynamic.add(f"{base}#{anchor}")
                    self._declared.setdefault(base, set()).add(anchor)
        if root and schema.get("$recursiveAnchor") is True and "$recursiveAnchor" not in unknown_keywords(dialect):
            self._recursive.add(base)  # (only a resource root is ever the target of a $recursiveRef "#")
        self._bases[pointer] = base
        self.track = self.track or "unevaluatedProperties" in schema or "unevaluatedItems" in schema
        for key, value in schema.items():
            if key in _NOT_SCHEMAS or not isinstance(value, (dict, list)):
                continue  # a scalar holds no schema (only dicts record anything; skipping it saves the pointer)
            self._scan(value, f"{pointer}/{_escape(key)}", base, names=key in _NAME_MAPS, dialect=dialect)

    def report(self, pointer: str, keyword: str, reason: str) -> None:
        """Records that ``keyword`` at ``pointer`` cannot be enforced, and why (for UnsupportedSchemaError)."""
        self.problems.append(Problem(pointer, keyword, reason))

    def dialect_at(self, pointer: str) -> str:
        """The dialect the schema at ``pointer`` is read in (the root's if that place was not scanned)."""
        return self._dialects.get(pointer, self.root_dialect)

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
        if found is None and uri not in self._supplied and uri not in self._loaded:
            known = metaschema(uri)  # json-schema.org's metaschemas: a default, resources= overrides it
            if known is not None:
                self._supplied[uri] = known
        if found is None and uri in self._supplied:
            document = load_schema(self._supplied.pop(uri))
            self._loaded.add(uri)
            self._scan(document, f"{uri}#", uri, document=True)
            found = self._resources.get(uri)
        return found

    def enter(self, scope: Scope, resource: str) -> Scope:
        """The dynamic scope after evaluation enters ``resource`` (by ``$ref`` or a nested ``$id``).

        A ``$dynamicRef`` that lands on a ``$dynamicAnchor`` goes to the *outermost* resource of the dynamic
        scope declaring that name, so of the whole path only these bindings matter: name -> the first
        resource entered that declares it. They only grow, and there are finitely many names and resources,
        so a node read once per (location, bindings) is read finitely often, recursion included.

        Draft 2019-09's ``$recursiveRef`` "#" that lands on a resource with ``"$recursiveAnchor": true`` goes to
        the outermost resource of the unbroken run of such resources at the inner end of the dynamic scope (a
        resource without the anchor stops the search, as ``$recursiveAnchor`` marks where it "can start, and
        where it stops"): the binding ``RECURSIVE`` holds that resource while the innermost one has the anchor,
        and is dropped on entering one without. One more binding with finitely many values: still finite."""
        if self._recursive:
            scope = self._enter_recursive(scope, resource)
        names = self._declared.get(resource)
        if not names:
            return scope
        bound = {name for name, _ in scope}
        added = tuple((name, resource) for name in names if name not in bound and name != RECURSIVE)
        return tuple(sorted(scope + added)) if added else scope

    def _enter_recursive(self, scope: Scope, resource: str) -> Scope:
        """``scope`` with the ``RECURSIVE`` binding updated for entering ``resource`` (see ``enter``)."""
        bound = any(name == RECURSIVE for name, _ in scope)
        if resource in self._recursive:
            return scope if bound else tuple(sorted((*scope, (RECURSIVE, resource))))
        return tuple(pair for pair in scope if pair[0] != RECURSIVE) if bound else scope

    def in_scope(self, scope: Scope, build: Callable[[], Node]) -> Node:
        """``build()`` with ``scope`` as the current dynamic scope (a lazy reference resolves later, under the
        scope of the path that created it, not the one in force when it is first followed)."""
        saved, self.scope = self.scope, scope
        try:
            return build()
        finally:
            self.scope = saved

    def _reference(self, ref: Any, base: str, pointer: str) -> Node:
        if not isinstance(ref, str):
            raise SchemaError("'$ref' must be a string", pointer)
        uri, _, fragment = _join(base, ref).partition("#")
        return self._target(uri, fragment, ref, pointer)

    def raw_target(self, ref: Any, base: str) -> Any:
        """The schema text a ``$ref`` in the root's or an already read resource names (a JSON pointer or an
        anchor), or None where it names nothing found there; reads no document and reports nothing."""
        if not isinstance(ref, str):
            return None
        uri, _, fragment = _join(base, ref).partition("#")
        found = self._resources.get(uri) if uri else (self.root, "#")
        if found is None and uri == self._bases.get("#", ""):
            found = (self.root, "#")
        if found is None:
            return None
        schema = found[0]
        fragment = unquote(fragment)
        if fragment and not fragment.startswith("/"):
            anchored = self._anchors.get(f"{uri}#{fragment}")
            return None if anchored is None else anchored[0]
        for token in fragment[1:].split("/") if fragment else ():
            found = _pointer_step(schema, token)
            if found is None:
                return None
            schema = found[1]
        return schema

    def _target(self, uri: str, fragment: str, ref: str, pointer: str) -> Node:
        """A lazy reference to ``uri#fragment``, read under the current scope with that resource entered."""
        resource = self._resource(uri)
        if resource is None:
            self.missing[pointer] = uri
            self.report(pointer, "$ref", f"the document {uri!r} was not supplied in resources= (nothing is fetched)")
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
                found = _pointer_step(schema, token)
                if found is None:
                    raise SchemaError(f"'$ref' {ref!r} points nowhere", pointer)
                token, schema = found
                target = f"{target}/{_escape(token)}"
        target_base = self._bases.get(target, target_base)
        scope = self.enter(self.scope, target_base)
        hit = self._refs.get((target, scope))
        if hit is None:
            hit = self._refs[(target, scope)] = Ref(
                target, lambda: self.in_scope(scope, lambda: self.node(schema, target, target_base))
            )
        return hit

    def _dynamic_reference(self, ref: Any, base: str, pointer: str) -> Node:
        """``$dynamicRef``: like ``$ref`` unless it first resolves to a ``$dynamicAnchor`` of its name; then to
        that anchor in the outermost resource of the dynamic scope declaring it (``self.scope`` holds exactly
        those bindings, so each path with different bindings reads its own copy of the nodes on it)."""
        if not isinstance(ref, str):
            raise SchemaError("'$dynamicRef' must be a string", pointer)
        uri, _, fragment = _join(base, ref).partition("#")
        name = unquote(fragment)
        self._resource(uri)  # scans a supplied document, so its dynamic anchors are known
        if not name or name.startswith("/") or f"{uri}#{name}" not in self._dynamic:
            return self._reference(ref, base, pointer)
        outermost = dict(self.scope).get(name, uri)
        return self._target(outermost, name, ref, pointer)

    def _recursive_reference(self, ref: Any, base: str, pointer: str) -> Node:
        """Draft 2019-09's ``$recursiveRef``: like ``$ref`` "#" (the root of the current resource) unless that
        root has ``"$recursiveAnchor": true``; then the resource ``self.scope`` binds to ``RECURSIVE`` (see
        ``enter``). The specification defines no other value than "#", so any other is refused."""
        if ref != "#":
            raise SchemaError(f"'$recursiveRef' must be \"#\" (draft 2019-09 defines no other value), not {ref!r}",
                              pointer)  # fmt: skip
        uri = base.partition("#")[0]
        if uri in self._recursive:
            uri = dict(self.scope).get(RECURSIVE, uri)
        return self._target(uri, "", ref, pointer)

    def finish(self) -> None:
        """Resolves every reference met so far (and those they lead to), and the complements left lazy by a
        recursive ``not``/``oneOf``, so all problems are known now."""
        done: set[tuple[str, Scope]] = set()
        negations: set[int] = set()
        negated = self.merger.negations
        while len(done) < len(self._refs) or len(negations) < len(negated):
            for key, ref in list(self._refs.items()):
                if key not in done:
                    done.add(key)
                    try:
                        ref.get()
                    except CycleError:
                        self.report(ref.pointer, "$ref", CYCLE)
            for key, ref in list(negated.items()):
                if key not in negations:
                    negations.add(key)
                    try:
                        ref.get()
                    except Unsupported as problem:  # where is lost (the complement is shared)
                        self.report("#", problem.keyword, problem.reason)
                        ref.settle(AnyValue())  # leniently, that `not` constrains nothing
                    except CycleError:
                        self.report("#", "$ref", CYCLE)
                        ref.settle(AnyValue())


__all__ = ["RECURSIVE", "References", "Scope"]


def _pointer_step(schema: Any, raw: str) -> tuple[str, Any] | None:
    """One JSON-pointer step: the unescaped token and the member or item of ``schema`` it names, or None."""
    token = raw.replace("~1", "/").replace("~0", "~")
    if isinstance(schema, dict) and token in schema:
        return token, schema[token]
    if isinstance(schema, list) and token.isdigit() and int(token) < len(schema):
        return token, schema[int(token)]
    return None
