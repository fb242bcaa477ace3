"""The folded and joined text the secret detectors read, and the way back to the original."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from cairn.engine.secret_text import fold, join_breaks
from cairn.engine.secrets import find_secrets, redact

KEY = "ghp_" + "Zq81Lm0Xr7Tc2Vb9Nw4Ks6Hd3Jf5Pa1Ge0Yu"


def test_ascii_text_is_read_as_it_is() -> None:
    view = fold("password=hunter2")
    assert view.identity and view.text == "password=hunter2"
    assert (view.start(9), view.end(16)) == (9, 16)


def test_full_width_and_format_characters_fold_and_map_back() -> None:
    text = "ｐａｓｓ\u200bｗｏｒｄ＝ｓ３ｃｒｅｔ９９ ok"
    view = fold(text)
    assert view.text == "password=s3cret99 ok"
    at = view.text.index("s3cret99")
    start, end = view.start(at), view.end(at + len("s3cret99"))
    assert text[start:end] == "ｓ３ｃｒｅｔ９９"


def test_a_secret_written_in_full_width_is_redacted_as_written() -> None:
    text = "密码：ｓ３ｃｒｅｔ９９，别告诉别人"
    out, kinds = redact(text)
    assert out == "密码：[REDACTED:password]，别告诉别人" and kinds == ["password"]


def test_a_zero_width_space_does_not_hide_the_key_word() -> None:
    for joiner in ("\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad"):
        text = f"pass{joiner}word = Tr0ub4dor&3"
        assert redact(text) == (f"pass{joiner}word = [REDACTED:password]", ["password"])


def test_a_key_wrapped_across_lines_goes_whole() -> None:
    text = f"the token:\n{KEY[:20]}\n{KEY[20:]}\nthanks"
    out, kinds = redact(text)
    assert kinds == ["github-token"]
    assert KEY[:20] not in out and KEY[20:] not in out and out.endswith("\nthanks")


def test_lines_of_prose_are_not_joined() -> None:
    assert join_breaks("one line here\nand another") is None
    assert join_breaks("no breaks at all") is None
    joined = join_breaks(f"x {KEY[:20]}\n  {KEY[20:]} y")
    assert joined is not None and KEY in joined[0].text


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=60), st.text(max_size=60))
def test_spans_stay_inside_the_original_text(before: str, after: str) -> None:
    text = f"{before}ｔｏｋｅｎ＝{KEY}\u200b{after}"
    for found in find_secrets(text):
        assert 0 <= found.start < found.end <= len(text)
    out, _ = redact(text)
    assert KEY not in out
