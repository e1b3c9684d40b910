"""Explain: renderers over a `Resolution`; they decide nothing themselves.

tool       why a tool is allowed or removed, where, and the edit that would change it
call       why a call is allowed, asked or refused (one escaped line per decision)
decisions  call decisions as rows for `test`, `simulate` and `diff`
"""
