#!/usr/bin/env python3
"""The statement check of DESIGN §6 and §9: every SQL statement names its account.

DESIGN §6: every statement of the push, pull, stream, suggestion and fold paths names exactly one
account (`account_id = $1`); cross-account statements are few, listed in one place and commented.
§9: that is what lets Citus route each push, pull and fold to one node. This script is the CI
check that says so, and a ratchet: a new statement that does not name its account fails CI
unless it is added, with a reason, to .ci/cross-account-statements.txt.

Run it from anywhere:  python3 .ci/check-sql.py [--list]   (--list: every statement and its verdict; needs pglast==8.7: pip install pglast==8.7;
.ci/run installs it in its own venv). Exit 0: every statement passed; 1: a violation, an
unparseable statement, or a stale or ambiguous entry of the exception list; 2: cannot run.

What it reads
-------------
* Every numbered migration `Sources/ShortcutSyncStore/Schema/NNNN_*.sql`, split into statements by
  PostgreSQL's own parser (pglast, libpg_query).
* Every Swift string literal under `Sources/` (single-line "…", multi-line \"\"\"…\"\"\", raw #"…"#;
  nested literals inside interpolations too) whose text starts with an upper-case SQL keyword
  (SELECT, WITH, INSERT, …; the sources write SQL keywords in upper case, and this check relies
  on it). Whatever calls it (`query(`, `guardedQuery(`, `execute(`, `PostgresQuery(unsafeSQL:`,
  a prepared statement's `static let sql`, an enum's raw value such as "BEGIN"), it is checked.
  Not read: `Sources/ShortcutSyncClient/` (the device's own SQLite outbox, through GRDB: another
  database and dialect, holding one device's data), and SQL that PostgresNIO writes itself
  (`copyFrom(table:columns:)`, `LISTEN` through `listen(_:)`): these are counted in the summary.
* Swift interpolations: `\\(expr)` in a PostgresQuery literal is a bind parameter, so it becomes
  `$1`, `$2`, … in order. `\\(unescaped: expr)`, and any interpolation in a literal passed to
  `PostgresQuery(unsafeSQL:)`, is pasted text: it is replaced by the string it stands for when that
  can be found statically (a `let name = "…"` earlier in the same function, or a
  `static let member = "…"` of a type: `EventCoding.columns`), else by a plausible stand-in from
  the table UNESCAPED below (each with why it is faithful). An `unescaped:` expression that is in
  neither fails the check, so that a new one is looked at.

Which tables hold an account's data
-----------------------------------
The tables that have an `account_id` column after every migration has run (CREATE TABLE, … LIKE …
INCLUDING ALL, ALTER TABLE ADD/DROP COLUMN, DROP TABLE are followed), in `public` and `rebuild`;
tables that the sources create (CREATE [TEMP] TABLE in a literal) are added the same way.
An unqualified name is the `public` table of that name (or the `rebuild` one: both are keyed alike).

When a statement names its account (the rule; simple and conservative)
-------------------------------------------------------------------
A DML statement (SELECT, INSERT, UPDATE, DELETE, with its CTEs, subqueries, set operations) names
its account when EVERY reference to an account-keyed table in it is pinned:
  1. directly: a top-level AND-conjunct that applies to the reference says `<ref>.account_id = $n`
     (or `$n = …`; casts on the parameter are allowed; `ANY($n)`, `IN`, OR-branches do not count);
  2. through a join: a conjunct says `<ref>.account_id = <other>.account_id` where <other> is a
     pinned reference to an account-keyed table of the same query level or of an enclosing one
     (a correlated or LATERAL subquery); joins with CTEs, subqueries or unnest() never pin;
  3. an INSERT's target is pinned when its column list names `account_id` and the value inserted
     there is a parameter: in every VALUES row, or in the target list of the INSERT's SELECT.
Which conjuncts apply to a reference: those of its query level's WHERE; those of an inner JOIN's
ON to both sides; a LEFT JOIN's ON to its right side only (a RIGHT JOIN's to its left); a FULL
JOIN's to neither. An unqualified `account_id` is taken to be the reference's only when the
query level has exactly one FROM item. Anything else (OR, a CASE, a function of the column, a
USING clause, MERGE) does not pin: when unsure, the statement does not name its account.

A statement that reads or writes no account-keyed table passes (it holds no account's data).
Exempt by kind, everywhere: transaction and session control (BEGIN, COMMIT, ROLLBACK, SAVEPOINT,
RELEASE, SET, RESET, SHOW, LISTEN, UNLISTEN, NOTIFY, DISCARD). Exempt by kind in `Schema/`
only: every statement that is not DML (CREATE, ALTER, DROP, TRUNCATE, COMMENT, CREATE FUNCTION,
…): a migration runs once, on the whole database; its DML is checked like any other.
In the sources, any other statement (DDL, TRUNCATE, LOCK, COPY…) that names an account-keyed
table does not name its account (it acts on every account's rows).

The exception list
------------------
.ci/cross-account-statements.txt: one statement per line, under `## category` headers:
    <path> `<fingerprint>` <why, one line>
The fingerprint is the start of the statement as checked (whitespace collapsed to one space,
interpolations as `$n`), by default its first 80 characters; an entry covers the statements of
that file whose text starts with it. An entry that covers two different statements is ambiguous
(lengthen it), one that covers none or only statements that name their account is stale (remove
it): both fail the check, so the list only ever shrinks by hand and never hides a new statement.
Statements that the parser cannot parse fail, unless listed under a header starting with
`## unparseable`.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

PGLAST_VERSION = "8.7"

try:
    import pglast
    from pglast import ast, enums, parse_sql
    from pglast.parser import ParseError
except ImportError:
    print(f"check-sql: needs pglast=={PGLAST_VERSION} (pip install pglast=={PGLAST_VERSION})", file=sys.stderr)
    sys.exit(2)

ROOT = Path(__file__).resolve().parent.parent
SOURCES = ROOT / "Sources"
SCHEMA = SOURCES / "ShortcutSyncStore" / "Schema"
EXCEPTIONS = ROOT / ".ci" / "cross-account-statements.txt"
FINGERPRINT_LENGTH = 80

# Source folders whose literals are not PostgreSQL, with why.
NOT_POSTGRES = {
    "Sources/ShortcutSyncClient/": "the device's own SQLite database (GRDB): one device's outbox and state",
}

SQL_START = re.compile(
    r"\s*(SELECT|WITH|INSERT|UPDATE|DELETE|MERGE|CREATE|ALTER|DROP|TRUNCATE|LOCK|COPY|SET|RESET|SHOW|BEGIN|START|"
    r"COMMIT|END|ROLLBACK|ABORT|SAVEPOINT|RELEASE|LISTEN|UNLISTEN|NOTIFY|DISCARD|VACUUM|ANALYZE|CLUSTER|"
    r"REINDEX|GRANT|REVOKE|COMMENT|EXPLAIN|PREPARE|EXECUTE|DEALLOCATE|DO|CALL|VALUES|TABLE)(?![A-Za-z0-9_])")

# Stand-ins for pasted text (`\(unescaped: expr)`, or an interpolation in an unsafeSQL literal)
# that cannot be read statically. expr → (text, why the check stays faithful with it).
UNESCAPED = {
    "tables.prefix": ("", "'' or 'rebuild.': the rebuild tables have the live ones' columns, so the rule is the same"),
    "p": ("", "`let p = tables.prefix`: '' or 'rebuild.', keyed alike"),
    "table": ("projection_shortcuts",
              "a table name from a loop over ProjectionTables.names or a parameter: every one of them is account-keyed,"
              " and the statement is the same for each"),
    "names": ("projection_accounts, projection_shortcuts", "ProjectionTables.names, with the prefix, joined by ', '"),
    "columns": ("*", "committedEvents' parameter: EventCoding.columns or FoldLogCoding.columns (which the other"
                " statements that name them paste in, and so parse); which columns are read does not change the rule"),
    "order": ("account_id, version", "the bench's ORDER BY, one of two column lists"),
    'forUpdate ? "FOR UPDATE" : ""': ("FOR UPDATE", "the longer of the two"),
    "lock.description": ("FOR NO KEY UPDATE OF h", "a compaction's lock on the head: FOR KEY SHARE OF h or FOR NO KEY UPDATE OF h,"
                         " a literal at each call (the locking clause does not change which rows are named)"),
    "savepoint": ('"savepoint"', "a quoted identifier (PostgresConnection.quoted)"),
    "quoted": ('"database"', "a quoted database name (CREATE/DROP DATABASE)"),
    "milliseconds": ("10000", "an integer (lock_timeout)"),
    "signature": ("public.push_write_folded(uuid, bigint)",
                  "PushWriteFunction.signature: the function's name and its parameters' types (a CREATE FUNCTION, or a"
                  " regprocedure literal)"),
    "signature(named: name)": ("public.push_write_folded_0123456789ab(uuid, bigint)",
                               "PushWriteFunction's or RecordPullFunction's signature under the name its body gives it"),
    "PushWriteFunction.placeholders": ("$1, $2", "PushWriteFunction's call: $1…$62, the account first (the call names it, Citus routes by it)"),
    "FoldReadFunction.placeholders": ("$1, $2", "FoldReadFunction's call: $1…$14, the account first (the call names it, Citus routes by it)"),
    "groupRow": ("1, g.bundle_id", "FoldReadFunction.groupRow: a group's columns, over projection_donation_groups g"),
    "voiceRow": ("3, v.voice_shortcut_id", "FoldReadFunction.voiceRow: a voice shortcut's columns, over projection_voice_shortcuts v"),
    "PushWriteFunction.name": ("push_write_folded", "the distributed function's name"),
    "RecordPullFunction.name": ("record_pull", "the distributed function's name"),
    "FoldReadFunction.name": ("fold_read", "the distributed function's name"),
    "PullFunction.name": ("pull_changes", "the distributed function's name"),
    "FoldWriteFunction.name": ("fold_write", "the distributed function's name"),
    "FoldWriteFunction.placeholders": ("$1, $2", "FoldWriteFunction's call: $1…$51, the account first (the call names it, Citus routes by it)"),
    'PushWriteFunction.armsBody(bits: "$51")': ("", "FoldWriteFunction's body: the fold arms' statements (FoldArm.sql, each checked as"
                                                   " its own literal), inside the function's dollar quotes"),
    "AccountHead.markSQL": ("h.xmin::text", "the head's mark, an expression over the head row h"),
    "arms": ("", "PushWriteFunction's body: the fold arms' statements (FoldArm.sql, each checked as its own literal), inside"
             " the function's dollar quotes"),
}

TX_CONTROL = (ast.TransactionStmt, ast.VariableSetStmt, ast.VariableShowStmt, ast.ListenStmt, ast.UnlistenStmt,
              ast.NotifyStmt, ast.DiscardStmt)
DML = (ast.SelectStmt, ast.InsertStmt, ast.UpdateStmt, ast.DeleteStmt, ast.MergeStmt)


# --------------------------------------------------------------------------------------------
# Swift string literals


@dataclass
class SwiftLiteral:
    offset: int            # of the opening delimiter
    content_offset: int    # of the first non-blank character of the content
    segments: list         # ("text", str) and ("interp", expr source)
    before: str            # the code just before the literal
    end: int = 0           # just after the closing delimiter


class SwiftLexer:
    """Finds every string literal of a Swift file, with its interpolations (nested ones too)."""

    def __init__(self, source: str):
        self.src = source
        self.literals: list[SwiftLiteral] = []

    def run(self) -> list[SwiftLiteral]:
        self.code(0, nested=False)
        return self.literals

    def code(self, i: int, nested: bool) -> int:
        """Scans code from i; when nested (an interpolation), returns after its closing ')'."""
        src, n, depth = self.src, len(self.src), 0
        while i < n:
            if src.startswith("//", i):
                j = src.find("\n", i)
                i = n if j < 0 else j
                continue
            if src.startswith("/*", i):
                i = self.block_comment(i)
                continue
            c = src[i]
            if c in '#"':
                j = i
                while j < n and src[j] == "#":
                    j += 1
                if j < n and src[j] == '"':
                    i = self.string(i, j - i)
                    continue
                i = j if j > i else i + 1
                continue
            if nested:
                if c == "(":
                    depth += 1
                elif c == ")":
                    if depth == 0:
                        return i + 1
                    depth -= 1
            i += 1
        return i

    def block_comment(self, i: int) -> int:
        src, depth = self.src, 0
        while i < len(src):
            if src.startswith("/*", i):
                depth, i = depth + 1, i + 2
            elif src.startswith("*/", i):
                depth, i = depth - 1, i + 2
                if depth == 0:
                    return i
            else:
                i += 1
        return i

    def string(self, start: int, hashes: int) -> int:
        src = self.src
        i = start + hashes
        multiline = src.startswith('"""', i)
        i += 3 if multiline else 1
        close = ('"""' if multiline else '"') + "#" * hashes
        escape = "\\" + "#" * hashes
        segments, buf, first = [], [], None
        literal = SwiftLiteral(start, start, segments, src[max(0, start - 60):start])
        self.literals.append(literal)
        simple = {"n": "\n", "t": "\t", "r": "\r", "0": "\0", "\\": "\\", '"': '"', "'": "'"}
        while i < len(src):
            if src.startswith(close, i):
                i += len(close)
                break
            if src.startswith(escape, i):
                k = i + len(escape)
                ch = src[k] if k < len(src) else ""
                if ch == "(":
                    end = self.code(k + 1, nested=True)
                    segments.append(("text", "".join(buf)))
                    buf = []
                    segments.append(("interp", src[k + 1:end - 1]))
                    first = k if first is None else first
                    i = end
                    continue
                if ch == "u" and src.startswith("{", k + 1):
                    close_brace = src.index("}", k)
                    buf.append(chr(int(src[k + 2:close_brace], 16)))
                    i = close_brace + 1
                    continue
                if ch == "\n" and multiline:  # line continuation
                    i = k + 1
                    continue
                buf.append(simple.get(ch, ch))
                i = k + 1
                continue
            if not multiline and src[i] == "\n":  # unterminated: stop at the line's end
                break
            if first is None and not src[i].isspace():
                first = i
            buf.append(src[i])
            i += 1
        segments.append(("text", "".join(buf)))
        literal.content_offset = first if first is not None else start
        literal.end = i
        return i


