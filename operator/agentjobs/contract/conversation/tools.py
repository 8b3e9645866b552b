"""What each agent CLI's events say beside the agent's words: tools, reasoning, prompts, errors.

The agent's words and the run's end come from the reader's own decoders
(``contract/reading/transcripts``), so the console shows what the verdict was
read from; this module adds only what the verdict does not read.

- Claude Code: ``tool_use`` and ``thinking`` blocks of ``assistant`` messages,
  ``tool_result`` blocks (and prompts) of ``user`` messages, the ``system``
  ``init`` event.
- Codex: ``command_execution``, ``file_change``, ``mcp_tool_call``,
  ``web_search``, ``reasoning`` and ``error`` items, started then completed
  under one ``item.id``; top-level ``error`` events (retries); the older
  shape's ``exec_command_begin``/``_end`` and ``agent_reasoning``.
- Gemini CLI: ``tool_use`` and ``tool_result`` by ``tool_id``, ``user``
  messages, ``error`` events, ``init``.
- OpenCode: ``tool`` parts (call and result in one event), ``reasoning`` parts,
  ``error`` events.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from agentjobs.contract.conversation.entries import Entry, Kind
from agentjobs.contract.reading.transcripts.meaning import JsonObject, object_of, text_of, type_of
from agentjobs.models.contract import TranscriptFormat


@dataclass(frozen=True)
class ToolResult:
    """The output of the tool call ``key`` started earlier."""

    key: str
    output: str
    failed: bool


Found = Entry | ToolResult


def found_in(transcript_format: TranscriptFormat, event: JsonObject, offset: int) -> list[Found]:
    """What ``event`` (at byte ``offset``) says beside the agent's words and the run's end."""
    if transcript_format is TranscriptFormat.CLAUDE_CODE:
        return _claude_code(event, offset)
    if transcript_format is TranscriptFormat.CODEX:
        return _codex(event, offset)
    if transcript_format is TranscriptFormat.GEMINI_CLI:
        return _gemini_cli(event, offset)
    if transcript_format is TranscriptFormat.OPENCODE:
        return _opencode(event, offset)
    return []


def shown(value: object) -> str:
    """A tool's input as a reader wants it: a string as it is, anything else as JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True)


def _text_content(content: object) -> str:
    """A message or tool result's content: a string, or its blocks' texts."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return shown(content)
    pieces = []
    for block in content:
        item = object_of(block) or {}
        text = text_of(item.get("text"))
        pieces.append(text if text is not None else f"[{text_of(item.get('type')) or 'block'}]")
    return "\n".join(pieces)


def _claude_code(event: JsonObject, offset: int) -> list[Found]:
    event_type = type_of(event)
    if event_type == "system" and event.get("subtype") == "init":
        return [_started(offset, event.get("model"), event.get("cwd"))]
    message = object_of(event.get("message"))
    if message is None or event_type not in ("assistant", "user"):
        return []
    content = message.get("content")
    if event_type == "user" and isinstance(content, str):
        return [Entry(Kind.PROMPT, offset, text=content)]
    found: list[Found] = []
    for block in content if isinstance(content, list) else []:
        item = object_of(block) or {}
        block_type = text_of(item.get("type"))
        if block_type == "tool_use":
            title = text_of(item.get("name")) or "tool"
            key = text_of(item.get("id"))
            found.append(
                Entry(Kind.TOOL, offset, title=title, input=shown(item.get("input")), key=key)
            )
        elif block_type == "thinking":
            found.append(Entry(Kind.THINKING, offset, text=text_of(item.get("thinking")) or ""))
        elif block_type == "tool_result":
            output = _text_content(item.get("content"))
            key = text_of(item.get("tool_use_id")) or ""
            found.append(ToolResult(key, output, item.get("is_error") is True))
        elif block_type == "text" and event_type == "user":
            found.append(Entry(Kind.PROMPT, offset, text=text_of(item.get("text")) or ""))
    return found


def _codex(event: JsonObject, offset: int) -> list[Found]:
    event_type = type_of(event)
    if event_type == "error":
        return [Entry(Kind.ERROR, offset, text=text_of(event.get("message")) or "an error")]
    item = object_of(event.get("item"))
    if item is not None and event_type in ("item.started", "item.updated", "item.completed"):
        return _codex_item(item, offset, done=event_type == "item.completed")
    msg = object_of(event.get("msg"))
    return _codex_old(msg, offset) if msg is not None else []


def _codex_item(item: JsonObject, offset: int, *, done: bool) -> list[Found]:
    item_type = text_of(item.get("type")) or text_of(item.get("item_type"))
    key = text_of(item.get("id"))
    if item_type == "reasoning":
        return [Entry(Kind.THINKING, offset, text=text_of(item.get("text")) or "")]
    if item_type == "error":
        return [Entry(Kind.ERROR, offset, text=text_of(item.get("message")) or "an error")]
    call = _codex_call(item, item_type)
    if call is None:
        return []
    title, tool_input, output, failed = call
    if not done:
        return [Entry(Kind.TOOL, offset, title=title, input=tool_input, key=key)]
    return [
        Entry(Kind.TOOL, offset, title=title, input=tool_input, key=key),
        ToolResult(key or "", output, failed),
    ]


def _codex_call(item: JsonObject, item_type: str | None) -> tuple[str, str, str, bool] | None:
    """A tool item's title, input, output and whether it failed; None for another item."""
    status = text_of(item.get("status"))
    if item_type == "command_execution":
        exit_code = item.get("exit_code")
        failed = status == "failed" or (type(exit_code) is int and exit_code != 0)
        output = text_of(item.get("aggregated_output")) or ""
        return "shell", text_of(item.get("command")) or "", output, failed
    if item_type == "file_change":
        changes = item.get("changes")
        listed = [
            f"{text_of(c.get('kind')) or 'change'} {text_of(c.get('path')) or '?'}"
            for c in (changes if isinstance(changes, list) else [])
            if isinstance(c, dict)
        ]
        return "file change", "\n".join(listed), status or "", status == "failed"
    if item_type == "mcp_tool_call":
        name = f"{text_of(item.get('server')) or 'mcp'}.{text_of(item.get('tool')) or 'tool'}"
        error = object_of(item.get("error"))
        message = text_of(error.get("message")) if error else None
        result = message if message is not None else shown(item.get("result"))
        return name, shown(item.get("arguments")), result, error is not None or status == "failed"
    if item_type == "web_search":
        return "web search", text_of(item.get("query")) or "", status or "", status == "failed"
    return None


