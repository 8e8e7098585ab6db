"""The project's stack files, read as the Pulumi CLI reads them, and handed to a program as the CLI hands them over.

Shared by the three offline tools: the mock-engine harness (which runs the program with a stack's config), the plan
and the workload checker (which validate a stack's settings). Pure: PyYAML only, no Pulumi SDK, so the checker stays
light. `stack_files` finds every `Pulumi.<stack>.yaml`, `load_stack_config` reads one as the CLI does (below),
`engine_config` turns its values into the strings the CLI passes (objects as JSON) and `secret_keys` names the keys the
CLI would mark secret.

How the CLI reads a stack file (pulumi/pulumi sdk/go/common/workspace/loaders.go `LoadProjectStackBytes`): go-yaml v3
(gopkg.in/yaml.v3 v3.0.1, sdk/go.mod) decodes it into `any`, the CLI writes that back as YAML and decodes it again into
`config.Map`, whose values (sdk/go/common/resource/config/object.go `unmarshalObject`) are decoded into `any` too.
`StackFileLoader` is PyYAML told to behave like that; what it relies on, in go-yaml v3.0.1:

* resolve.go `resolve()`: the YAML 1.2 core schema. Booleans are `true`/`false` only (any case of the first letter or
  all caps); null is empty, `~`, `null`; `yes`/`no`/`on`/`off` stay strings (they are booleans only when decoded into a
  Go `bool`, which config values never are). "Base 60 floats are a bad idea, were dropped in YAML 1.2, and are
  purposefully unsupported here": `13:30` is the string "13:30" (PyYAML, YAML 1.1: the integer 810). Integers are Go
  `strconv.ParseInt(text without "_", base 0)` (`0x1F`, `0o17`, `017`, `0b101`), floats match `yamlStyleFloat`
  (`1e3` is 1000; PyYAML keeps it a string).
* resolve.go `parseTimestamp()`: an unquoted plain scalar shaped `2006-1-2`, `2006-1-2T15:4:5.999999999Z07:00` or
  `2006-1-2 15:4:5.999999999` resolves to a timestamp, and decode.go `scalar()` stores it as a `time.Time` even into an
  `interface{}` (decode_test.go: "implicit timestamp tag into interface"). Pulumi's `unmarshalObject` then turns the
  `time.Time` into `v.String()`: an unquoted `2026-12-24` reaches the program as the string
  "2026-12-24 00:00:00 +0000 UTC" (PyYAML: a `datetime.date`, which the plan could not even hand over). A quoted
  "2026-12-24" stays itself. Numbers pass the CLI's round trip through YAML too: a float without a fraction reaches
  the program as an integer (`2.0` -> "2").
* decode.go `mapping()`: with `uniqueKeys` (always on in v3) a key repeated in one mapping is an error
  `line N: mapping key "k" already defined at line M`; PyYAML silently keeps the last.
* object.go `isSecureValue()`: a mapping whose one key is `secure` with a string value is a secret's ciphertext
  (`aks-mlops:x:\\n  secure: v1:...`), anywhere in a value; `Secret` here.

How a secret reaches the program offline. `pulumi up` decrypts each secret with the stack's secrets provider, hands the
program the plaintext in PULUMI_CONFIG and lists the key in PULUMI_CONFIG_SECRET_KEYS (the SDK's `pulumi.Config` then
treats it as secret). The offline tools have no passphrase or key vault, and must never print the ciphertext either.
So a secret is handed over as a placeholder the key's own validation accepts, and its key is marked secret as the CLI
marks it (`engine_config`, `secret_keys`); the plan says it used one (`secret_notes`). That keeps the plan running and
truthful only where the value cannot change what the platform builds, which is why only the keys of
`SECRET_PLACEHOLDERS` may be secret: who gets cluster-admin and who gets the alerts, whose values the program only
passes on to Azure (as secrets: components.base.stack.secret_where_set). `adminGroupObjectIds` may not: each group
names a resource of its own (its Grafana admin role assignment), and a name cannot be kept secret. Any other
setting of this project (pools, teams, network, versions...) decides the resources and their sizes: a secret there is
refused with one `ConfigError` naming the key (the plan and the checker exit 2), because a placeholder would plan
something else than `pulumi up` builds. A secret of an unknown key gets a placeholder, so the settings layer still
refuses the key itself (shown as `[secret]`); other namespaces' secrets (provider credentials) get a placeholder
string, the offline engine reads none of them.
"""