# --------------------------------------------------------------------------------------------
# Statements


@dataclass
class Statement:
    path: str              # relative to the repository
    line: int
    sql: str               # as checked
    source: str            # "schema" or "swift"
    notes: list = field(default_factory=list)
    node: object = None    # the parsed statement, or None
    error: str = ""        # the parser's message
    verdict: str = ""      # names-account, no-account-table, exempt-kind, violation, unparseable
    detail: str = ""
    listed: object = None  # the exception entry that covers it

    @property
    def normalized(self) -> str:
        return " ".join(self.sql.split())

    @property
    def first_line(self) -> str:
        text = self.normalized
        return text if len(text) <= 110 else text[:107] + "…"


def line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def strip_leading_comments(sql: str) -> tuple[str, int]:
    """The statement without leading blanks and `--` / `/* */` comments, and how many characters went."""
    i = 0
    while True:
        m = re.match(r"\s+|--[^\n]*|/\*.*?\*/", sql[i:], re.S)
        if not m or not m.group(0):
            return sql[i:], i
        i += m.end()


def split_sql(text: str) -> list[tuple[int, str, object, str]]:
    """(offset, text, node or None, error) of each statement of an SQL text."""
    try:
        raws = parse_sql(text)
    except ParseError as error:
        return [(0, text, None, str(error))]
    out = []
    for raw in raws:
        end = raw.stmt_location + raw.stmt_len if raw.stmt_len else len(text)
        body, skipped = strip_leading_comments(text[raw.stmt_location:end])
        out.append((raw.stmt_location + skipped, body.strip(), raw.stmt, ""))
    return out


