"""Every bound cairn puts on what it is given, and the markers it writes, defined once.

The contract (``cairn.provider``) states these bounds in its JSON schema, the checks
(``cairn.validation``, ``cairn.identifiers``) enforce them on the values a request or a
file carries, and the hooks clip what an agent's event holds to them before it becomes a
request: all of them read the numbers here, so one limit never means
two things in two places.
"""

from __future__ import annotations

from typing import Final

# -- markers ------------------------------------------------------------------------------

# The body cairn writes in place of a purged one: a body equal to it is refused on write,
# and a stored event holding it is a purged skeleton when the journal replays.
REDACTED: Final = "[permanently forgotten]"

# -- text ---------------------------------------------------------------------------------

# What a request asks with or about: a recall query, a task, a learning note, a review
# question, a statement of a delta.
MAX_QUERY_CHARS: Final = 10_000
MAX_BODY_CHARS: Final = 50_000_000  # a memory's body: the largest memory.store.maxBodyChars
MAX_SHORT_CHARS: Final = 4096  # one short field of a request (a project, a path, a phase)
MAX_TITLE_CHARS: Final = 1000
MAX_SEARCH_CHARS: Final = 1000  # the text a listing searches bodies and titles for
MAX_TAG_CHARS: Final = 200
MAX_SELECTOR_CHARS: Final = 500  # one path pattern, operation, phase or task type
MAX_REF_CHARS: Final = 2000  # an external reference
MAX_COMMAND_CHARS: Final = 2000  # the command an observed task ran
MAX_PROJECT_ID_CHARS: Final = 500
MAX_PROJECT_NAME_CHARS: Final = 200  # a project's readable name (acme/app)
MAX_REMOTE_CHARS: Final = 1000  # a repository's normalised remote
MAX_TIME_CHARS: Final = 64  # an ISO-8601 time as text

# -- names and ids ------------------------------------------------------------------------

MAX_NAME_CHARS: Final = 200  # a tenant, an agent, an event type
MAX_KEY_CHARS: Final = 200  # event ids, idempotency keys, sessions, episodes, lookup ids
MAX_ID_CHARS: Final = 64  # a memory's or an application's id

# -- counts -------------------------------------------------------------------------------

MAX_LIST_ITEMS: Final = 100  # tags, selectors of one kind, journal types, tools of a turn
MAX_PATHS: Final = 10_000  # the paths a task touches
MAX_EVIDENCE_ITEMS: Final = 100_000
MAX_CITED: Final = 1000  # the observations one learning delta cites as its evidence
MAX_BATCH: Final = 100_000  # memories of one ingest call or one batch
MAX_STEPS: Final = 100_000  # the steps an observed episode took
MAX_RESULTS: Final = 1000  # what one recall returns
MAX_PAGE: Final = 1_000_000  # what one listing, journal page or budget asks for
MAX_INT32: Final = 2**31 - 1  # positions, versions, counters, offsets
MAX_JSON_INT: Final = 2**63 - 1  # any integer a JSON value holds; journal sequence numbers

# -- bytes a process reads at once ---------------------------------------------------------

MAX_HTTP_BODY_BYTES: Final = 64 * 2**20  # a request to cairn serve (its --max-body-mb default)
MAX_HOOK_EVENT_BYTES: Final = 16 * 2**20  # a host's hook event (a prompt may hold a file)
MAX_TRANSCRIPT_BYTES: Final = 256 * 2**20  # a host's transcript file a hook reads
MAX_PAGE_NUMBER: Final = 100_000  # the page of the dashboard's list a link asks for

# -- the source object (who, channel, session) ---------------------------------------------

MAX_SOURCE_DEPTH: Final = 6  # the source object itself is depth 1
MAX_SOURCE_ITEMS: Final = 200
MAX_SOURCE_CHARS: Final = 8192  # as compact JSON
MAX_SOURCE_TEXT: Final = 1000  # one text in it
MAX_SOURCE_KEY_CHARS: Final = 100