from __future__ import annotations

import base64
import binascii
import calendar
import copy
import functools
import json
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

import yaml

from components.config.defaults import TOP_LEVEL_KEYS
from components.config.errors import PROJECT, ConfigError

PROJECT_DIR = Path(__file__).resolve().parent.parent
# `python -m offline check ...` runs the workload checker: the word is a subcommand, so no stack may be named so.
CHECK_SUBCOMMAND = "check"
# `python -m offline simulate ...` replays a job trace (offline.simulate): no stack may be named so either.
SIMULATE_SUBCOMMAND = "simulate"

# How a secret, or a placeholder standing in for one, is shown in any message.
SHOWN_SECRET = "[secret]"


class StackFileError(ValueError):
    """A stack file the Pulumi CLI would refuse to load: one line naming the file, the line and what is wrong."""


@dataclass(frozen=True)
class Secret:
    """A `secure:` value of a stack file: ciphertext only the CLI, with the stack's secrets provider, can decrypt."""

    ciphertext: str = field(repr=False)

    def __repr__(self) -> str:
        return SHOWN_SECRET


class Redacted(str):
    """A placeholder handed to the program instead of a secret: any error naming it shows `[secret]`."""

    __slots__ = ()

    def __repr__(self) -> str:
        return SHOWN_SECRET


def _guid(number: int) -> str:
    return f"00000000-0000-0000-0000-{number:012d}"


def _email(number: int) -> str:
    # .invalid: a top-level domain reserved never to resolve (RFC 2606), so nothing is ever sent there.
    return f"secret-{number}@placeholder.invalid"


# The settings that may be secret, and the placeholder standing in for each secret part of one: () is the whole value,
# (i,) its i-th list item. Each placeholder passes the key's validation (GUID, email address), and placeholders of one
# list differ from each other (the settings refuse an entry listed twice). What the program does with them:
# deployerObjectId: the principal of the deployer's cluster-admin role assignment; alertEmails: the action group's
# email receivers (named after a hash of the address). Neither changes which resources exist or their sizes;
# `pulumi preview` checks the real values.
SECRET_PLACEHOLDERS: dict[str, Callable[[tuple[int, ...]], Any]] = {
    "deployerObjectId": lambda at: _guid(0) if at == () else None,
    "alertEmails": lambda at: [_email(1)] if at == () else _email(at[0] + 1) if len(at) == 1 else None,
}
# Other namespaces' secrets (provider credentials): the offline engine's fake providers read none of them.
OTHER_NAMESPACE_PLACEHOLDER = "offline-placeholder"


def namespaced(config: Mapping[str, Any]) -> dict[str, Any]:
    """Config keys with their namespace (`gpuPools` -> `aks-mlops:gpuPools`), as the CLI stores them."""
    return {key if ":" in key else f"{PROJECT}:{key}": value for key, value in config.items()}


def engine_config(stack_config: Mapping[str, Any]) -> dict[str, str]:
    """Stack config as the CLI hands it to a program: namespaced keys, strings, objects as JSON; a key without a value
    (or null) as "" (the CLI warns "No value for configuration key", loaders.go `checkForEmptyConfig`); each secret as
    its placeholder (module docstring), or a `ConfigError` naming a setting that may not be secret."""
    return {full_key: _engine_text(value) for full_key, value in _with_placeholders(stack_config).items()}


def secret_keys(stack_config: Mapping[str, Any]) -> list[str]:
    """The namespaced keys the CLI lists in PULUMI_CONFIG_SECRET_KEYS: those whose value holds a secret anywhere."""
    return sorted(key for key, value in namespaced(stack_config).items() if _holds_secret(value))


