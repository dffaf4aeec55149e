"""What a call costs: a per-model price table in USD per million tokens.

These are ESTIMATES. They were copied by hand from public price listings on PRICES_TAKEN_ON and
will drift: providers change prices, and this table does not model prompt-cache discounts or
cache-write premiums, batch discounts, long-context surcharges or priority tiers. Check the
providers' own pricing pages before relying on a total.

A model that is not in the table has an unknown price, and `cost_usd` returns None for it,
never a guess. That includes every model behind an OpenAI-compatible server (self-hosted vLLM,
llama.cpp, Ollama: their cost is GPU time, which the budget tracks separately) and the newest
hosted models whose prices we could not confirm (e.g. the gpt-6 and Claude 5 families).
Add a row here, with its source date, to price another model.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

PRICES_TAKEN_ON = "2026-11-29"
PRICES_NOTE = (
    "estimates in USD per million tokens, copied from public price listings on "
    f"{PRICES_TAKEN_ON} (OpenAI rates as listed in June 2026, Anthropic rates as listed in "
    "April-June 2026); no cache, batch or long-context adjustments; verify before budgeting"
)


@dataclass(frozen=True)
class Price:
    input_per_mtok: float
    output_per_mtok: float


PRICES: dict[str, dict[str, Price]] = {
    "openai": {
        "gpt-5.6-sol": Price(5.00, 30.00),
        "gpt-5.6-terra": Price(2.50, 15.00),
        "gpt-5.6-luna": Price(1.00, 6.00),
        "gpt-5.5": Price(5.00, 30.00),
        "gpt-5.5-pro": Price(30.00, 180.00),
        "gpt-5.4": Price(2.50, 15.00),
        "gpt-5.4-mini": Price(0.75, 4.50),
        "gpt-5.4-nano": Price(0.20, 1.25),
        "gpt-5": Price(1.25, 10.00),
        "gpt-5-mini": Price(0.25, 2.00),
        "gpt-5-nano": Price(0.05, 0.40),
        "gpt-4.1": Price(2.00, 8.00),
        "gpt-4.1-mini": Price(0.40, 1.60),
        "gpt-4o": Price(2.50, 10.00),
        "gpt-4o-mini": Price(0.15, 0.60),
    },
    "anthropic": {
        "claude-opus-4-8": Price(5.00, 25.00),
        "claude-opus-4-7": Price(5.00, 25.00),
        "claude-opus-4-6": Price(5.00, 25.00),
        "claude-opus-4-5": Price(5.00, 25.00),
        "claude-sonnet-4-6": Price(3.00, 15.00),
        "claude-sonnet-4-5": Price(3.00, 15.00),
        "claude-haiku-4-5": Price(1.00, 5.00),
    },
}

# A dated snapshot ("gpt-5.5-2026-04-23", "claude-haiku-4-5-20251001") costs what its alias costs.
_SNAPSHOT_SUFFIX = re.compile(r"-(\d{8}|\d{4}-\d{2}-\d{2})$")


def price_for(provider: str, model: str) -> Price | None:
    """The price of `model` at `provider` ("openai" or "anthropic"), or None if unknown."""
    table = PRICES.get(provider)
    if table is None:
        return None
    name = model.strip().lower()
    return table.get(name) or table.get(_SNAPSHOT_SUFFIX.sub("", name))


def cost_usd(provider: str, model: str, input_tokens: int, output_tokens: int) -> float | None:
    """Estimated USD cost of one call, or None when the model's price is unknown."""
    price = price_for(provider, model)
    if price is None:
        return None
    return (input_tokens * price.input_per_mtok + output_tokens * price.output_per_mtok) / 1e6
