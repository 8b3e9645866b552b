"""A phase's transcript holds little memory: its bytes go to disk past 64 KiB, and without
a store to keep them in they are counted, not held."""

from __future__ import annotations

import tempfile

from agentjobs.handlers.phase_log import TRANSCRIPT_IN_MEMORY, Transcript


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
