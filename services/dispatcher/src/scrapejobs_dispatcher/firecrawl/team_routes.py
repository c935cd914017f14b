"""Firecrawl's team endpoints, which its SDKs' operator calls read (``get_queue_status``,
``get_concurrency``, ``get_credit_usage``, ``get_token_usage`` and their ``_historical``
forms): the deployment's own figures in Firecrawl's shapes. What each figure means here is
usage.py's docstring (and docs/firecrawl.md)."""

from __future__ import annotations

from datetime import datetime

from fastapi import Query
from pydantic import Field

from scrapejobs_dispatcher.dependencies import UsageDep
from scrapejobs_dispatcher.firecrawl.answer_models import Answer
from scrapejobs_dispatcher.firecrawl.errors import v2_router
from scrapejobs_dispatcher.tenants.authentication import CallerDep
from scrapejobs_dispatcher.tenants.usage import PeriodUsage

router = v2_router()
BY_API_KEY = Query(
    default=False,
    alias="byApiKey",
    description="Accepted; usage is not split by key (apiKey is null)",
)


class QueueStatus(Answer):
    success: bool = True
    jobs_in_queue: int = Field(alias="jobsInQueue", description="Pages waiting or active")
    active_jobs_in_queue: int = Field(
        alias="activeJobsInQueue", description="Pages being fetched or processed now"
    )
    waiting_jobs_in_queue: int = Field(
        alias="waitingJobsInQueue", description="Pages waiting for a worker"
    )
    max_concurrency: int = Field(alias="maxConcurrency", description="Pages at once, at most")
    most_recent_success: datetime | None = Field(
        alias="mostRecentSuccess",
        description="When a page last succeeded (the end of its 5-minute slot within the hour, "
        "of its hour within the day; null before that)",
    )


class Concurrency(Answer):
    success: bool = True
    concurrency: int = Field(description="Pages being fetched or processed now")
    max_concurrency: int = Field(alias="maxConcurrency", description="Pages at once, at most")


class BillingPeriod(Answer):
    billing_period_start: datetime = Field(alias="billingPeriodStart")
    billing_period_end: datetime = Field(alias="billingPeriodEnd")


class CreditUsageData(BillingPeriod):
    remaining_credits: int = Field(alias="remainingCredits")
    plan_credits: int = Field(alias="planCredits", description="Pages a billing period may fetch")
    credits_used: int = Field(alias="creditsUsed", description="Pages fetched this period")


class CreditUsage(Answer):
    success: bool = True
    data: CreditUsageData


class TokenUsageData(BillingPeriod):
    remaining_tokens: int = Field(alias="remainingTokens")
    plan_tokens: int = Field(alias="planTokens", description="Tokens a billing period may use")
    tokens_used: int = Field(alias="tokensUsed", description="Tokens the ai stages used")


class TokenUsage(Answer):
    success: bool = True
    data: TokenUsageData


class HistoryPeriod(Answer):
    start_date: datetime = Field(alias="startDate")
    end_date: datetime = Field(alias="endDate")
    api_key: str | None = Field(default=None, alias="apiKey")


class CreditPeriod(HistoryPeriod):
    credits_used: int = Field(alias="creditsUsed")


class CreditHistory(Answer):
    success: bool = True
    periods: list[CreditPeriod] = Field(description="Billing periods, the current one first")


class TokenPeriod(HistoryPeriod):
    tokens_used: int = Field(alias="tokensUsed")


class TokenHistory(Answer):
    success: bool = True
    periods: list[TokenPeriod] = Field(description="Billing periods, the current one first")


@router.get("/team/queue-status", response_model=QueueStatus, response_model_by_alias=True)
async def queue_status(usage: UsageDep, caller: CallerDep) -> QueueStatus:
    """Pages waiting and active across unfinished jobs, the most at once, the last success."""
    queue = await usage.queue(caller.scope())
    return QueueStatus(
        jobs_in_queue=queue.queued + queue.active,
        active_jobs_in_queue=queue.active,
        waiting_jobs_in_queue=queue.queued,
        max_concurrency=queue.max_concurrency,
        most_recent_success=queue.most_recent_success,
    )


@router.get("/concurrency-check", response_model=Concurrency, response_model_by_alias=True)
async def concurrency_check(usage: UsageDep, caller: CallerDep) -> Concurrency:
    """Pages being fetched or processed now, and the most at once."""
    return Concurrency(
        concurrency=await usage.active(caller.scope()), max_concurrency=usage.plan.max_concurrency
    )


@router.get("/team/credit-usage", response_model=CreditUsage, response_model_by_alias=True)
async def credit_usage(usage: UsageDep, caller: CallerDep) -> CreditUsage:
    """This billing period's pages fetched against the plan."""
    period = await usage.current(caller.scope())
    plan = usage.plan.credits
    data = CreditUsageData(
        remaining_credits=max(plan - period.credits, 0),
        plan_credits=plan,
        credits_used=period.credits,
        billing_period_start=period.start,
        billing_period_end=period.end,
    )
    return CreditUsage(data=data)


@router.get("/team/token-usage", response_model=TokenUsage, response_model_by_alias=True)
async def token_usage(usage: UsageDep, caller: CallerDep) -> TokenUsage:
    """This billing period's model tokens against the plan."""
    period = await usage.current(caller.scope())
    plan = usage.plan.tokens
    data = TokenUsageData(
        remaining_tokens=max(plan - period.tokens, 0),
        plan_tokens=plan,
        tokens_used=period.tokens,
        billing_period_start=period.start,
        billing_period_end=period.end,
    )
    return TokenUsage(data=data)


@router.get(
    "/team/credit-usage/historical", response_model=CreditHistory, response_model_by_alias=True
)
async def credit_history(
    usage: UsageDep, caller: CallerDep, by_api_key: bool = BY_API_KEY
) -> CreditHistory:
    """Pages fetched per billing period, the last twelve."""
    periods = await usage.history(tenant=caller.scope())
    return CreditHistory(periods=[_credits(p) for p in periods])


@router.get(
    "/team/token-usage/historical", response_model=TokenHistory, response_model_by_alias=True
)
async def token_history(
    usage: UsageDep, caller: CallerDep, by_api_key: bool = BY_API_KEY
) -> TokenHistory:
    """Model tokens per billing period, the last twelve."""
    periods = await usage.history(tenant=caller.scope())
    return TokenHistory(periods=[_tokens(p) for p in periods])


def _credits(period: PeriodUsage) -> CreditPeriod:
    return CreditPeriod(start_date=period.start, end_date=period.end, credits_used=period.credits)


def _tokens(period: PeriodUsage) -> TokenPeriod:
    return TokenPeriod(start_date=period.start, end_date=period.end, tokens_used=period.tokens)
