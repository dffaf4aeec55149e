"""The LLM layer: providers (OpenAI, Anthropic, OpenAI-compatible, scripted replay), retries,
prices, budgets, a rate limiter, code extraction, and the HTTP transport that gives each request
a total deadline. See each module's docstring.

Importing the package imports no SDK: each name below loads its module on first use (the SDKs
take seconds to import, and the settings table needs only the defaults).
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

# what other modules may use: name -> module, loaded on first use
_EXPORTS: dict[str, str] = {
    "Budget": "agents.core.llm.budget",
    "BudgetExceeded": "agents.core.llm.base",
    "BudgetTracker": "agents.core.llm.budget",
    "Completion": "agents.core.llm.base",
    "FailedAttempt": "agents.core.llm.base",
    "LLMError": "agents.core.llm.base",
    "LLMFatalError": "agents.core.llm.base",
    "LLMRetryableError": "agents.core.llm.base",
    "Message": "agents.core.llm.base",
    "NoCodeError": "agents.core.llm.extract",
    "Provider": "agents.core.llm.base",
    "RateLimiter": "agents.core.llm.concurrency",
    "shared_limiter": "agents.core.llm.concurrency",
    "Reservation": "agents.core.llm.budget",
    "RetryPolicy": "agents.core.llm.retry",
    "Usage": "agents.core.llm.base",
    "default_spec": "agents.core.llm.factory",
    "extract_code": "agents.core.llm.extract",
    "make_provider": "agents.core.llm.factory",
    "require_code": "agents.core.llm.extract",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    """Import what `name` lives in on first use."""
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(_EXPORTS[name]), name)
