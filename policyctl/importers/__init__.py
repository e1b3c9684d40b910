"""Import the call permissions of other agents' configurations as policyctl documents.

One module per source format, each turning the file into `calls.Translated` entries (an
effect, a policyctl entry, where it came from) and `Finding`s (what could not be translated
exactly); `calls.build_document` turns those into one policy scope. The OpenClaw config
import, which maps whole scopes rather than call permissions, is `policyctl.importers.openclaw`.

- `claude`: Claude Code `settings.json` (`permissions.allow/ask/deny`, `defaultMode`,
  `additionalDirectories`);
- `gemini`: Gemini CLI policy-engine TOML (`[[rule]]` with priorities), with
  `gemini_regex` for the regular expressions its rules carry and `gemini_effects` for the
  rules whose effect changes in a deny-wins pipeline.
"""