def secret_notes(stack_config: Mapping[str, Any]) -> list[str]:
    """One line per secret the offline tools replace by a placeholder, for the plan to say so."""
    return [
        f"{key} is a secret: the offline plan cannot decrypt it and uses a placeholder "
        "(pulumi preview checks its value)"
        for key in secret_keys(stack_config)
    ]


def _engine_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _go_json_float(value)
    return json.dumps(value)


def _go_json_float(value: float) -> str:
    """A float as Go's encoding/json writes it (how the CLI's config/object.go turns one into the program's string):
    the shortest digits that read back the same, positional unless below 1e-6 or from 1e21, exponent without padding."""
    if value.is_integer() and abs(value) < 1e21:
        return str(int(value))
    if value != 0 and (abs(value) < 1e-6 or abs(value) >= 1e21):
        mantissa, _, exponent = f"{value!r}".replace("E", "e").partition("e")
        return f"{mantissa}e{'-' if exponent.startswith('-') else '+'}{exponent.lstrip('+-').lstrip('0') or '0'}"
    return format(Decimal(repr(value)), "f")


def _holds_secret(value: Any) -> bool:
    if isinstance(value, Secret):
        return True
    if isinstance(value, Mapping):
        return any(_holds_secret(item) for item in value.values())
    if isinstance(value, list):
        return any(_holds_secret(item) for item in value)
    return False


def _with_placeholders(stack_config: Mapping[str, Any]) -> dict[str, Any]:
    known = {spec.name for spec in TOP_LEVEL_KEYS}
    result: dict[str, Any] = {}
    for full_key, value in namespaced(stack_config).items():
        namespace, _, name = full_key.partition(":")
        if not _holds_secret(value):
            result[full_key] = value
        elif namespace != PROJECT:
            result[full_key] = _replace_secrets(value, lambda _path: Redacted(OTHER_NAMESPACE_PLACEHOLDER))
        elif name not in known:
            # The settings layer refuses the unknown key itself; the placeholder keeps the ciphertext out of the error.
            result[full_key] = Redacted("")
        else:
            result[full_key] = _replace_secrets(value, _project_placeholder(name))
    return result


def _project_placeholder(name: str) -> Callable[[tuple[Any, ...]], Any]:
    def placeholder(path: tuple[Any, ...]) -> Any:
        make = SECRET_PLACEHOLDERS.get(name)
        found = make(path) if make is not None and all(isinstance(step, int) for step in path) else None
        if found is None:
            allowed = ", ".join(SECRET_PLACEHOLDERS)
            raise ConfigError(
                name + "".join(f"[{step}]" if isinstance(step, int) else f".{step}" for step in path),
                Secret(""),
                "is a secret (secure:), which the offline plan and checker cannot decrypt, and this setting decides "
                f"what the platform builds: keep it in plain text (settings that may be secret: {allowed})",
            )
        return Redacted(found) if isinstance(found, str) else found

    return placeholder


def _replace_secrets(value: Any, placeholder: Callable[[tuple[Any, ...]], Any], path: tuple[Any, ...] = ()) -> Any:
    if isinstance(value, Secret):
        return placeholder(path)
    if isinstance(value, Mapping):
        return {key: _replace_secrets(item, placeholder, (*path, key)) for key, item in value.items()}
    if isinstance(value, list):
        return [_replace_secrets(item, placeholder, (*path, index)) for index, item in enumerate(value)]
    return value


def stack_names(project_dir: Path = PROJECT_DIR) -> list[str]:
    """The stacks `python -m offline` can run or check: every stack file but one named like the subcommand."""
    return sorted(name for name in stack_files(project_dir) if name not in (CHECK_SUBCOMMAND, SIMULATE_SUBCOMMAND))


def program_dir(project_dir: Path = PROJECT_DIR) -> Path:
    """Where the project's program is: Pulumi.yaml's `main` (a folder, relative to the project), else the project
    (examples/fleet runs this project's program as its own stacks)."""
    project_file = project_dir / "Pulumi.yaml"
    main = yaml.safe_load(project_file.read_text(encoding="utf-8")).get("main") if project_file.is_file() else None
    return (project_dir / main).resolve() if isinstance(main, str) else project_dir