class Resolver:
    """Finds what a pasted interpolation stands for."""

    def __init__(self, files: dict[str, str]):
        self.files = files
        self.lexed = {path: SwiftLexer(text).run() for path, text in files.items()}
        self.static_lets: dict[tuple[str, str], str] = {}
        decl = re.compile(r"\b(?:struct|enum|class|actor|extension)\s+([A-Za-z_][A-Za-z0-9_]*)")
        member = re.compile(r"static\s+let\s+([A-Za-z_][A-Za-z0-9_]*)\s*(?::[^=]+)?=\s*(#*\")")
        for path, text in files.items():
            lexed = {lit.offset: lit for lit in self.lexed[path] if self.whole(text, lit)}
            types = [(m.start(), m.group(1)) for m in decl.finditer(text)]
            for m in member.finditer(text):
                owner = [name for at, name in types if at < m.start()]
                literal = lexed.get(m.start(2))
                if owner and literal:
                    self.static_lets[(owner[-1], m.group(1))] = self.plain_text(literal)

    @staticmethod
    def whole(text: str, literal: SwiftLiteral) -> bool:
        """Whether the literal is the whole initializer (nothing but a comment follows on its line)."""
        rest = text[literal.end:text.find("\n", literal.end) if "\n" in text[literal.end:] else len(text)]
        return re.fullmatch(r"\s*(//.*)?", rest) is not None

    @staticmethod
    def plain_text(literal: SwiftLiteral) -> str:
        return "".join(value if kind == "text" else f"\\({value})" for kind, value in literal.segments)

    def resolve(self, expr: str, path: str, offset: int, depth: int = 0) -> tuple[str, str] | None:
        """(text, how it was found) for a pasted expression, or None."""
        expr = " ".join(expr.split())
        if depth > 5:
            return None
        text = self.files[path]
        # A `let expr = "…"` earlier in the same function.
        if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", expr):
            function_start = max((m.start() for m in re.finditer(r"\bfunc\s", text[:offset])), default=0)
            lets = list(re.finditer(r"\blet\s+" + re.escape(expr) + r"\s*=\s*(#*\")", text[function_start:offset]))
            if lets:
                at = function_start + lets[-1].start(1)
                literal = next(lit for lit in self.lexed[path] if lit.offset == at)
                if self.whole(text, literal):
                    return self.paste(literal, path, depth), f"`let {expr}` above"
        # A static member of a type.
        m = re.fullmatch(r"([A-Z][A-Za-z0-9_]*)\.([a-z_][A-Za-z0-9_]*)", expr)
        if m and (m.group(1), m.group(2)) in self.static_lets:
            return self.static_lets[(m.group(1), m.group(2))], f"`{expr}`"
        if expr in UNESCAPED:
            return UNESCAPED[expr][0], f"stand-in: {UNESCAPED[expr][1]}"
        return None

    def paste(self, literal: SwiftLiteral, path: str, depth: int) -> str:
        """A plain String literal's text, its interpolations pasted."""
        parts = []
        for kind, value in literal.segments:
            if kind == "text":
                parts.append(value)
            else:
                found = self.resolve(value.removeprefix("unescaped:").strip(), path, literal.offset, depth + 1)
                parts.append(found[0] if found else value)
        return "".join(parts)


