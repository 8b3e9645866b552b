"""A phase's transcript holds little memory: its bytes go to disk past 64 KiB, and without
a store to keep them in they are counted, not held. R58: past its limit a transcript keeps
nothing more, counts what it read, and is sealed once with a note that it was truncated;
its size and SHA-256 are those of what it keeps."""

from __future__ import annotations

import hashlib
import tempfile

from agentjobs.controllers.phase.transcript import TRANSCRIPT_IN_MEMORY, Transcript, truncation_note


def _on_disk(transcript: Transcript) -> bool:
    assert isinstance(transcript.file, tempfile.SpooledTemporaryFile)
    rolled: bool = transcript.file._rolled  # the spool's own record of it
    return rolled


def test_a_transcript_moves_to_disk_once_past_its_memory_share() -> None:
    transcript = Transcript()
    transcript.write(b"x" * TRANSCRIPT_IN_MEMORY)
    assert not _on_disk(transcript)
    transcript.write(b"y")
    assert _on_disk(transcript)
    transcript.file.seek(0)
    assert transcript.file.read() == b"x" * TRANSCRIPT_IN_MEMORY + b"y"
    transcript.file.close()


def test_a_transcript_with_nowhere_to_be_stored_is_counted_not_held() -> None:
    transcript = Transcript(kept=False)
    transcript.write(b"z" * (TRANSCRIPT_IN_MEMORY + 10))
    assert transcript.size == TRANSCRIPT_IN_MEMORY + 10
    assert transcript.file.tell() == 0
    assert not _on_disk(transcript)
    transcript.file.close()


def test_r58_a_log_past_the_limit_is_kept_to_the_limit_and_sealed_as_truncated() -> None:
    transcript = Transcript(limit=1000)
    for _ in range(10):
        transcript.write(b"a" * 300)
    transcript.write(b"TASK_RESULT: {}\n")
    assert transcript.truncated and transcript.size == 3000 + 16
    transcript.seal()
    transcript.seal()
    note = truncation_note(1000, 3016)
    transcript.file.seek(0)
    kept = transcript.file.read()
    assert kept == b"a" * 1000 + note
    assert (transcript.stored, transcript.sha256) == (len(kept), hashlib.sha256(kept).hexdigest())
    assert b"3016 bytes" in note and b"truncated" in note
    transcript.file.close()


def test_r58_a_log_within_the_limit_is_kept_whole_and_unmarked() -> None:
    transcript = Transcript(limit=1000)
    transcript.write(b"b" * 1000)
    transcript.seal()
    transcript.file.seek(0)
    assert transcript.file.read() == b"b" * 1000 and not transcript.truncated
    assert transcript.sha256 == hashlib.sha256(b"b" * 1000).hexdigest()
    transcript.file.close()
