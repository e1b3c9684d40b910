"""A grammar of shell lines for the bash oracle, as hypothesis strategies.

A line is one to three segments joined by separators; a segment is a core command (one a
policy below denies or asks for, or a harmless one), wrapped in zero to three runners (with
their options, with and without values, glued or apart), its words quoted in any of bash's
styles, optionally followed by a redirection to or from `.env` or a harmless file. Every word
names something inside the throwaway workspace, so a line can only harm its copy.
"""

from __future__ import annotations

from hypothesis import strategies as st

# core commands: (words) a policy judges; `rm`/`git push` are what the policies refuse or ask
CORES: tuple[tuple[str, ...], ...] = (
    ("rm", "x"),
    ("rm", "-f", "x"),
    ("rm", "-rf", "build"),
    ("/bin/rm", "x"),
    ("git", "push", "origin", "main"),
    ("git", "push"),
    ("git", "status"),
    ("git", "ls-remote", "--upload-pack=rm x", "."),
    ("git", "rebase", "--exec", "rm x", "HEAD~1"),
    ("git", "-c", "alias.p=push", "p", "origin", "main"),
    ("git", "log", "-1"),
    ("cat", "README.md"),
    ("true",),
    ("echo", "hi"),
)

# git's global options, each as the words it takes
GIT_GLOBALS: tuple[tuple[str, ...], ...] = (
    ("-C", "."),
    ("--no-pager",),
    ("-P",),
    ("-c", "user.name=x"),
    ("-c", "color.ui=never"),
    ("-c", "core.quotePath=false"),
    ("--git-dir=.git",),
    ("--work-tree=.",),
    ("--literal-pathspecs",),
    ("--no-replace-objects",),
)

# runners: the words before the payload
RUNNERS: tuple[tuple[str, ...], ...] = (
    ("timeout", "5"),
    ("timeout", "-s", "KILL", "5"),
    ("timeout", "--signal=KILL", "5"),
    ("timeout", "-k", "1", "5"),
    ("nice",),
    ("nice", "-n", "5"),
    ("nice", "-n5"),
    ("nice", "--adjustment=5"),
    ("nohup",),
    ("env",),
    ("env", "-i"),
    ("env", "-u", "HOME"),
    ("env", "--unset=HOME"),
    ("env", "A=1"),
    ("env", "PATH=/usr/bin:/bin"),
    ("env", "-C", "."),
    ("command",),
    ("time",),
    ("stdbuf", "-o0"),
    ("stdbuf", "--output=0"),
    ("ionice", "-c3"),
    ("ionice", "-c", "3"),
    ("chrt", "-o", "0"),
    ("taskset", "1"),
    ("taskset", "-c", "0"),
    ("flock", "lockfile"),
    ("flock", "-w", "1", "lockfile"),
    ("setpriv", "--inh-caps=-all"),
    ("prlimit", "--nofile=100"),
    ("setarch", "x86_64"),
    ("xargs", "-a", "/dev/null", "-r"),
    ("xargs", "--arg-file=/dev/null", "--no-run-if-empty"),
)

# xargs fed one line of input, with option spellings: the payload gets `x` appended
XARGS: tuple[tuple[str, ...], ...] = (
    ("xargs",),
    ("xargs", "-n", "1"),
    ("xargs", "-n1"),
    ("xargs", "--max-args=1"),
    ("xargs", "--max-args", "1"),
    ("xargs", "-L", "1"),
    ("xargs", "-d", "\\n"),
    ("xargs", "--delimiter", "\\n"),
    ("xargs", "-E", "END"),
    ("xargs", "--eof=END"),
    ("xargs", "-P", "1"),
    ("xargs", "--max-procs", "1"),
    ("xargs", "-r"),
    ("xargs", "-t"),
)

SHELLS: tuple[tuple[str, ...], ...] = (
    ("bash", "-c"),
    ("sh", "-c"),
    ("bash", "-ec"),
    ("bash", "-o", "errexit", "-c"),
    ("bash", "-co", "errexit"),
    ("bash", "--norc", "-c"),
    ("bash", "-c", "--"),
)

REDIRECTIONS = (
    "",
    "> out",
    ">> out",
    "< README.md",
    "< .env",
    "> .env",
    ">> .env",
    "2> .env",
    "&> .env",
    ">| .env",
    "3< .env",
    "<> .env",
    "> ./.env",
    "> src/../.env",
    "< '.env'",
    '>".env"',
)

# where a segment stands: bare, or inside a construct bash runs it from
NESTINGS = (
    "{}",
    "{}",
    "( {} )",
    "{{ {}; }}",
    "echo $({})",
    "echo `{}`",
    "if true; then {}; fi",
    "for v in 1; do {}; done",
    "f() {{ {}; }}; f",
    "cat <(true; {})",
    "! {}",
)

SEPARATORS = ("; ", " && ", " || ", " | ", "\n", " & ")


def quote(word: str, style: int) -> str:
    """`word` in one of bash's quoting styles (all mean the same word)."""
    plain = all(c.isalnum() or c in "-_./=,:" for c in word) and word
    if style == 0 and plain:
        return word
    if style == 1:
        return "'" + word.replace("'", "'\\''") + "'"
    if style == 2 and not any(c in word for c in '"$`\\!'):
        return f'"{word}"'
    if style == 3 and len(word) > 1 and plain:
        return f"{word[0]}'{word[1:]}'"  # partly quoted: r'm'
    if style == 4 and len(word) > 1 and plain and word[1] not in "-":
        return f"{word[0]}\\{word[1:]}"  # backslash inside: r\m
    if style == 5 and plain:
        return f"$'{word}'"
    return "'" + word.replace("'", "'\\''") + "'"


@st.composite
def segment(draw: st.DrawFn) -> str:
    core = list(draw(st.sampled_from(CORES)))
    if core[0] == "git" and draw(st.booleans()):
        globals_ = draw(st.lists(st.sampled_from(GIT_GLOBALS), max_size=2))
        core = ["git", *(w for g in globals_ for w in g), *core[1:]]
    words: list[str] = []
    for runner in draw(st.lists(st.sampled_from(RUNNERS), max_size=3)):
        words += runner
    words += core
    styles = draw(st.lists(st.integers(0, 5), min_size=len(words), max_size=len(words)))
    text = " ".join(quote(w, s) for w, s in zip(words, styles, strict=True))
    how = draw(st.integers(0, 5))
    if how == 1:  # through xargs, the last word from its input
        xargs = " ".join(quote(w, 0 if "\\" not in w else 1) for w in draw(st.sampled_from(XARGS)))
        text = f"printf 'x\\n' | {xargs} {' '.join(quote(w, 0) for w in words[:-1])}"
    elif how == 2:  # as a shell's script
        shell = " ".join(draw(st.sampled_from(SHELLS)))
        text = f"{shell} {quote(text, 1)}"
    elif how == 3:  # find's -exec
        text = f"find . -maxdepth 0 -exec {' '.join(quote(w, 0) for w in words)} \\;"
    redirection = draw(st.sampled_from(REDIRECTIONS))
    text = f"{text} {redirection}".rstrip()
    return draw(st.sampled_from(NESTINGS)).format(text)


@st.composite
def lines(draw: st.DrawFn) -> str:
    parts = draw(st.lists(segment(), min_size=1, max_size=3))
    out = parts[0]
    for part in parts[1:]:
        out += draw(st.sampled_from(SEPARATORS)) + part
    return out