def swift_statements(files: dict[str, str], resolver: Resolver, problems: list[str]) -> tuple[list[Statement], dict]:
    statements, skipped = [], {"not PostgreSQL": 0}
    for path, text in sorted(files.items()):
        foreign = next((why for prefix, why in NOT_POSTGRES.items() if path.startswith(prefix)), None)
        for literal in resolver.lexed[path]:
            head = literal.segments[0][1] if literal.segments and literal.segments[0][0] == "text" else ""
            if not SQL_START.match(head):
                continue
            if foreign:
                skipped["not PostgreSQL"] += 1
                continue
            unsafe = literal.before.rstrip().endswith("unsafeSQL:")
            parts, notes, params = [], [], 0
            for kind, value in literal.segments:
                if kind == "text":
                    parts.append(value)
                    continue
                m = re.match(r"\s*unescaped:\s*(.*)", value, re.S)
                if m or unsafe:
                    expr = (m.group(1) if m else value).strip()
                    found = resolver.resolve(expr, path, literal.offset)
                    if found is None:
                        problems.append(f"{path}:{line_of(text, literal.offset)}: cannot tell what `\\(unescaped: {expr})`"
                                        " stands for: add a stand-in to UNESCAPED in .ci/check-sql.py")
                        parts.append("unresolved_identifier")
                        continue
                    parts.append(found[0])
                    notes.append(f"`{expr}` → `{' '.join(found[0].split())[:40]}` ({found[1][:60]})")
                else:
                    params += 1
                    parts.append(f"${params}")
            sql = "".join(parts)
            base_line = line_of(text, literal.content_offset)
            for offset, body, node, error in split_sql(sql):
                line = base_line + sql.count("\n", 0, offset) - sql[:len(sql) - len(sql.lstrip())].count("\n")
                statements.append(Statement(path, line, body, "swift", notes, node, error))
    return statements, skipped


def schema_statements() -> list[Statement]:
    statements = []
    for file in sorted(SCHEMA.glob("[0-9]*.sql")):
        text = file.read_text()
        path = file.relative_to(ROOT).as_posix()
        for offset, body, node, error in split_sql(text):
            statements.append(Statement(path, line_of(text, offset), body, "schema", [], node, error))
    return statements


# --------------------------------------------------------------------------------------------
# The schema model: which tables hold an account's data


