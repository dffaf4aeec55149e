"""The LLM layer: providers (OpenAI, Anthropic, OpenAI-compatible, scripted replay), retries,
prices, budgets, a rate limiter and code extraction. See each module's docstring."""

from agents.core.llm.base import (
    BudgetExceeded,
    Completion,
    LLMError,
    LLMFatalError,
    LLMRetryableError,
    Message,
    Provider,
    Usage,
)
from agents.core.llm.budget import Budget, BudgetTracker
from agents.core.llm.concurrency import RateLimiter
from agents.core.llm.extract import NoCodeError, extract_code, require_code
from agents.core.llm.factory import default_spec, make_provider
from agents.core.llm.retry import RetryPolicy

__all__ = [
    "Budget",
    "BudgetExceeded",
    "BudgetTracker",
    "Completion",
    "LLMError",
    "LLMFatalError",
    "LLMRetryableError",
    "Message",
    "NoCodeError",
    "Provider",
    "RateLimiter",
    "RetryPolicy",
    "Usage",
    "default_spec",
    "extract_code",
    "make_provider",
    "require_code",
]
