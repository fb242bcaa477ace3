"""The one stop-word list (cairn.text.STOP_WORDS) and the tokens it is written in."""

from __future__ import annotations

from cairn.engine.recall.query import formulate
from cairn.text import STOP_WORDS, index_terms, words


def test_every_stop_word_is_one_token_as_the_index_reads_it() -> None:
    # An entry the tokenizers cannot yield ("don't" is read as "don" and "t") would be dead.
    assert all(index_terms(w) == [w] and words(w) == [w] for w in STOP_WORDS)


def test_a_query_keeps_only_its_content_words() -> None:
    assert formulate("What should we do about the deploy of it?").terms == ("deploy",)
    assert formulate("Don't let them").terms == ("don",)  # "t", "let", "them" are stop words


def test_the_keyword_lane_and_the_director_read_the_same_list() -> None:
    import cairn.engine.director as director
    import cairn.engine.learning.clustering as clustering
    import cairn.engine.recall.query as query

    assert query.STOP_WORDS is director.STOP_WORDS is clustering.STOP_WORDS is STOP_WORDS


def test_the_clients_modules_load_no_stemmer() -> None:
    """The command line's client (its project check, the contract, the input checks)
    reaches cairn.text without stemming: the stemmers of 30 languages load only when a
    word is stemmed."""
    import subprocess
    import sys

    probe = (
        "import sys, cairn.cli.project, cairn.provider.contract, cairn.validation, cairn.text\n"
        "print('snowballstemmer' in sys.modules)\n"
        "assert cairn.text.normal_term('deploying') == 'deploi'\n"
        "print('snowballstemmer' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["False", "True"], done.stdout + done.stderr