def qualified(rangevar) -> str:
    return f"{rangevar.schemaname or 'public'}.{rangevar.relname}"


class SchemaModel:
    def __init__(self):
        self.columns: dict[str, list[str]] = {}

    def apply(self, node) -> None:
        if isinstance(node, ast.CreateStmt):
            columns = []
            for element in node.tableElts or ():
                if isinstance(element, ast.ColumnDef):
                    columns.append(element.colname)
                elif isinstance(element, ast.TableLikeClause):
                    columns.extend(self.columns.get(qualified(element.relation), []))
            name = qualified(node.relation)
            if node.relation.relpersistence == "t":
                name = f"public.{node.relation.relname}"
            self.columns[name] = columns
        elif isinstance(node, ast.AlterTableStmt):
            name = qualified(node.relation)
            for command in node.cmds or ():
                subtype = command.subtype
                if subtype == enums.AlterTableType.AT_AddColumn and isinstance(command.def_, ast.ColumnDef):
                    self.columns.setdefault(name, []).append(command.def_.colname)
                elif subtype == enums.AlterTableType.AT_DropColumn:
                    self.columns[name] = [c for c in self.columns.get(name, []) if c != command.name]
        elif isinstance(node, ast.DropStmt) and node.removeType == enums.ObjectType.OBJECT_TABLE:
            for names in node.objects:
                parts = [s.sval for s in names]
                self.columns.pop(".".join((["public"] + parts)[-2:]), None)

    def keyed(self) -> set[str]:
        return {name for name, columns in self.columns.items() if "account_id" in columns}


# --------------------------------------------------------------------------------------------
# The rule


@dataclass
class Ref:
    """A reference to an account-keyed table at one query level."""
    table: str
    alias: str
    pinned: bool = False


def conjuncts(expr) -> list:
    if expr is None:
        return []
    if isinstance(expr, ast.BoolExpr) and expr.boolop == enums.BoolExprType.AND_EXPR:
        return [c for arg in expr.args for c in conjuncts(arg)]
    return [expr]


def is_param(expr) -> bool:
    while isinstance(expr, ast.TypeCast):
        expr = expr.arg
    return isinstance(expr, ast.ParamRef)


def column_path(expr) -> tuple[str, ...] | None:
    while isinstance(expr, ast.TypeCast):
        expr = expr.arg
    if isinstance(expr, ast.ColumnRef) and all(isinstance(f, ast.String) for f in expr.fields):
        return tuple(f.sval for f in expr.fields)
    return None


def children(node):
    if isinstance(node, (list, tuple)):
        yield from node
    elif isinstance(node, ast.Node):
        for name in node.__slots__:
            value = getattr(node, name, None)
            if isinstance(value, (ast.Node, list, tuple)):
                yield value


