"""R76: a log read with the kubelet's timestamps gives back exactly the container's bytes,
however the answer is chunked, and text the kubelet put in the answer is refused."""

from __future__ import annotations

import pytest

from agentjobs.kube.log_timestamps import NotALogLine, TimestampedLog

STAMP = b"2026-12-06T07:50:05.123456789Z "
OFFSET_STAMP = b"2026-12-06T08:50:05.000000001+01:00 "
# What a kubelet 1.35 writes under status 200 when a read fails once the answer has begun.
KUBELET_ERROR = b"unable to retrieve container logs for containerd://0123456789abcdef"


def decode(chunks: list[bytes]) -> bytes:
    log = TimestampedLog()
    written = b"".join(log.feed(chunk) for chunk in chunks)
    log.close()
    return written


def every_split(answer: bytes) -> list[list[bytes]]:
    return [
        [answer[:i], answer[i:j], answer[j:]]
        for i in range(len(answer) + 1)
        for j in range(i, len(answer) + 1)
    ]


def test_every_chunking_gives_the_containers_bytes() -> None:
    answer = STAMP + b'TASK_RESULT: {"success": false}\n' + OFFSET_STAMP + b"TASK_RESULT_END\n"
    for chunks in every_split(answer):
        assert decode(chunks) == b'TASK_RESULT: {"success": false}\nTASK_RESULT_END\n'


def test_a_line_written_in_pieces_keeps_its_one_timestamp() -> None:
    # A partial line: the kubelet stamps its first piece only, and its last ends the line.
    answer = STAMP + b"first piece, " + b"second piece\n" + STAMP + b"next\n"
    assert decode([answer]) == b"first piece, second piece\nnext\n"


def test_a_timestamp_the_container_wrote_is_its_text() -> None:
    answer = STAMP + b"a\n" + STAMP + STAMP + b"b\n"
    assert decode([answer]) == b"a\n" + STAMP + b"b\n"


def test_an_empty_answer_is_an_empty_log() -> None:
    assert decode([]) == b""
    assert decode([b""]) == b""


@pytest.mark.parametrize(
    "answer",
    [
        KUBELET_ERROR,
        b"EOF",
        STAMP + b"TASK_RESULT: {}\n" + KUBELET_ERROR,
        STAMP + b"line\n" + b"failed to create fsnotify watcher: too many open files",
        STAMP[:-1] + b"line\n",  # no space after the timestamp
        b"2026-12-06T07:50:05.12345678Z line\n",  # eight fraction digits
        STAMP[:20],  # an answer cut inside a timestamp
    ],
)
def test_text_the_kubelet_added_is_refused_however_chunked(answer: bytes) -> None:
    for chunks in every_split(answer):
        with pytest.raises(NotALogLine):
            decode(chunks)


def test_the_lines_before_the_kubelets_text_are_given_first() -> None:
    log = TimestampedLog()
    assert log.feed(STAMP + b"one\n") == b"one\n"
    with pytest.raises(NotALogLine, match="unable to retrieve container logs"):
        log.feed(KUBELET_ERROR)


def test_the_refusal_shows_a_bounded_part_of_the_text() -> None:
    with pytest.raises(NotALogLine) as refused:
        TimestampedLog().feed(b"x" * 10_000)
    assert len(str(refused.value)) < 300
