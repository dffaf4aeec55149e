"""The records and the interface every LLM provider shares, and the errors it raises.

The agent talks to a model through `Provider.complete(messages, system=..., max_tokens=...)` and
gets back a `Completion`: the reply text, the token usage with a cost estimate, which model and
provider answered, how long it took and why it stopped. OpenAI, Anthropic, OpenAI-compatible
servers and the scripted replay provider all return this one record.

Errors come in families that tell the caller what to do next:

    LLMError               base of everything raised here
    ├── LLMRetryableError  the call may work if repeated (429, 5xx, connection refused, the
    │                      request's deadline passed, a malformed reply body); providers retry
    │                      these themselves and raise it only once they give up
    ├── LLMFatalError      repeating will not help (bad key, unknown model, bad request,
    │                      replay script exhausted); the message says what to change
    └── BudgetExceeded     a token, cost, wall-time or GPU-time limit is spent (see budget.py)

`extract.NoCodeError` (a reply without a usable code block) is also an `LLMError`; the agent feeds
it back to the model as a recoverable error.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, Field

from agents.core.llm.pricing import Price

Role = Literal["system", "user", "assistant"]

#: the defaults of the settings llm.timeout and llm.body_bytes (agents/core/settings.py)
REQUEST_TIMEOUT_S = 600.0  # one request, in total: connecting, waiting, every byte of the reply
MAX_BODY_BYTES = 32 << 20  # the longest reply body read from a model server


class Message(BaseModel):
    """One turn of a conversation."""

    role: Role
    content: str


class Usage(BaseModel):
    """Tokens one call consumed, and what they cost.

    `cost_usd` is an estimate from `pricing.py`, and None when the model's price is unknown
    (an OpenAI-compatible server, a model missing from the table): never a made-up number.
    `estimated` is True when the token counts themselves are guesses (the replay provider's
    len/4 rule) rather than the server's own count.
    """

    input_tokens: int = Field(ge=0)
    output_tokens: int = Field(ge=0)
    cost_usd: float | None = None
    estimated: bool = False

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens


class Completion(BaseModel):
    """A model's reply to one `complete` call.

    `latency_s` is the wall time of the whole call, retries and their waits included;
    `attempts` says how many requests it took. `raw_finish_reason` is the provider's own word
    (OpenAI `finish_reason`, Anthropic `stop_reason`); `truncated` normalises the one that matters.
    `scripted` marks replies that came from a replay file, not from a model.
    """

    text: str
    usage: Usage
    model: str
    provider: str
    latency_s: float = Field(ge=0)
    raw_finish_reason: str | None = None
    attempts: int = Field(default=1, ge=1)
    scripted: bool = False
    cut_from_chars: int | None = None  # the reply's length before the run cut it (llm.reply_chars)

    @property
    def truncated(self) -> bool:
        """True when the reply stopped because it hit max_tokens."""
        return self.raw_finish_reason in ("length", "max_tokens")


class LLMError(Exception):
    """Base of every error raised by the LLM layer."""


#: why a request may work when repeated; `LLMRetryableError.reason` is one of these
RETRY_REASONS = ("rate_limited", "server_error", "connect", "deadline", "malformed")


class LLMRetryableError(LLMError):
    """A failure that may go away if the call is repeated (rate limit, 5xx, network, a deadline
    passed, a malformed reply body).

    `retry_after_s` carries the server's `retry-after` hint, when it sent one; `reason` says
    which kind of failure it was (one of RETRY_REASONS), for the counts in budget.json.
    """

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        retry_after_s: float | None = None,
        reason: str = "server_error",
    ) -> None:
        super().__init__(message)
        if reason not in RETRY_REASONS:
            raise ValueError(f"unknown retry reason {reason!r}; expected one of {RETRY_REASONS}")
        self.status = status
        self.retry_after_s = retry_after_s
        self.reason = reason


class LLMFatalError(LLMError):
    """A failure that repeating will not fix: authentication, a bad request, an unknown model,
    a missing key, an exhausted replay script. The message says what to change."""

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class BudgetExceeded(LLMError):
    """A budget limit is spent; `limit` names which one ("tokens", "cost_usd", "wall_s", "gpu_s")."""

    def __init__(self, message: str, *, limit: str) -> None:
        super().__init__(message)
        self.limit = limit


@dataclass(frozen=True)
class FailedAttempt:
    """One request that failed with a retryable error: which attempt of how many, the error,
    and the wait before the next attempt (None: it was the last one, the call gives up)."""

    attempt: int
    attempts: int
    error: LLMRetryableError
    retry_in_s: float | None

    @property
    def reason(self) -> str:
        return self.error.reason


#: hears of each failed attempt of a call as it happens (`Provider.complete(on_failure=...)`)
OnFailure = Callable[[FailedAttempt], None]


class Provider(ABC):
    """Something that turns a conversation into a `Completion`.

    Implementations are safe to call from several threads at once (the generator node runs
    N candidates in parallel).
    """

    #: short provider label recorded in every Completion: "openai", "anthropic", "replay", ...
    name: str

    @property
    @abstractmethod
    def model(self) -> str:
        """The model this provider asks for."""

    @abstractmethod
    def complete(
        self,
        messages: list[Message],
        *,
        system: str | None = None,
        max_tokens: int = 4096,
        temperature: float = 0.2,
        stop: list[str] | None = None,
        node: str | None = None,
        on_failure: OnFailure | None = None,
    ) -> Completion:
        """Send `messages` (with an optional system prompt) and return the model's reply.

        `node` names the graph node asking (generator, reflector, optimizer, ...). Network
        providers ignore it; the replay provider uses it to pick scripted answers.
        `on_failure` hears of every request that failed with a retryable error, as it happens.
        The reply holds at most `max_tokens` output tokens.

        Raises LLMRetryableError once retries are exhausted, LLMFatalError for errors that
        retrying cannot fix.
        """

    def price(self) -> Price | None:
        """What a token of this provider's model costs, or None when unknown (never a guess)."""
        return None

    def describe(self) -> str:
        """`provider:model`, as written in logs and run manifests."""
        return f"{self.name}:{self.model}"


def estimate_tokens(text: str) -> int:
    """A rough token count for when no server counted: one token per four characters, rounded up."""
    return math.ceil(len(text) / 4)


def check_messages(messages: list[Message]) -> None:
    """Reject an empty conversation early, with a message that says so."""
    if not messages:
        raise LLMFatalError("complete() needs at least one message; got an empty list")