class Checker:
    def __init__(self, keyed: set[str]):
        self.keyed = keyed
        self.keyed_names = {name.split(".", 1)[1] for name in keyed}

    def keyed_table(self, rangevar, ctes: set[str]) -> str | None:
        if not rangevar.schemaname and rangevar.relname in ctes:
            return None
        if rangevar.schemaname:
            return qualified(rangevar) if qualified(rangevar) in self.keyed else None
        return rangevar.relname if rangevar.relname in self.keyed_names else None

    # Returns the references to account-keyed tables that are not pinned, as "table (alias)".
    def statement(self, node) -> list[str]:
        self.unpinned, self.touched = [], 0
        self.visit(node, frozenset(), [])
        return self.unpinned

    def visit(self, node, ctes: frozenset, outer: list[Ref]) -> None:
        with_clause = getattr(node, "withClause", None)
        if with_clause is not None:
            names = set(ctes)
            for cte in with_clause.ctes:
                if with_clause.recursive:
                    names.add(cte.ctename)
                self.visit(cte.ctequery, frozenset(names), outer)
                names.add(cte.ctename)
            ctes = frozenset(names)
        if isinstance(node, ast.SelectStmt):
            if node.op != enums.SetOperation.SETOP_NONE:
                self.visit(node.larg, ctes, outer)
                self.visit(node.rarg, ctes, outer)
                for part in (node.sortClause, node.limitCount, node.limitOffset):
                    self.expressions(part, ctes, outer)
                return
            exprs = [node.targetList, node.groupClause, node.havingClause, node.sortClause, node.limitCount,
                     node.limitOffset, node.valuesLists, node.distinctClause, node.windowClause]
            self.level(None, node.fromClause, node.whereClause, exprs, ctes, outer)
        elif isinstance(node, ast.UpdateStmt):
            exprs = [node.targetList, node.returningClause]
            self.level(node.relation, node.fromClause, node.whereClause, exprs, ctes, outer)
        elif isinstance(node, ast.DeleteStmt):
            self.level(node.relation, node.usingClause, node.whereClause, [node.returningClause], ctes, outer)
        elif isinstance(node, ast.InsertStmt):
            table = self.keyed_table(node.relation, ctes)
            if table:
                self.touched += 1
                if not self.insert_pinned(node):
                    self.unpinned.append(f"{table} (INSERT: account_id is not a parameter)")
            if node.selectStmt is not None:
                self.visit(node.selectStmt, ctes, outer)
            self.expressions([node.onConflictClause, node.returningClause], ctes, outer)
        elif isinstance(node, ast.MergeStmt):
            self.generic(node, ctes, "MERGE is never taken to name its account")
        else:
            self.generic(node, ctes, "not DML")

    def generic(self, node, ctes, why) -> None:
        """Any keyed table named anywhere in the node is unpinned."""
        tables = list(self.rangevars(node, ctes))
        if isinstance(node, ast.DropStmt) and node.removeType == enums.ObjectType.OBJECT_TABLE:
            for names in node.objects:   # DROP TABLE names its tables as name lists, not RangeVars
                parts = [s.sval for s in names]
                name = ".".join((["public"] + parts)[-2:])
                if name in self.keyed or (len(parts) == 1 and parts[0] in self.keyed_names):
                    tables.append(name if len(parts) > 1 else parts[0])
        for table in tables:
            self.touched += 1
            self.unpinned.append(f"{table} ({why})")

    def rangevars(self, node, ctes):
        if isinstance(node, ast.RangeVar):
            table = self.keyed_table(node, ctes)
            if table:
                yield table
            return
        for child in children(node):
            yield from self.rangevars(child, ctes)

    def insert_pinned(self, node) -> bool:
        columns = [target.name for target in node.cols or ()]
        if "account_id" not in columns:
            return False
        index = columns.index("account_id")
        select = node.selectStmt
        if not isinstance(select, ast.SelectStmt) or select.op != enums.SetOperation.SETOP_NONE:
            return False
        if select.valuesLists:
            return all(len(row) > index and is_param(row[index]) for row in select.valuesLists)
        targets = select.targetList or ()
        return len(targets) > index and isinstance(targets[index], ast.ResTarget) and is_param(targets[index].val)

    def level(self, target, from_items, where, exprs, ctes, outer: list[Ref]) -> None:
        """One query level: its FROM items (and UPDATE/DELETE target), WHERE, and the rest."""
        refs: list[Ref] = []
        quals: list[tuple[object, list[Ref]]] = []
        nested: list = []      # subqueries of the FROM clause
        item_count = 0

        def walk(item) -> list[Ref]:
            nonlocal item_count
            if isinstance(item, ast.RangeVar):
                item_count += 1
                table = self.keyed_table(item, ctes)
                if not table:
                    return []
                ref = Ref(table, item.alias.aliasname if item.alias else item.relname)
                refs.append(ref)
                return [ref]
            if isinstance(item, ast.JoinExpr):
                left, right = walk(item.larg), walk(item.rarg)
                kind = item.jointype
                applies = {enums.JoinType.JOIN_INNER: left + right, enums.JoinType.JOIN_LEFT: right,
                           enums.JoinType.JOIN_RIGHT: left}.get(kind, [])
                for conjunct in conjuncts(item.quals):
                    quals.append((conjunct, applies))
                nested.append(item.quals)
                return left + right
            item_count += 1
            nested.append(item)   # RangeSubselect, RangeFunction, …
            return []

        if target is not None:
            walk(target)
        for item in from_items or ():
            walk(item)
        for conjunct in conjuncts(where):
            quals.append((conjunct, refs))
        self.touched += len(refs)

        def side(path, ref: Ref) -> bool:
            """Whether a column path is ref's account_id."""
            if path is None or path[-1] != "account_id":
                return False
            if len(path) == 1:
                return item_count == 1 and len(refs) == 1
            return path[-2] == ref.alias and (len(path) == 2 or ref.alias == ref.table.split(".")[-1])

        def pinned_other(path) -> bool:
            if path is None or len(path) < 2 or path[-1] != "account_id":
                return False
            local = [r for r in refs if r.alias == path[-2]]
            if local:
                return all(r.pinned for r in local)
            return any(r.alias == path[-2] and r.pinned for r in outer)

        changed = True
        while changed:
            changed = False
            for conjunct, applies in quals:
                if not (isinstance(conjunct, ast.A_Expr) and conjunct.kind == enums.A_Expr_Kind.AEXPR_OP
                        and [s.sval for s in conjunct.name] == ["="]):
                    continue
                for ref in applies:
                    if ref.pinned:
                        continue
                    for mine, other in ((conjunct.lexpr, conjunct.rexpr), (conjunct.rexpr, conjunct.lexpr)):
                        if side(column_path(mine), ref) and (is_param(other) or pinned_other(column_path(other))):
                            ref.pinned = changed = True
                            break
        for ref in refs:
            if not ref.pinned:
                self.unpinned.append(ref.table if ref.alias == ref.table.split(".")[-1] else f"{ref.table} {ref.alias}")
        visible = refs + outer
        for item in nested:
            self.expressions(item, ctes, visible)
        self.expressions([where] + exprs, ctes, visible)

    def expressions(self, node, ctes, outer) -> None:
        """Subqueries inside expressions (and FROM subqueries), each a query level of its own."""
        if node is None:
            return
        if isinstance(node, (ast.SelectStmt, ast.InsertStmt, ast.UpdateStmt, ast.DeleteStmt, ast.MergeStmt)):
            self.visit(node, ctes, outer)
            return
        if isinstance(node, ast.RangeVar):   # a table where no query level reads it: be strict
            table = self.keyed_table(node, ctes)
            if table:
                self.touched += 1
                self.unpinned.append(table)
            return
        if isinstance(node, ast.LockingClause):  # FOR UPDATE OF <alias>: names no new table
            return
        for child in children(node):
            self.expressions(child, ctes, outer)


# --------------------------------------------------------------------------------------------
# The exception list


@dataclass
class Entry:
    line: int
    path: str
    fingerprint: str
    why: str
    category: str
    covers: list = field(default_factory=list)