def stack_files(project_dir: Path = PROJECT_DIR) -> dict[str, Path]:
    """Every `Pulumi.<stack>.yaml` of the project, by stack name."""
    return {path.name[len("Pulumi.") : -len(".yaml")]: path for path in sorted(project_dir.glob("Pulumi.*.yaml"))}


# --- go-yaml v3's scalars ------------------------------------------------------------------------------------------

_GO_PLAIN_TAG = "tag:aks-mlops,2026:go-yaml-plain"
_MERGE_TAG = "tag:yaml.org,2002:merge"
_CORE = "tag:yaml.org,2002:"
# resolve.go `resolveMap`: the plain scalars found by lookup.
_GO_WORDS: dict[str, Any] = {
    **dict.fromkeys(("true", "True", "TRUE"), True),
    **dict.fromkeys(("false", "False", "FALSE"), False),
    **dict.fromkeys(("", "~", "null", "Null", "NULL"), None),
    **dict.fromkeys((".nan", ".NaN", ".NAN"), math.nan),
    **dict.fromkeys((".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF"), math.inf),
    **dict.fromkeys(("-.inf", "-.Inf", "-.INF"), -math.inf),
}
_GO_NULLS = frozenset(text for text, value in _GO_WORDS.items() if value is None)
# resolve.go `yamlStyleFloat`, and Go's ParseInt with base 0 on the text without underscores.
_GO_FLOAT = re.compile(r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?")
_GO_INT = re.compile(r"([-+]?)(0[bB][01]+|0[oO][0-7]+|0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*)")
# resolve.go `allowedTimestampFormats`, as Go's time.Parse reads those layouts (1-2 digit fields but the year,
# fractional seconds after a dot or comma, `Z` or a +hh:mm offset).
_D = "[0-9]"
_GO_TIMESTAMP = re.compile(
    rf"({_D}{{4}})-({_D}{_D}?)-({_D}{_D}?)"
    rf"(?:[Tt]({_D}{_D}?):({_D}{_D}?):({_D}{_D}?)(?:[.,]({_D}+))?(Z|[-+]{_D}{_D}:{_D}{_D})"
    rf"|[ ]({_D}{_D}?):({_D}{_D}?):({_D}{_D}?)(?:[.,]({_D}+))?)?"
)


def _go_timestamp(text: str) -> str | None:
    """An unquoted timestamp as the program receives it: Go's `time.Time.String()` of what go-yaml parsed.

    No offset, `Z` or a zero offset is UTC (the CLI's round trip writes a zero offset back as `Z`); any other offset is
    `+hhmm +hhmm`, Go's name for a zone it only knows by its offset. (Go would name it after the machine's own zone
    where that has the same offset at that time, e.g. `+0100 CET` on a Berlin machine in winter; CI runners and Pulumi
    Deployments run in UTC.)"""
    match = _GO_TIMESTAMP.fullmatch(text)
    if match is None:
        return None
    year, month, day = (int(group) for group in match.group(1, 2, 3))
    clock = match.group(4, 5, 6) if match.group(4) else match.group(9, 10, 11) if match.group(9) else ("0", "0", "0")
    hour, minute, second = (int(group) for group in clock)
    fraction = (match.group(7) or match.group(12) or "")[:9].rstrip("0")
    zone = match.group(8) or "Z"
    offset_hours, offset_minutes = (0, 0) if zone == "Z" else (int(zone[1:3]), int(zone[4:6]))
    if not (1 <= month <= 12 and 1 <= day <= calendar.monthrange(year, month)[1]):
        return None
    if hour > 23 or minute > 59 or second > 59 or offset_hours > 24 or offset_minutes > 60:
        return None
    shown = f"{year:04d}-{month:02d}-{day:02d} {hour:02d}:{minute:02d}:{second:02d}"
    shown += f".{fraction}" if fraction else ""
    if offset_hours == offset_minutes == 0:
        return f"{shown} +0000 UTC"
    offset = f"{zone[0]}{offset_hours:02d}{offset_minutes:02d}"
    return f"{shown} {offset} {offset}"


def _go_resolve(text: str, *, timestamps: bool = True) -> tuple[str, Any]:
    """go-yaml v3's `resolve()` of an untagged plain scalar: (its core tag's name, the value the program gets)."""
    if text in _GO_WORDS:
        value = _GO_WORDS[text]
        kind = "null" if value is None else "bool" if isinstance(value, bool) else "float"
        return kind, value
    if text.startswith("."):
        if re.fullmatch(r"\.[0-9]+(?:[eE][-+]?[0-9]+)?", text):
            return "float", _go_number(float(text))
        return "str", text
    if not text[:1] or text[0] not in "+-0123456789":
        return "str", text
    if timestamps and (stamp := _go_timestamp(text)) is not None:
        return "timestamp", stamp
    plain = text.replace("_", "")
    if (number := _GO_INT.fullmatch(plain)) is not None:
        sign, digits = number.groups()
        prefixed = {"0x": 16, "0o": 8, "0b": 2}.get(digits[:2].lower())
        if prefixed is not None:
            magnitude = int(digits[2:], prefixed)
        else:
            # A leading 0 means octal, as in Go source (YAML 1.1's 0777, which go-yaml v3 keeps).
            magnitude = int(digits, 8 if digits.startswith("0") else 10)
        value = -magnitude if sign == "-" else magnitude
        # ParseInt (int64), then ParseUint (uint64, no sign); beyond both, the float branch below.
        if -(2**63) <= value < 2**63 or (not sign and value < 2**64):
            return "int", value
    if _GO_FLOAT.fullmatch(plain) and math.isfinite(parsed := float(plain)):
        return "float", _go_number(parsed)
    return "str", text


def _go_number(value: float) -> float | int:
    """A float after the CLI's round trip through YAML: Go writes 2.0 as `2`, which reads back as the integer 2."""
    return int(value) if value.is_integer() and abs(value) < 1e21 else value


class DuplicateKeyError(yaml.MarkedYAMLError):
    """go-yaml v3's "mapping key ... already defined at line N"."""


class StackFileLoader(yaml.SafeLoader):
    """YAML as the Pulumi CLI reads stack files: go-yaml v3's scalars, keys unique (module docstring).

    PyYAML follows YAML 1.1 (`yes`/`no`/`on`/`off` booleans, base-60 numbers, dates) and keeps the last of two equal
    keys; reading the file as the CLI does makes the offline plan refuse what `pulumi up` refuses and accept what it
    accepts. Every plain scalar is resolved by `_go_resolve`; quoted ones are strings."""

    def resolve(self, kind: Any, value: Any, implicit: Any) -> Any:
        if kind is yaml.ScalarNode and implicit[0]:
            return _MERGE_TAG if value == "<<" else _GO_PLAIN_TAG
        return super().resolve(kind, value, implicit)  # type: ignore[no-untyped-call]

    def construct_document(self, node: yaml.Node) -> Any:
        _refuse_duplicate_keys(node)
        return super().construct_document(node)


def _refuse_duplicate_keys(root: yaml.Node) -> None:
    """decode.go `mapping()`: two keys of one mapping with the same kind and text (before merges) are an error."""
    pending, seen = [root], set()
    while pending:
        node = pending.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, yaml.MappingNode):
            first: dict[tuple[type, str], yaml.Node] = {}
            for key, _ in node.value:
                if not isinstance(key.value, str):
                    continue
                earlier = first.setdefault((type(key), key.value), key)
                if earlier is not key:
                    raise DuplicateKeyError(
                        problem=f"mapping key {json.dumps(key.value)} already defined at line "
                        f"{earlier.start_mark.line + 1}",
                        problem_mark=key.start_mark,
                    )
            pending += [item for pair in node.value for item in pair]
        elif isinstance(node, yaml.SequenceNode):
            pending += node.value


