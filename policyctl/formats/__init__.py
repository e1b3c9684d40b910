"""Formats: bytes -> located, schema-checked values, and back.

read           YAML (from ruamel.yaml's event stream), TOML and JSON -> `LocMap`/`LocSeq`
files          capped, regular-file-only reads; where `extends` may reach
tomlpos        line and column of every TOML key and item
jsonpos        a fast located JSON reader (large generated policies, bundles)
schema_errors  pydantic's errors -> located diagnostics with a did-you-mean
strict         the pydantic base of every file format operators write
fmt            canonical YAML/JSON formatting that keeps comments
"""