def read_exceptions(problems: list[str]) -> list[Entry]:
    entries, category = [], "(no category)"
    if not EXCEPTIONS.exists():
        return entries
    pattern = re.compile(r"^(\S+)\s+`([^`]+)`\s+(\S.*)$")
    for number, raw in enumerate(EXCEPTIONS.read_text().splitlines(), 1):
        text = raw.strip()
        if text.startswith("## "):
            category = text[3:].strip()
            continue
        if not text or text.startswith("#"):
            continue
        m = pattern.match(text)
        if not m:
            problems.append(f"{EXCEPTIONS.relative_to(ROOT)}:{number}: not `<path> `<fingerprint>` <why>`: {text[:80]}")
            continue
        entries.append(Entry(number, m.group(1), " ".join(m.group(2).split()), m.group(3).strip(), category))
    return entries


def fingerprint(statement: Statement, others: list[Statement]) -> str:
    """The first 80 characters, longer when another statement of the file starts the same."""
    text = statement.normalized
    length = FINGERPRINT_LENGTH
    while length < len(text) and any(o is not statement and o.path == statement.path and o.normalized != text
                                     and o.normalized.startswith(text[:length]) for o in others):
        length += 20
    return text[:length].rstrip().replace("`", "'")


# --------------------------------------------------------------------------------------------
# The rule's own cases, checked at every run (a broken rule fails the check, not passes it).

SELF_TEST_TABLES = {"public.events", "public.devices", "public.accounts", "public.projection_accounts",
                    "rebuild.projection_accounts"}
SELF_TEST = [
    # (verdict: True names its account, False does not, None touches no account-keyed table; SQL)
    (True, "SELECT * FROM events WHERE account_id = $1 AND seq > $2"),
    (True, "SELECT * FROM events WHERE account_id = $1::uuid"),
    (True, "SELECT * FROM events e JOIN devices d ON d.account_id = e.account_id AND d.device_id = e.device_id WHERE e.account_id = $1"),
    (True, "SELECT c.epoch FROM projection_checkpoint c LEFT JOIN projection_accounts a ON a.account_id = $1 WHERE c.name = 'live'"),
    (True, "SELECT (SELECT count(*) FROM devices d WHERE d.account_id = a.account_id) FROM accounts a WHERE a.account_id = $1"),
    (True, "SELECT * FROM devices d LEFT JOIN LATERAL (SELECT count(*) FROM events WHERE account_id = d.account_id) e ON true WHERE d.account_id = $1"),
    (True, "WITH gone AS (DELETE FROM events WHERE account_id = $1 RETURNING 1) SELECT count(*) FROM gone"),
    (True, "INSERT INTO devices (device_id, account_id, name) VALUES ($1, $2, $3)"),
    (True, "INSERT INTO events (account_id, seq) SELECT $1, s FROM unnest($2::int8[]) AS s"),
    (True, "UPDATE devices SET name = $1 WHERE device_id = $2 AND account_id = $3"),
    (True, "SELECT * FROM rebuild.projection_accounts WHERE account_id = $1"),
    (False, "SELECT count(*) FROM events"),
    (False, "SELECT * FROM events WHERE account_id = ANY($1)"),
    (False, "SELECT * FROM events WHERE account_id = $1 OR seq = 1"),
    (False, "SELECT * FROM events WHERE account_id = $1 UNION ALL SELECT * FROM events WHERE seq = $2"),
    (False, "SELECT * FROM accounts a LEFT JOIN devices d ON a.account_id = $1 AND d.account_id = a.account_id"),
    (False, "SELECT * FROM events e, devices d WHERE account_id = $1 AND d.account_id = e.account_id"),
    (False, "SELECT * FROM events e FULL JOIN devices d ON d.account_id = e.account_id WHERE e.account_id = $1"),
    (False, "SELECT * FROM unnest($1::uuid[]) AS k(a) JOIN events e ON e.account_id = k.a"),
    (False, "SELECT * FROM (SELECT * FROM events) s WHERE s.account_id = $1"),
    (False, "SELECT * FROM events WHERE account_id = $1 AND EXISTS (SELECT 1 FROM devices)"),
    (False, "WITH x AS (SELECT * FROM events) SELECT * FROM x WHERE account_id = $1"),
    (False, "INSERT INTO devices (device_id, account_id) SELECT device_id, account_id FROM devices WHERE account_id = $1"),
    (False, "INSERT INTO events SELECT * FROM events WHERE account_id = $1"),
    (False, "DELETE FROM events"),
    (False, "UPDATE devices SET name = $1 WHERE device_id = $2"),
    (False, "TRUNCATE events"),
    (False, "DROP TABLE devices"),
    (None, "SELECT * FROM projection_checkpoint WHERE name = 'live'"),
    (None, "WITH events AS (SELECT 1 AS account_id) SELECT * FROM events"),
]


def self_test() -> list[str]:
    checker = Checker(SELF_TEST_TABLES)
    wrong = []
    for expected, sql in SELF_TEST:
        unpinned = checker.statement(parse_sql(sql)[0].stmt)
        got = False if unpinned else (True if checker.touched else None)
        if got is not expected:
            wrong.append(f"check-sql self-test: expected {expected}, got {got} ({', '.join(unpinned)}): {sql}")
    return wrong


# --------------------------------------------------------------------------------------------