def _construct_plain(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> Any:
    return _go_resolve(node.value)[1]


def _construct_tagged(wanted: str) -> Callable[[yaml.SafeLoader, yaml.ScalarNode], Any]:
    """An explicit `!!int`, `!!float`, `!!bool`, `!!null` or `!!timestamp`: resolved as go-yaml does, or its error."""

    def construct(loader: yaml.SafeLoader, node: yaml.Node) -> Any:
        if not isinstance(node, yaml.ScalarNode):
            return _construct_any(loader, node)
        # go-yaml tries a timestamp only untagged or tagged !!timestamp.
        kind, value = _go_resolve(node.value, timestamps=wanted == "timestamp")
        if kind == wanted or (wanted == "float" and kind == "int"):
            return value
        raise yaml.constructor.ConstructorError(
            None, None, f"cannot decode !!{kind} `{node.value}` as a !!{wanted}", node.start_mark
        )

    return construct


def _construct_binary(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> str:
    """`!!binary`: go-yaml decodes the base64 into a Go string, which reaches the program as text."""
    try:
        return base64.b64decode("".join(node.value.split()), validate=True).decode("utf-8", errors="replace")
    except (binascii.Error, ValueError):
        raise yaml.constructor.ConstructorError(
            None, None, "!!binary value contains invalid base64 data", node.start_mark
        ) from None


def _construct_any(loader: yaml.SafeLoader, node: yaml.Node) -> Any:
    """A tag go-yaml does not resolve (`!Ref`, `!!set`, `!!omap`...): its node as a plain string, list or mapping."""
    if isinstance(node, yaml.MappingNode):
        return loader.construct_mapping(node, deep=True)
    if isinstance(node, yaml.SequenceNode):
        return loader.construct_sequence(node, deep=True)
    return node.value


StackFileLoader.add_constructor(_GO_PLAIN_TAG, _construct_plain)
StackFileLoader.add_constructor(_MERGE_TAG, lambda loader, node: node.value)
for _name in ("int", "float", "bool", "null", "timestamp"):
    StackFileLoader.add_constructor(_CORE + _name, _construct_tagged(_name))
StackFileLoader.add_constructor(_CORE + "binary", _construct_binary)
for _name in ("set", "omap", "pairs"):
    StackFileLoader.add_constructor(_CORE + _name, _construct_any)
StackFileLoader.add_constructor(None, _construct_any)


# --- reading a stack file ------------------------------------------------------------------------------------------


def load_stack_config(stack: str, project_dir: Path = PROJECT_DIR) -> dict[str, Any]:
    """The `config` of `Pulumi.<stack>.yaml` as the CLI reads it: keys as written, values as the program gets them
    (strings, numbers, booleans, None, lists, objects; `Secret` for each `secure:` value). A file the CLI would not
    load is one `StackFileError`."""
    path = project_dir / f"Pulumi.{stack}.yaml"
    if not path.exists():
        raise FileNotFoundError(f"no stack file {path.name}; stacks: {', '.join(stack_files(project_dir))}")
    if not path.is_file():
        raise StackFileError(f"{path.name}: is not a regular file")
    # A copy: callers edit what they get (overrides), and the parse of these bytes is kept for the next caller.
    return copy.deepcopy(_parsed_stack_config(path.name, path.read_bytes()))


@functools.lru_cache(maxsize=64)
def _parsed_stack_config(file_name: str, content: bytes) -> dict[str, Any]:
    """The config of a stack file's content. Kept by content, not by path, so an edited file is read again: the
    tests and the offline plan read the same few files hundreds of times, and the pure-Python parse is the cost."""
    document, config_line = _read_stack_file(file_name, content)
    config = document.get("config")
    if config is None:
        return {}
    try:
        return {_go_key(key): _as_config_value(value, _go_key(key), ()) for key, value in config.items()}
    except RecursionError:
        raise StackFileError(f"{file_name}: line {config_line}: an alias refers to itself") from None
    except StackFileError as error:
        raise StackFileError(f"{file_name}: {error}") from None


def _read_stack_file(file_name: str, content: bytes) -> tuple[dict[str, Any], int]:
    """The stack file's document (a mapping whose `config` is a mapping or absent) and the line of its `config`."""
    loader = StackFileLoader(content)
    try:
        # go-yaml's Unmarshal reads the first document only.
        node = loader.get_node() if loader.check_node() else None
        if node is None:
            return {}, 1
        _refuse_duplicate_keys(node)
        if not isinstance(node, yaml.MappingNode):
            raise StackFileError(
                f"{file_name}: line {node.start_mark.line + 1}: a stack file is a mapping (config: ...), "
                f"not {_kind(node)}"
            )
        config_node = next((value for key, value in node.value if key.value == "config"), None)
        null = config_node is not None and config_node.tag == _GO_PLAIN_TAG and config_node.value in _GO_NULLS
        if config_node is not None and not isinstance(config_node, yaml.MappingNode) and not null:
            raise StackFileError(
                f"{file_name}: line {config_node.start_mark.line + 1}: config is a mapping of keys to values, "
                f"not {_kind(config_node)}"
            )
        document = loader.construct_document(node)
        return document, config_node.start_mark.line + 1 if config_node is not None else 1
    except yaml.MarkedYAMLError as error:
        raise StackFileError(f"{file_name}: {describe_yaml_error(error)}") from None
    except yaml.reader.ReaderError as error:
        raise StackFileError(f"{file_name}: {describe_reader_error(error)}") from None
    except yaml.YAMLError as error:
        raise StackFileError(f"{file_name}: is not valid YAML: {' '.join(str(error).split())}") from None
    except RecursionError:
        raise StackFileError(f"{file_name}: is nested too deeply to read") from None
    finally:
        loader.dispose()


def _kind(node: yaml.Node) -> str:
    if isinstance(node, yaml.SequenceNode):
        return "a list"
    if isinstance(node, yaml.MappingNode):
        return "a mapping"
    return f"the single value {node.value!r}"


def describe_yaml_error(error: yaml.MarkedYAMLError) -> str:
    """One line: where (line, column) and what, with the enclosing construct's start when PyYAML names one."""
    problem = error.problem or error.context or "is not valid YAML"
    if "'\\t'" in problem:
        problem = problem.replace("character '\\t'", "a tab") + " (YAML indents with spaces, never tabs)"
    mark = error.problem_mark or error.context_mark
    where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark is not None else ""
    context = ""
    if error.context and error.problem and error.context_mark is not None:
        context = f" ({error.context} at line {error.context_mark.line + 1}, column {error.context_mark.column + 1})"
    if isinstance(error, DuplicateKeyError) and mark is not None:
        where = f"line {mark.line + 1}: "
    return f"{where}{problem}{context}"


def describe_reader_error(error: yaml.reader.ReaderError) -> str:
    """PyYAML's ReaderError (bytes that are not UTF-8 text, or a control character) as one line."""
    if error.encoding == "unicode":
        return (
            f"contains the control character U+{error.character:04X} at offset {error.position}, which YAML does not "
            "allow (a binary file?)"
        )
    return f"is not UTF-8 text (byte 0x{error.character:02x} at offset {error.position}): a binary file?"


def _as_config_value(value: Any, key: str, path: tuple[Any, ...]) -> Any:
    """A decoded value as Pulumi's config keeps it: `{secure: <string>}` a `Secret`, mapping keys as strings (Go's
    `%v`), and no NaN or infinity (the CLI cannot write them as JSON: "json: unsupported value")."""
    if isinstance(value, Mapping):
        if len(value) == 1 and isinstance(value.get("secure"), str):
            return Secret(value["secure"])
        return {_go_key(item_key): _as_config_value(item, key, (*path, item_key)) for item_key, item in value.items()}
    if isinstance(value, list):
        return [_as_config_value(item, key, (*path, index)) for index, item in enumerate(value)]
    if isinstance(value, float) and not math.isfinite(value):
        where = key + "".join(f"[{step}]" if isinstance(step, int) else f".{step}" for step in path)
        raise StackFileError(f"{where}: {value} is no value the Pulumi CLI can hand over (JSON has no NaN or infinity)")
    return value


def _go_key(key: Any) -> str:
    if isinstance(key, str):
        return key
    if key is None:
        return "<nil>"
    return _engine_text(key)


def stack_settings_raw(config: Mapping[str, Any]) -> dict[str, str]:
    """The project's keys of a stack config as the program's `load_settings` receives them from the engine."""
    prefix = f"{PROJECT}:"
    return {key[len(prefix) :]: value for key, value in engine_config(config).items() if key.startswith(prefix)}