def _codex_old(msg: JsonObject, offset: int) -> list[Found]:
    msg_type = type_of(msg)
    key = text_of(msg.get("call_id"))
    if msg_type == "agent_reasoning":
        return [Entry(Kind.THINKING, offset, text=text_of(msg.get("text")) or "")]
    if msg_type == "exec_command_begin":
        command = msg.get("command")
        line = (
            " ".join(c for c in command if isinstance(c, str)) if isinstance(command, list) else ""
        )
        return [Entry(Kind.TOOL, offset, title="shell", input=line, key=key)]
    if msg_type == "exec_command_end" and key is not None:
        output = (text_of(msg.get("stdout")) or "") + (text_of(msg.get("stderr")) or "")
        exit_code = msg.get("exit_code")
        return [ToolResult(key, output, type(exit_code) is int and exit_code != 0)]
    return []


def _gemini_cli(event: JsonObject, offset: int) -> list[Found]:
    event_type = type_of(event)
    if event_type == "init":
        return [_started(offset, event.get("model"), None)]
    if event_type == "message" and event.get("role") == "user":
        return [Entry(Kind.PROMPT, offset, text=_text_content(event.get("content")))]
    if event_type == "tool_use":
        title = text_of(event.get("tool_name")) or "tool"
        key = text_of(event.get("tool_id"))
        return [
            Entry(Kind.TOOL, offset, title=title, input=shown(event.get("parameters")), key=key)
        ]
    if event_type == "tool_result":
        error = object_of(event.get("error"))
        output = text_of(event.get("output"))
        if output is None or (error is not None and not output):
            output = text_of((error or {}).get("message")) or ""
        failed = event.get("status") != "success"
        return [ToolResult(text_of(event.get("tool_id")) or "", output, failed)]
    if event_type == "error":
        return [Entry(Kind.ERROR, offset, text=text_of(event.get("message")) or "an error")]
    return []


def _opencode(event: JsonObject, offset: int) -> list[Found]:
    event_type = type_of(event)
    part = object_of(event.get("part")) or {}
    if event_type == "reasoning":
        return [Entry(Kind.THINKING, offset, text=text_of(part.get("text")) or "")]
    if event_type != "tool_use":
        return []
    state = object_of(part.get("state")) or {}
    title = text_of(part.get("tool")) or "tool"
    key = text_of(part.get("callID"))
    call = Entry(Kind.TOOL, offset, title=title, input=shown(state.get("input")), key=key)
    status = text_of(state.get("status"))
    if status not in ("completed", "error"):
        return [call]
    output = text_of(state.get("output")) if status == "completed" else text_of(state.get("error"))
    return [call, ToolResult(key or "", output or "", status == "error")]


def _started(offset: int, model: object, directory: object) -> Entry:
    facts = [f"model {text_of(model)}" if text_of(model) else "", text_of(directory) or ""]
    return Entry(
        Kind.NOTE, offset, text="session started" + "".join(f"; {fact}" for fact in facts if fact)
    )