def main() -> int:
    problems: list[str] = self_test()
    files = {p.relative_to(ROOT).as_posix(): p.read_text() for p in sorted(SOURCES.rglob("*.swift"))}
    resolver = Resolver(files)
    schema = schema_statements()
    swift, skipped = swift_statements(files, resolver, problems)
    copy_calls = sum(len(re.findall(r"\.copyFrom\(table:", text)) for text in files.values())
    statements = schema + swift

    model = SchemaModel()
    for statement in schema:
        if statement.node is not None:
            model.apply(statement.node)
    for statement in swift:
        if isinstance(statement.node, ast.CreateStmt):
            model.apply(statement.node)
    keyed = model.keyed()
    checker = Checker(keyed)

    for statement in statements:
        node = statement.node
        if node is None:
            statement.verdict, statement.detail = "unparseable", statement.error
        elif isinstance(node, TX_CONTROL):
            statement.verdict = "exempt-kind"
        elif statement.source == "schema" and not isinstance(node, DML):
            statement.verdict = "exempt-kind"
        else:
            unpinned = checker.statement(node)
            if unpinned:
                statement.verdict, statement.detail = "violation", ", ".join(dict.fromkeys(unpinned))
            elif checker.touched:
                statement.verdict = "names-account"
            else:
                statement.verdict = "no-account-table"

    entries = read_exceptions(problems)
    for entry in entries:
        entry.covers = [s for s in statements if s.path == entry.path and s.normalized.startswith(entry.fingerprint)]
        exact = [s for s in entry.covers if s.normalized == entry.fingerprint]
        if exact:   # a whole statement as fingerprint covers that statement only
            entry.covers = exact
        distinct = {s.normalized for s in entry.covers}
        where = f"{EXCEPTIONS.relative_to(ROOT)}:{entry.line}"
        unparseable_section = entry.category.lower().startswith("unparseable")
        wanted = "unparseable" if unparseable_section else "violation"
        if len(distinct) > 1:
            problems.append(f"{where}: ambiguous, covers {len(distinct)} different statements of {entry.path}: lengthen it")
        elif not any(s.verdict == wanted for s in entry.covers):
            state = "matches no statement" if not entry.covers else f"covers a statement that is {entry.covers[0].verdict}"
            problems.append(f"{where}: stale ({state}): remove it: {entry.path} `{entry.fingerprint[:60]}…`")
        else:
            for s in entry.covers:
                if s.verdict == wanted:
                    s.listed = entry

    if "--list" in sys.argv[1:]:
        print("account-keyed tables:", ", ".join(sorted(keyed)))
        for s in statements:
            mark = f"listed: {s.listed.category}" if s.listed else s.verdict
            print(f"{mark:28} {s.path}:{s.line}: {s.first_line}")
            if s.detail and not s.listed:
                print(f"{'':28}   not pinned: {s.detail}")
        print()

    failures = [s for s in statements if s.verdict in ("violation", "unparseable") and s.listed is None]
    for s in failures:
        if s.verdict == "unparseable":
            print(f"{s.path}:{s.line}: PostgreSQL cannot parse it: {s.first_line}\n    {s.detail}")
        else:
            print(f"{s.path}:{s.line}: does not name its account: {s.first_line}\n    not pinned: {s.detail}")
        for note in s.notes:
            print(f"    pasted: {note}")
        print(f"    if it must be cross-account, list it in {EXCEPTIONS.relative_to(ROOT)} with why:\n"
              f"    {s.path} `{fingerprint(s, statements)}` <why>")
    for problem in problems:
        print(problem)

    def count(verdict, source=None):
        return sum(1 for s in statements if s.verdict == verdict and (source is None or s.source == source))

    listed = [s for s in statements if s.listed is not None and s.verdict == "violation"]
    listed_unparseable = [s for s in statements if s.listed is not None and s.verdict == "unparseable"]
    print()
    print(f"check-sql (pglast {pglast.__version__.lstrip('v')}): {len(statements)} statements checked "
          f"({len(schema)} in Schema/, {len(swift)} in Swift sources); account-keyed tables: {len(keyed)}")
    print(f"  name their account:            {count('names-account')}")
    print(f"  touch no account-keyed table:  {count('no-account-table')}")
    print(f"  exempt by kind:                {count('exempt-kind')} "
          f"({count('exempt-kind', 'schema')} migration DDL, {count('exempt-kind', 'swift')} transaction/session control)")
    print(f"  listed cross-account:          {len(listed)} (by {len(entries)} entries of {EXCEPTIONS.relative_to(ROOT)}, "
          f"{len(listed_unparseable)} of them for unparseable literals)")
    for category in dict.fromkeys(entry.category for entry in entries):
        if not category.lower().startswith("unparseable"):
            n = sum(1 for s in listed if s.listed.category == category)
            print(f"      {n:3}  {category}")
    print(f"  listed unparseable (not SQL):  {len(listed_unparseable)}")
    print(f"  not named, not listed:         {sum(1 for s in failures if s.verdict == 'violation')}")
    print(f"  unparseable, not listed:       {sum(1 for s in failures if s.verdict == 'unparseable')}")
    print(f"  not read: {skipped['not PostgreSQL']} SQLite literals in "
          f"{', '.join(NOT_POSTGRES)}; {copy_calls} copyFrom(table:) calls (COPY written by PostgresNIO)")
    if failures or problems:
        print(f"check-sql: FAILED ({len(failures)} statements, {len(problems)} other problems)")
        return 1
    print("check-sql: every statement names its account or is listed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
