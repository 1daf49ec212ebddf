#!/usr/bin/env python3
"""A validator for the subset of JSON Schema (draft 2020-12) that
docs/schemas/ uses: type (one or a list), properties, required, items,
enum, const, additionalProperties (false or a schema), $defs and $ref to
"#/$defs/NAME". Annotations ($schema, $id, title, description) are read
past; any other keyword is an error in the schema, never silently ignored.

usage: jsonschema_lite.py SCHEMA DOCUMENT...   (exit 1 when one is invalid)
       errors(document, schema) -> a list of "at /path: what" messages
"""
import json, sys

ANNOTATIONS = {'$schema', '$id', 'title', 'description', '$defs'}
KEYWORDS = {'type', 'properties', 'required', 'items', 'enum', 'const', 'additionalProperties', '$ref'}
TYPES = {
    'object': lambda v: isinstance(v, dict),
    'array': lambda v: isinstance(v, list),
    'string': lambda v: isinstance(v, str),
    'integer': lambda v: isinstance(v, int) and not isinstance(v, bool) or (isinstance(v, float) and v.is_integer()),
    'number': lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    'boolean': lambda v: isinstance(v, bool),
    'null': lambda v: v is None,
}


def _check(v, s, root, at, out):
    unknown = set(s) - KEYWORDS - ANNOTATIONS
    if unknown:
        out.append(f'at {at or "/"}: the schema uses keywords this validator does not know: {sorted(unknown)}')
        return
    if '$ref' in s:
        ref = s['$ref']
        if not ref.startswith('#/$defs/') or ref[8:] not in root.get('$defs', {}):
            out.append(f'at {at or "/"}: unresolved $ref {ref}')
            return
        _check(v, root['$defs'][ref[8:]], root, at, out)
    if 'type' in s:
        types = s['type'] if isinstance(s['type'], list) else [s['type']]
        if not any(TYPES[t](v) for t in types):
            out.append(f'at {at or "/"}: {type(v).__name__} {json.dumps(v)[:60]}, want {"|".join(types)}')
            return
    if 'enum' in s and v not in s['enum']:
        out.append(f'at {at or "/"}: {json.dumps(v)[:60]} not one of {s["enum"]}')
    if 'const' in s and v != s['const']:
        out.append(f'at {at or "/"}: {json.dumps(v)[:60]}, want {json.dumps(s["const"])}')
    if isinstance(v, dict):
        props = s.get('properties', {})
        for k in s.get('required', []):
            if k not in v:
                out.append(f'at {at or "/"}: no "{k}"')
        for k, x in v.items():
            if k in props:
                _check(x, props[k], root, f'{at}/{k}', out)
            elif s.get('additionalProperties', True) is False:
                out.append(f'at {at or "/"}: "{k}" is not in the schema')
            elif isinstance(s.get('additionalProperties'), dict):
                _check(x, s['additionalProperties'], root, f'{at}/{k}', out)
    if isinstance(v, list) and 'items' in s:
        for i, x in enumerate(v):
            _check(x, s['items'], root, f'{at}/{i}', out)


def errors(document, schema):
    out = []
    _check(document, schema, schema, '', out)
    return out


def main():
    schema = json.load(open(sys.argv[1]))
    bad = 0
    for path in sys.argv[2:]:
        errs = errors(json.load(open(path)), schema)
        bad += bool(errs)
        for e in errs:
            print(f'{path}: {e}')
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
