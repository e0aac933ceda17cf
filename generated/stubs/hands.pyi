# Generated from packages/contracts by `pnpm gen` (tools/codegen). Do not edit by hand.

"""The hands tools as a Python code sandbox binds them: await each call."""

from typing import Literal, TypedDict


class ShellRunCommand(TypedDict):
    command: str
    stdout: str
    stderr: str
    exit: int | None
    duration_ms: int
    timed_out: bool
    changes: ShellRunCommandChanges
    note: str | None


class ShellRunResult(TypedDict):
    cwd: str
    commands: list[ShellRunCommand]
    exit: int | None
    duration_ms: int
    timed_out: bool


async def shell_run(commands: list[str], cwd: str | None = None) -> ShellRunResult:
    """Run `commands` as bash lines in order, each with its own exit, stdout, stderr and what it changed on disk; a failing line does not stop the rest. Long or interactive work goes to shell_background. Drive it from python_execution: batch the commands, read r["commands"][i]["stdout"], print only what you need."""
    ...


class ShellBackgroundResult(TypedDict):
    id: str
    cwd: str
    commands: list[str]
    pid: int
    status: Literal["running", "exited", "stopped"]
    note: str | None
    is_already_running: bool


async def shell_background(commands: list[str], id: str | None = None, cwd: str | None = None) -> ShellBackgroundResult:
    """Start `commands` as one bash script in a terminal and return its `id` at once; the same script while live returns that shell. Then poll shell_logs in python_execution."""
    ...


class ShellLogsChanges(TypedDict):
    created: list[str]
    modified: list[str]
    deleted: list[str]
    renamed: list[ShellLogsChangesRenamed]
    counts: ShellLogsChangesCounts
    outside_roots: int
    is_complete: bool
    note: str | None


class ShellLogsResult(TypedDict):
    id: str
    lines: list[str]
    dropped_lines: int
    is_screen: bool
    status: Literal["running", "exited", "stopped"]
    exit: int | None
    silent_ms: int | None
    cpu_ms: int | None
    process_count: int
    is_waiting_for_input: bool | None
    changes: ShellLogsChanges


async def shell_logs(id: str, n: int = 200) -> ShellLogsResult:
    """Return a background shell's last `n` lines, status and exit, at once; since your previous read, `dropped_lines` counts lines scrolled away unseen and `changes` what it changed on disk; `silent_ms`, `cpu_ms`, `process_count` and `is_waiting_for_input` say whether a quiet shell is working or waiting for you."""
    ...


class ShellTypeResult(TypedDict):
    id: str
    text: str
    is_enter: bool
    status: Literal["running", "exited", "stopped"]


async def shell_type(id: str, text: str, is_enter: bool = True) -> ShellTypeResult:
    """Type `text` into a running background shell's terminal, then Enter unless `is_enter` is false."""
    ...


class ShellStopChanges(TypedDict):
    created: list[str]
    modified: list[str]
    deleted: list[str]
    renamed: list[ShellStopChangesRenamed]
    counts: ShellStopChangesCounts
    outside_roots: int
    is_complete: bool
    note: str | None


class ShellStopResult(TypedDict):
    id: str
    status: Literal["running", "exited", "stopped"]
    exit: int | None
    changes: ShellStopChanges
    note: str | None


async def shell_stop(id: str) -> ShellStopResult:
    """Kill a background shell's whole process tree and forget its `id` and output."""
    ...


class CopyResult(TypedDict):
    src: str
    dest: str


async def copy(src: str, dest: str, is_overwrite: bool = False) -> CopyResult:
    """Copy a file, symlink or directory tree from `src` to `dest`; an existing `dest` is refused unless `is_overwrite`."""
    ...


class MoveResult(TypedDict):
    src: str
    dest: str


async def move(src: str, dest: str, is_overwrite: bool = False) -> MoveResult:
    """Move or rename `src` to `dest`, across filesystems too; an existing `dest` is refused unless `is_overwrite`."""
    ...


class DeletePath(TypedDict):
    path: str
    is_deleted: bool


class DeleteResult(TypedDict):
    paths: list[DeletePath]


async def delete(paths: list[str]) -> DeleteResult:
    """Delete each of `paths`, directories with their contents; a path already missing gives `is_deleted` false."""
    ...


class CreateDirectoryPath(TypedDict):
    path: str
    is_created: bool


class CreateDirectoryResult(TypedDict):
    paths: list[CreateDirectoryPath]


async def create_directory(paths: list[str]) -> CreateDirectoryResult:
    """Create each of `paths` with any missing parents; an existing directory gives `is_created` false."""
    ...


class FileExistsPath(TypedDict):
    path: str
    is_exists: bool


class FileExistsResult(TypedDict):
    paths: list[FileExistsPath]


async def file_exists(paths: list[str]) -> FileExistsResult:
    """Report whether each of `paths` exists, without reading it; a symlink counts as itself."""
    ...


class ErrorEnvelope(TypedDict):
    tool: str
    code: Literal["invalid_input", "unknown_tool", "disabled", "refused", "outside_roots", "access_denied", "not_found", "not_a_directory", "destination_exists", "into_itself", "protected_path", "not_confirmed", "unknown_id", "not_running", "limit_reached", "spawn_failed", "pty_unavailable", "sandbox_unavailable", "io_error", "internal"]
    message: str
    hint: str
    is_preflight: bool
